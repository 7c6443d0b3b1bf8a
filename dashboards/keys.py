"""Quit keys for a live view: ``q`` (or ``Q``) on a terminal's stdin stops it.

The terminal is put in cbreak mode (keys arrive one by one, unechoed; Ctrl-C still
interrupts) for the block and restored after, whatever happens; a daemon thread polls
stdin. Off a terminal (a pipe, a test) nothing is read and the flag never sets.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def quit_keys() -> Iterator[threading.Event]:
    """An Event set when ``q`` is pressed on the terminal (never set off a terminal)."""
    pressed = threading.Event()
    try:
        fd = sys.stdin.fileno()
        on_tty = sys.stdin.isatty()
    except (AttributeError, ValueError, OSError):
        on_tty = False
    if not on_tty:
        yield pressed
        return
    import select
    import termios
    import tty

    old = termios.tcgetattr(fd)
    done = threading.Event()

    def read() -> None:
        import os

        while not done.is_set():
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready and os.read(fd, 1) in (b"q", b"Q"):
                pressed.set()
                return

    tty.setcbreak(fd)
    reader = threading.Thread(target=read, name="quit-keys", daemon=True)
    reader.start()
    try:
        yield pressed
    finally:
        done.set()
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


__all__ = ["quit_keys"]
