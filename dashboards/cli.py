"""The ``swarmlog`` command: imports every command module so they register on the app."""

from __future__ import annotations

from . import cmd_board, cmd_config, cmd_dash, cmd_log, cmd_synth  # noqa: F401  (they register commands)
from .app import app, main

__all__ = ["app", "main"]
