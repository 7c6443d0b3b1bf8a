"""The ``swarmlog`` command: imports every command module so they register on the app."""

from __future__ import annotations

from . import cmd_log  # noqa: F401
from .app import app, main

__all__ = ["app", "main"]
