"""Keep the cyclic GC off the worker's long-lived state (the folded facts, the index).

Why: a full (oldest-generation) collection traverses every container the process holds;
at 50k live facts that is 65-160 ms of a deciding worker's time (measured under
``scripts/bench/load_bench.py``), during which no memory is decided: one source of the
decision latency's tail. ``gc.freeze()`` moves every object alive now into a permanent
generation that collections skip; the state is built once (a checkpoint's load, a
replay) and changes by small deltas, so only what was added since the last freeze is
traversed. The same call before ``fork`` keeps a checkpoint child's collections from
writing to (copying) the parent's pages, as the ``gc`` documentation advises.

The cost: a reference cycle among frozen objects that later becomes garbage is never
collected. The state's objects are freed by reference counting (no cycles), so this is
bounded by what happened to be cyclic garbage at a freeze. Only for the worker process
that owns its heap (the CLI's ``synth --follow``, ``worker/main.py``), not for a library
caller's process.
"""

from __future__ import annotations

import gc


def freeze_heap(collect: bool = False) -> int:
    """Freeze every object alive now (optionally after one full collection, so that
    garbage already unreachable is freed rather than frozen); the frozen count."""
    if collect:
        gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


__all__ = ["freeze_heap"]
