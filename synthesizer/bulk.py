"""Bulk work without the cyclic garbage collector running every few hundred allocations.

Loading a checkpoint or folding a long log builds millions of small containers; CPython's
collector would traverse the growing heap again and again (seconds, for nothing: these
structures hold no reference cycles). ``paused_gc`` turns it off for the duration and
restores the previous setting after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic GC inside the block (re-entrant; restores the prior state)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
