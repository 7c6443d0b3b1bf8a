"""What one append costs on each of FileLog's paths, in one process with no other writer.

Usage: ``.venv/bin/python scripts/bench/append_path_probe.py [--appends 100000]
[--rounds 3] [--tree DIR] [--holds]``.

The write-path work's open 2-core line (16 writers >= 0.8x one writer) asks how much of the
16-writer cost is the shared writer index itself and how much is sharing two cores among
16 processes. This probe takes the second away: one process, one core, no lock ever
contended, each figure the public ``FileLog.append`` of events built in the loop
(``concurrency_bench._event``), on a fresh log per round. The modes:

* ``alone``: one handle. Its dicts hold the whole log, so it appends on them and leaves
  the index lagging (``view/alone.py``): what one writer gets.
* ``index``: one handle that saw another writer's record once (so its dicts are partial
  and every append goes through the shared index: probe, stamp, write, index update),
  then appends alone: the index path with nothing else going on.
* ``turns``: two handles appending in turn, so every append also adopts the other's end
  (``view/_fast.view``): what each of 16 writers pays per append, less the hand-offs.

It prints appends/s, user and system CPU per append and minor page faults per append,
the best round of each mode (the least disturbed by other work on the machine).
``--tree``: the swarmlog checkout to import, to compare commits in one session.
``--holds``: also the time the append lock is held per append, mean and p50 (the serial
section every other writer waits on; the timer adds about a microsecond to each append).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


_HOLDS: list[int] | None = None
"""With ``--holds``: the lock holds timed (nanoseconds; ``lock_hold_probe._Timed``)."""


def _time_holds() -> list[int]:
    """Time every hold of the append lock from here on, as ``lock_hold_probe`` does."""
    from lock_hold_probe import _Timed

    from swarmlog.file import lockfile, log
    from swarmlog.file.view import combine

    timed = _Timed()
    log.fcntl = timed  # type: ignore[assignment]
    combine.fcntl = timed  # type: ignore[assignment]
    spinning = lockfile.lock_spinning

    def timed_spin(fd: int, budget: int) -> int:
        got = spinning(fd, budget)
        timed.since = time.perf_counter_ns()
        return got

    lockfile.lock_spinning = timed_spin
    return timed.holds


def _measure(mode: str, appends: int) -> tuple[float, float, float, float]:
    """(appends/s, user us, system us, minor faults) per append of one round of ``mode``."""
    from concurrency_bench import _event

    from swarmlog.file.log import FileLog

    where = tempfile.mkdtemp(prefix="append-path-")
    try:
        a = FileLog(where, notify=False)
        b = FileLog(where, notify=False)
        a.append(_event(0, -1))
        if mode != "alone":
            b.append(_event(1, -1))  # (a sees another writer: its dicts become partial)
            a.append(_event(0, -2))
        handles: list[Any] = [a, b] if mode == "turns" else [a]
        n = len(handles)
        if _HOLDS is not None:
            _HOLDS.clear()
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        for i in range(appends):
            handles[i % n].append(_event(i % n, i))
        span = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        a.close()
        b.close()
    finally:
        shutil.rmtree(where, ignore_errors=True)
    return (
        appends / span,
        1e6 * (r1.ru_utime - r0.ru_utime) / appends,
        1e6 * (r1.ru_stime - r0.ru_stime) / appends,
        (r1.ru_minflt - r0.ru_minflt) / appends,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--appends", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tree", default=str(HERE.parents[1]))
    ap.add_argument(
        "--holds",
        action="store_true",
        help="also time each hold of the append lock (the serial section; adds a timer)",
    )
    args = ap.parse_args()
    if args.appends < 1 or args.rounds < 1:
        sys.exit("error: --appends and --rounds must be >= 1")
    tree = os.path.abspath(args.tree)
    os.environ["SWARMLOG_BENCH_TREE"] = tree  # (concurrency_bench puts this tree first)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, tree)
    import swarmlog

    print(f"tree {Path(swarmlog.__file__).parent.parent}; load average {os.getloadavg()[0]:.1f}")
    global _HOLDS
    if args.holds:
        _HOLDS = _time_holds()
    best: dict[str, tuple[float, float, float, float]] = {}
    held: dict[str, str] = {}
    for _ in range(args.rounds):  # (the modes in turn, so drifts in load hit all of them)
        for mode in ("alone", "index", "turns"):
            got = _measure(mode, args.appends)
            if mode not in best or got[0] > best[mode][0]:
                best[mode] = got
                if _HOLDS:
                    h = sorted(_HOLDS)
                    mean, p50 = sum(h) / len(h) / 1e3, h[len(h) // 2] / 1e3
                    held[mode] = f"; lock held per append mean {mean:.1f} us, p50 {p50:.1f} us"
    alone = best["alone"][1] + best["alone"][2]
    for mode, (rate, user, sys_, flt) in best.items():
        cpu = user + sys_
        print(
            f"{mode:6} {rate:9,.0f} appends/s; CPU per append user {user:.1f} + sys {sys_:.1f}"
            f" us ({cpu / alone:.2f}x alone); minor page faults per append {flt:.2f}"
            + held.get(mode, "")
        )


if __name__ == "__main__":
    main()
