"""The ``swarmlog`` command: imports every command module so they register on the app."""

from __future__ import annotations

from . import (  # noqa: F401  (they register commands)
    cmd_board,
    cmd_config,
    cmd_dash,
    cmd_log,
    cmd_mcp,
    cmd_synth,
)
from .app import app, main

__all__ = ["app", "main"]
