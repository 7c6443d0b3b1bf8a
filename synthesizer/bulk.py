"""Bulk work without the cyclic garbage collector running every few hundred allocations.

Loading a checkpoint or folding a long log builds millions of small containers; CPython's
collector would traverse the growing heap again and again (seconds, for nothing: these
structures hold no reference cycles). ``paused_gc`` turns it off for the duration and
restores the previous setting after.

On the way out it also moves everything built meanwhile to the oldest generation
(``gc.freeze()`` + ``gc.unfreeze()``, two list splices) while collection is still off:
otherwise the next allocation would start a young-generation collection over the whole
new state only to promote it. Skipped when the program has frozen objects of its own
(unfreezing would release them).
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
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
