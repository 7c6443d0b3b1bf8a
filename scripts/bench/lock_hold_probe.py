"""How long the append lock is held per append at N writers, and what sharing one log costs.

Usage: ``.venv/bin/python scripts/bench/lock_hold_probe.py [--writers 1,16] [--seconds 2]
[--tree DIR] [--separate]``.

N writer processes (forked, started together, as in ``concurrency_bench``) append single
events to one FileLog for ``--seconds``. In each, the append flock is timed from its
acquisition to its release (``time.perf_counter_ns``, by wrapping the ``fcntl`` module
``swarmlog.file.log`` calls and ``lockfile.lock_spinning`` where the tree has it), and
the printout gives appends/s, the held time's p50 / p90 / p99 / p99.9 / max, the share of
held time in holds over 100 us (holders descheduled or stalled inside the lock), the
user and system CPU per append, voluntary and involuntary context switches and minor
page faults per append, lock holds per append and the share of appends a combiner wrote
for their writer (round 5's flat combining, view/combine.py), and how many cores the
writers used. ``--separate``: each
writer on a log of its own (the same loop with nothing shared), which tells what
sharing one log costs. ``--tree``: the swarmlog checkout to import (default: this one),
to compare commits in one session.
The figures move with the machine's load (printed): compare only runs of one session.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


class _Timed:
    """Stands in for the ``fcntl`` module in ``swarmlog.file.log``: times each hold."""

    LOCK_EX, LOCK_UN, LOCK_SH, LOCK_NB = fcntl.LOCK_EX, fcntl.LOCK_UN, fcntl.LOCK_SH, fcntl.LOCK_NB

    def __init__(self) -> None:
        self.since = 0
        self.holds: list[int] = []

    def flock(self, fd: int, op: int) -> None:
        if op == fcntl.LOCK_UN:
            self.holds.append(time.perf_counter_ns() - self.since)
        fcntl.flock(fd, op)
        if op & fcntl.LOCK_EX:  # (a non-blocking try that failed raised above)
            self.since = time.perf_counter_ns()

    def __getattr__(self, name: str) -> Any:
        return getattr(fcntl, name)  # (fcntl.fcntl, F_OFD_SETLK, ...: view/combine.py)


PHASES: dict[str, list[int]] = {}
"""``--phases``: per process, each wrapped call's [nanoseconds, calls, items]."""


def _phase(owner: Any, name: str, label: str, items: Any = None) -> None:
    """Wrap ``owner.name`` to add its time (and ``items(args)``, e.g. a batch's size)."""
    inner = getattr(owner, name)
    acc = PHASES.setdefault(label, [0, 0, 0])
    clock = time.perf_counter_ns

    def timed(*a: Any, **k: Any) -> Any:
        t = clock()
        try:
            return inner(*a, **k)
        finally:
            acc[0] += clock() - t
            acc[1] += 1
            if items is not None:
                acc[2] += items(a)

    setattr(owner, name, timed)


def _wrap_phases() -> None:
    """Time the combining path's steps (``--phases``): where a holder's time goes."""
    from swarmlog.file.log import FileLog
    from swarmlog.file.view import _fast as ixfast
    from swarmlog.file.view import combine

    _phase(combine, "batch", "batch", lambda a: len(a[4]) + (a[3] is not None))
    _phase(combine.Slots, "others", "others (scan)")
    _phase(combine.Slots, "mark", "mark")
    _phase(combine.Slots, "lock_or_done", "poster wait")
    _phase(ixfast, "view", "view (adopt)")
    _phase(ixfast, "record_many", "record_many")
    _phase(ixfast, "find", "find")
    _phase(FileLog, "_write", "write (batch)")
    _phase(ixfast, "write_one", "write (one)")
    _phase(FileLog, "_combined", "combined return")
    from swarmlog.file import lockfile

    _phase(lockfile, "lock_spinning", "lock wait (own append)")
    _phase(os, "sched_yield", "sched_yield")
    _phase(FileLog, "_group_sync", "group sync")


def _phase_line(phases: list[dict[str, list[int]]], n: int) -> str:
    """The summed phases per append: us, calls and items per append."""
    out = []
    for label in phases[0]:
        ns = sum(p[label][0] for p in phases)
        calls = sum(p[label][1] for p in phases)
        items = sum(p[label][2] for p in phases)
        extra = f", {items / calls:.1f} per call" if items else ""
        out.append(f"{label} {ns / 1e3 / n:.2f} us/append ({calls / n:.2f} calls{extra})")
    return "  phases: " + "; ".join(out)


DURABILITY = ["process"]
"""``--durability``: the writers' (``fsync``: each append returns once a sync covers it)."""


def _worker(where: str, wid: int, start: Any, seconds: float, out: Any, timed: _Timed) -> None:
    from concurrency_bench import _event, _loop

    from swarmlog.file.log import FileLog

    log = FileLog(where, notify=False, durability=DURABILITY[0])  # type: ignore[arg-type]
    log.append(_event(wid, -1))
    timed.holds.clear()
    for acc in PHASES.values():
        acc[:] = [0, 0, 0]
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    n, span = _loop(lambda i: log.append(_event(wid, i)), start, seconds)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    slots = getattr(log, "_slots", None)  # (flat combining, round 5: view/combine.py)
    out.put(
        (
            getattr(slots, "combined", 0),
            n,
            span,
            timed.holds,
            r1.ru_utime - r0.ru_utime,
            r1.ru_stime - r0.ru_stime,
            r1.ru_nvcsw - r0.ru_nvcsw,
            r1.ru_nivcsw - r0.ru_nivcsw,
            r1.ru_minflt - r0.ru_minflt,
            {k: list(v) for k, v in PHASES.items()},
        )
    )
    log.close()


