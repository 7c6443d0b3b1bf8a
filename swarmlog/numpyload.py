"""numpy for code that loads it on first use, loaded without OpenBLAS's idle spin.

swarmlog and the synthesizer's agent-side code import numpy only where they need arrays
(a view snapshot, a grown writer index, a shared memory's vector), so a writer process
often loads it in the middle of a run. Loading numpy loads OpenBLAS, whose worker
threads then spin, waiting for work, for about 2**28 CPU cycles before they sleep: 0.04
to 0.1 s of a core in every such process (docs/benchmarks.md, "OpenBLAS's idle spin"),
while these callers never run a BLAS routine. On a machine whose cores the swarm's
processes share, that time is taken from the appends.

So the lazy import sites say ``from swarmlog.numpyload import np``. When that is the
first import of numpy in the process, it runs with ``OPENBLAS_THREAD_TIMEOUT=4``
(OpenBLAS's own setting, read once when the library loads: idle worker threads sleep at
once instead of spinning) and the environment is restored right after, so child
processes do not inherit it. Left alone: a process that loaded numpy before (its BLAS
is as it set it up), a variable the user set, and a process running other threads
(changing the environment is not safe while another thread may read it). BLAS calls in
a process loaded this way run as before, except that idle worker threads go to sleep
instead of spinning between calls.
"""

from __future__ import annotations

import os
import sys
import threading

VARIABLE = "OPENBLAS_THREAD_TIMEOUT"
QUIET = "4"
"""OpenBLAS's smallest timeout (2**4 cycles of spinning before an idle thread sleeps)."""


def _quiet_env() -> bool:
    """Whether the import below may set ``VARIABLE`` for its duration (see docstring)."""
    return (
        "numpy" not in sys.modules
        and VARIABLE not in os.environ
        and threading.active_count() == 1
    )


if _quiet_env():
    os.environ[VARIABLE] = QUIET
    try:
        import numpy as np
    finally:
        os.environ.pop(VARIABLE, None)
else:
    import numpy as np

__all__ = ["np"]
