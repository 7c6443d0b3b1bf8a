"""A spinner on stderr while a command works for seconds (rich, imported only when shown).

Only on a terminal: piped or captured stderr stays clean, so scripts and tests see the
same bytes as before. ``working`` shows the message and the seconds elapsed; it costs
nothing when stderr is not a terminal.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def working(message: str) -> Iterator[None]:
    """Show ``message`` with a spinner on a terminal's stderr until the block ends."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(f"{message}…", spinner="dots"):
        yield


__all__ = ["working"]