def _prefill(where: str, n: int) -> None:
    """Append ``n`` records to the log at ``where`` in batches, from a handle of its own."""
    from concurrency_bench import _event

    from swarmlog.file.log import FileLog

    log = FileLog(where, notify=False)
    for at in range(0, n, 10_000):
        log.append_many([_event(99, i) for i in range(at, min(n, at + 10_000))])
    log.close()


def _quantiles(holds: list[int]) -> list[float]:
    """p50, p90, p99 and p99.9 of sorted nanosecond holds, in microseconds."""
    n = len(holds)
    return [holds[min(n - 1, int(f * n))] / 1e3 for f in (0.5, 0.9, 0.99, 0.999)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", default="1,16")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--tree", default=str(HERE.parents[1]))
    ap.add_argument("--separate", action="store_true", help="a log per writer")
    ap.add_argument(
        "--prefill", type=int, default=0, help="records in the log before the writers start"
    )
    ap.add_argument("--phases", action="store_true", help="time the combining steps")
    ap.add_argument("--durability", default="process", choices=["process", "fsync"])
    args = ap.parse_args()
    DURABILITY[0] = args.durability
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, os.path.abspath(args.tree))
    # (concurrency_bench puts its tree first on import: without this, --tree was ignored)
    os.environ["SWARMLOG_BENCH_TREE"] = os.path.abspath(args.tree)
    from concurrency_bench import FORK, Start

    import swarmlog.file.log
    from swarmlog.file import lockfile

    timed = _Timed()
    swarmlog.file.log.fcntl = timed  # type: ignore[assignment]
    try:  # (round 5: a combined writer takes and lets go of the lock in view/combine.py)
        from swarmlog.file.view import combine

        combine.fcntl = timed  # type: ignore[assignment]
    except ImportError:
        pass
    spinning = getattr(lockfile, "lock_spinning", None)
    if spinning is not None:

        def timed_spin(fd: int, budget: int) -> int:
            got = int(spinning(fd, budget))
            timed.since = time.perf_counter_ns()
            return got

        lockfile.lock_spinning = timed_spin
    if args.phases:
        _wrap_phases()
    import swarmlog

    tree = os.path.dirname(os.path.dirname(swarmlog.__file__))
    print(f"tree {tree}; load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} cores")
    for w in (int(x) for x in args.writers.split(",")):
        with tempfile.TemporaryDirectory(prefix="lockprobe-") as tmp:
            if args.prefill:
                _prefill(os.path.join(tmp, "log"), args.prefill)
            start, out = Start(w), FORK.Queue()
            procs = [
                FORK.Process(
                    target=_worker,
                    args=(
                        os.path.join(tmp, f"log{i}" if args.separate else "log"),
                        i,
                        start,
                        args.seconds,
                        out,
                        timed,
                    ),
                )
                for i in range(w)
            ]
            for p in procs:
                p.start()
            start.go()
            got = [out.get(timeout=600) for _ in procs]
            for p in procs:
                p.join(60)
        combined = sum(r[0] for r in got)
        res = [r[1:] for r in got]
        n = sum(r[0] for r in res)
        span = max(r[1] for r in res)
        holds = sorted(h for r in res for h in r[2])
        user, sys_ = sum(r[3] for r in res), sum(r[4] for r in res)
        q = _quantiles(holds)
        long = sum(h for h in holds if h > 100_000) / max(1, sum(holds))
        size = f" on {args.prefill:,} records" if args.prefill else ""
        print(
            f"{w} writers{' (a log each)' if args.separate else ''}{size}: "
            f"{n / span:,.0f} appends/s; "
            f"held p50 {q[0]:.1f} p90 {q[1]:.1f} p99 {q[2]:.1f} p99.9 {q[3]:.1f} "
            f"max {holds[-1] / 1e3:,.0f} us, mean {sum(holds) / max(1, len(holds)) / 1e3:.1f} us; "
            f"lock held {100 * sum(holds) / 1e9 / span:.0f} % of the time; "
            f"{100 * long:.0f} % of held time in holds > 100 us; "
            f"CPU per append user {1e6 * user / n:.1f} + sys {1e6 * sys_ / n:.1f} us; "
            f"switches per append {sum(r[5] for r in res) / n:.2f} voluntary, "
            f"{sum(r[6] for r in res) / n:.2f} involuntary; "
            f"holds per append {len(holds) / n:.2f}, appended by a combiner {combined / n:.2f}; "
            f"minor page faults per append {sum(r[7] for r in res) / n:.2f}; "
            f"writers used {(user + sys_) / span:.2f} cores (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        if args.phases:
            print(_phase_line([r[8] for r in res], n), flush=True)


if __name__ == "__main__":
    main()
