"""What a combined record costs its combiner, beside the holder's own fused append.

Usage: ``.venv/bin/python scripts/bench/combine_cost_probe.py [--posters 0,1,3,15]
[--records 30000] [--tree DIR]``.

Flat combining (``swarmlog/file/view/combine.py``) pays only if the holder of the append
lock appends a posted record for less than its poster's own append would cost. This
probe takes the scheduling away and times the holder's part alone, in one process, on
one core: K handles on one log each post a record in their slot (as a writer that finds
the lock busy does: ``Slots.post``, with the event serialized as ``FileLog.append``
does), then one more handle calls the public ``FileLog.append``, which takes the free
lock, finds the K posts and appends them with its own in one write; the posters then
read their marks. K = 0 is the holder's own fused append with nobody posted. It prints,
per K, the time of the holder's ``append`` per record it wrote, and the whole round's CPU
per record (posting and reading the marks included). Compare only rows of one run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, os.environ.get("SWARMLOG_BENCH_TREE") or str(Path(__file__).parents[2]))


def measure(k: int, records: int) -> tuple[float, float]:
    """(holder's append us per record, round CPU us per record) with ``k`` posters."""
    from concurrency_bench import _event

    from swarmlog.clock import split_ts
    from swarmlog.file.log import FileLog
    from swarmlog.file.view import _fast as ixfast

    where = tempfile.mkdtemp(prefix="combine-cost-")
    try:
        holder = FileLog(where, notify=False)
        posters = [FileLog(where, notify=False) for _ in range(k)]
        for rnd in (-3, -2):  # (every handle has seen the others: none is alone)
            holder.append(_event(99, rnd))
            for j, p in enumerate(posters):
                p.append(_event(j, rnd))
        slots = [p._slots_for(ixfast.id_key("probe")) for p in posters]
        assert all(s is not None for s in slots), "no combining slot (SWARMLOG_COMBINE=0?)"
        rounds = max(1, records // (k + 1))
        held = 0
        cpu0 = time.process_time()
        for i in range(rounds):
            for j, (p, s) in enumerate(zip(posters, slots, strict=True)):
                src = _event(j, i)._d
                pre, post = split_ts(p._serializer.members(src))
                idk = ixfast.id_key(src["id"])
                assert s is not None and s.post(idk[0], idk[1], src.get("key"), pre, post)
            ev = _event(99, i)
            t0 = time.perf_counter_ns()
            holder.append(ev)
            held += time.perf_counter_ns() - t0
            for s in slots:
                assert s is not None and s.result() is not None
                s.ticket = 0
        cpu = time.process_time() - cpu0
        n = rounds * (k + 1)
        for p in (holder, *posters):
            p.close()
        return held / n / 1e3, cpu / n * 1e6
    finally:
        shutil.rmtree(where, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--posters", default="0,1,3,15")
    ap.add_argument("--records", type=int, default=30000)
    ap.add_argument("--tree", default="")
    args = ap.parse_args()
    if args.tree:
        sys.path.insert(0, args.tree)
    import swarmlog

    print(f"tree {Path(swarmlog.__file__).parents[1]}; load average {os.getloadavg()[0]:.1f}")
    for k in (int(x) for x in args.posters.split(",")):
        held, cpu = measure(k, args.records)
        print(
            f"{k:>2} posted: holder's append {held:5.1f} us per record it wrote; "
            f"round CPU {cpu:5.1f} us per record (posting and marks included)"
        )


if __name__ == "__main__":
    main()
