"""FileLog benchmarks, each beside a baseline measured in the same run.

    .venv/bin/python scripts/bench/log_bench.py [--quick] [--no-readme]

1. single-event ``append`` vs a bare orjson + flock + write loop;
2. ``append_many`` of 1,000 vs the same bare loop writing 1,000 lines per flock;
3. ``durability="fsync"`` with 4 writer processes (group commit) vs per-event fdatasync;
4. ``read()`` throughput vs plain orjson parsing of the same segment file;
5. follow latency append -> follower in another process (p50 / p99);
6. memory of the id index (idempotency) per event, by tracemalloc.

Prints the table and writes it into docs/benchmarks.md between ``<!-- bench:log -->`` markers.
"""

from __future__ import annotations

import argparse
import fcntl
import gc
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import write_table

from swarmlog import Event, FileLog
from swarmlog.file import segment as seg

SPAWN = mp.get_context("spawn")


def make_events(n: int, tag: str) -> list[Event]:
    """Events of a typical size (~230 bytes stored), built before any clock starts."""
    return [
        Event(
            agent=f"agent-{i % 8}",
            session="s1",
            type="bench.shared",
            id=f"{tag}{i:08d}",
            body={
                "content": f"observation {i}: the dataset has a 12-month cycle",
                "importance": 0.5,
            },
        )
        for i in range(n)
    ]


def bare_dicts(evs: list[Event]) -> list[dict[str, Any]]:
    return [{"seq": 0, **e.to_dict(), "swarm": "bench"} for e in evs]


def bare_loop(path: str, dicts: list[dict[str, Any]], batch: int) -> float:
    """orjson.dumps + flock + one write per ``batch`` lines: the floor a log can approach."""
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    dumps, flock, write = orjson.dumps, fcntl.flock, os.write
    t0 = time.perf_counter()
    seq = 0
    for i in range(0, len(dicts), batch):
        lines = []
        for d in dicts[i : i + batch]:
            seq += 1
            d["seq"] = seq
            lines.append(dumps(d) + b"\n")
        flock(lock, fcntl.LOCK_EX)
        write(fd, b"".join(lines))
        flock(lock, fcntl.LOCK_UN)
    dt = time.perf_counter() - t0
    os.close(fd)
    os.close(lock)
    return dt


def bench_append(tmp: str, n: int) -> tuple[float, float]:
    """Best of 3: (FileLog append s/event, bare loop s/event)."""
    best_log = best_bare = float("inf")
    for r in range(3):
        evs = make_events(n, f"a{r}-")
        with FileLog(os.path.join(tmp, f"app{r}"), notify=False) as log:
            t0 = time.perf_counter()
            for e in evs:
                log.append(e)
            best_log = min(best_log, (time.perf_counter() - t0) / n)
        best_bare = min(best_bare, bare_loop(os.path.join(tmp, f"bare{r}"), bare_dicts(evs), 1) / n)
    return best_log, best_bare


def bench_batch(tmp: str, n: int) -> tuple[float, float]:
    best_log = best_bare = float("inf")
    for r in range(3):
        evs = make_events(n, f"m{r}-")
        with FileLog(os.path.join(tmp, f"many{r}"), notify=False) as log:
            t0 = time.perf_counter()
            for i in range(0, n, 1000):
                log.append_many(evs[i : i + 1000])
            best_log = min(best_log, (time.perf_counter() - t0) / n)
        d = bare_dicts(evs)
        best_bare = min(best_bare, bare_loop(os.path.join(tmp, f"bareb{r}"), d, 1000) / n)
    return best_log, best_bare


def fsync_log_writer(root: str, wid: int, n: int, barrier: Any, out: Any) -> None:
    evs = make_events(n, f"f{wid}-")
    log = FileLog(root, durability="fsync", notify=False)
    barrier.wait()
    t0 = time.perf_counter()
    for e in evs:
        log.append(e)
    out.put((t0, time.perf_counter(), log.sync_count))
    log.close()


def fsync_bare_writer(path: str, wid: int, n: int, barrier: Any, out: Any) -> None:
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    dicts = bare_dicts(make_events(n, f"g{wid}-"))
    barrier.wait()
    t0 = time.perf_counter()
    for d in dicts:
        line = orjson.dumps(d) + b"\n"
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.write(fd, line)
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.fdatasync(fd)
    out.put((t0, time.perf_counter(), n))


def fsync_serial_writer(path: str, wid: int, n: int, barrier: Any, out: Any) -> None:
    """The naive durable log: write and fdatasync while holding the lock."""
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    dicts = bare_dicts(make_events(n, f"h{wid}-"))
    barrier.wait()
    t0 = time.perf_counter()
    for d in dicts:
        line = orjson.dumps(d) + b"\n"
        fcntl.flock(lock, fcntl.LOCK_EX)
        os.write(fd, line)
        os.fdatasync(fd)
        fcntl.flock(lock, fcntl.LOCK_UN)
    out.put((t0, time.perf_counter(), n))


def run_writers(target: Any, where: str, writers: int, n: int) -> tuple[float, int]:
    barrier = SPAWN.Barrier(writers)
    out = SPAWN.Queue()
    procs = [SPAWN.Process(target=target, args=(where, i, n, barrier, out)) for i in range(writers)]
    for p in procs:
        p.start()
    res = [out.get(600) for _ in procs]
    for p in procs:
        p.join()
    span = max(r[1] for r in res) - min(r[0] for r in res)
    return writers * n / span, sum(r[2] for r in res)


def bench_read(tmp: str, n: int) -> tuple[float, float, str]:
    """(read events/s, plain orjson lines/s, path of the segment)."""
    root = os.path.join(tmp, "read")
    with FileLog(root, notify=False) as log:
        evs = make_events(n, "r")
        for i in range(0, n, 1000):
            log.append_many(evs[i : i + 1000])
    path = os.path.join(root, "segments", seg.segment_name(1))
    best_log = best_base = float("inf")
    for _ in range(5):  # best of 5, each side after a full collection (the runs are noisy)
        gc.collect()
        with open(path, "rb") as f:
            t0 = time.perf_counter()
            data = f.read()
            got = [orjson.loads(line) for line in data.split(b"\n")[:-1]]
            best_base = min(best_base, time.perf_counter() - t0)
        assert len(got) == n
        del got
        gc.collect()
        with FileLog(root, notify=False) as log:
            t0 = time.perf_counter()
            evs_read = list(log.read())
            best_log = min(best_log, time.perf_counter() - t0)
        assert len(evs_read) == n
        del evs_read
    return n / best_log, n / best_base, root


def follower_proc(root: str, count: int, out: Any) -> None:
    log = FileLog(root)
    it = log.follow(1, timeout=30)
    out.put("ready")
    lat = []
    for ev in it:
        lat.append(time.time() - ev.ts)
        if len(lat) >= count:
            break
    out.put(lat)
    log.close()


def bench_follow(tmp: str, n: int) -> tuple[float, float]:
    root = os.path.join(tmp, "follow")
    FileLog(root).close()
    out = SPAWN.Queue()
    p = SPAWN.Process(target=follower_proc, args=(root, n, out))
    p.start()
    assert out.get(60) == "ready"
    time.sleep(0.2)
    with FileLog(root, notify=False) as log:
        for i in range(n):
            log.append(Event(agent="w", type="bench.tick", body={"i": i}))  # ts = now
            time.sleep(0.002)
    lat = sorted(out.get(60))
    p.join()
    q = statistics.quantiles(lat, n=100)
    return q[49], q[98]


def bench_index_memory(root: str, n: int) -> float:
    """Bytes per event of the writer's id index (and key versions), built by catch-up."""
    log = FileLog(root, notify=False)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    log._catch_up(locked=False)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(log._ids) == n
    log.close()
    return (after - before) / n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller counts (a smoke run)")
    ap.add_argument("--no-readme", action="store_true", help="print only")
    a = ap.parse_args()
    k = 5 if a.quick else 1
    with tempfile.TemporaryDirectory(prefix="logbench-") as tmp:
        ap_log, ap_bare = bench_append(tmp, 20_000 // k)
        bt_log, bt_bare = bench_batch(tmp, 100_000 // k)
        fs_n = 200 // k
        gc_rate, gc_syncs = run_writers(fsync_log_writer, os.path.join(tmp, "fs"), 4, fs_n)
        FileLog(os.path.join(tmp, "fs"), notify=False).close()
        pe_rate, _ = run_writers(fsync_bare_writer, os.path.join(tmp, "fsbare"), 4, fs_n)
        se_rate, _ = run_writers(fsync_serial_writer, os.path.join(tmp, "fsserial"), 4, fs_n)
        rd_log, rd_base, read_root = bench_read(tmp, 100_000 // k)
        p50, p99 = bench_follow(tmp, 1000 // k)
        mem = bench_index_memory(read_root, 100_000 // k)

    def us(x: float) -> str:
        return f"{x * 1e6:.1f} µs"

    def ratio(x: float) -> str:
        return f"**{x:.2f}×**"

    rows = [
        [
            "single-event `append`",
            f"{1 / ap_log:,.0f} ev/s ({us(ap_log)})",
            f"bare orjson+flock+write: {1 / ap_bare:,.0f} ev/s ({us(ap_bare)})",
            ratio(ap_bare / ap_log),
            "≥ 0.4×",
        ],
        [
            "`append_many` of 1,000",
            f"{1 / bt_log:,.0f} ev/s",
            f"bare batched loop: {1 / bt_bare:,.0f} ev/s",
            ratio(bt_bare / bt_log),
            "≥ 0.7×",
        ],
        [
            '`durability="fsync"`, 4 writer processes',
            f"{gc_rate:,.0f} ev/s ({4 * fs_n / max(gc_syncs, 1):.1f} events per fdatasync)",
            f"per-event fdatasync outside the lock, 4 writers: {pe_rate:,.0f} ev/s",
            ratio(gc_rate / pe_rate),
            "≥ 10× (unreachable here: ≤ 4×, see below)",
        ],
        [
            '`durability="fsync"`, 4 writer processes (same run)',
            f"{gc_rate:,.0f} ev/s",
            f"per-event fdatasync under the lock, 4 writers: {se_rate:,.0f} ev/s",
            ratio(gc_rate / se_rate),
            "—",
        ],
        [
            "`read()` (Event objects)",
            f"{rd_log:,.0f} ev/s",
            f"plain orjson.loads per line: {rd_base:,.0f} lines/s",
            ratio(rd_log / rd_base),
            "≥ 0.5×",
        ],
        [
            "follow latency, follower in another process",
            f"p50 {p50 * 1e3:.2f} ms / p99 {p99 * 1e3:.2f} ms",
            "—",
            "—",
            "≤ 5 ms / ≤ 20 ms",
        ],
        ["id index memory (idempotency)", f"{mem:.0f} bytes/event", "—", "—", "stated"],
    ]
    notes = (
        f"Events of ~230 bytes (uuid-length ids, an unregistered type, so no pydantic body "
        "validation); best of 3 where repeated (read(): best of 5); "
        f"{os.cpu_count()} CPUs, one ext4 disk. The id "
        "index (id -> seq, in every writer's memory, built by catch-up) was measured with "
        f"tracemalloc over {100_000 // k:,} events. "
        "Group commit: each of the 4 writer processes appends one event at a time and waits "
        "for it to be durable, so at most 4 events can ever share one fdatasync; against "
        "per-event fdatasync of the same 4 writers the ceiling is 4× (less the flock hand-off), "
        "so the 10× goal cannot be met by this benchmark's definition. Worse for any log, "
        "the first baseline already gets a group commit for free: concurrent fdatasyncs of one "
        "file join one ext4 journal commit, so it is the kernel's group commit, and a log can "
        "at best match it. The second baseline is the naive durable log (fdatasync while "
        "holding the lock). swarmlog's writers share syncs through a leader (swarmlog/"
        "swarmlog/file/sync.py): the writer that claims `sync.next` waits for the running sync, "
        "then "
        "runs one fdatasync for everything written by then, while the others sleep on the "
        "flock until a sync that began after their write has completed. "
        "Run: `.venv/bin/python scripts/bench/log_bench.py`."
    )
    header = ["what", "swarmlog", "baseline (same run)", "ratio", "goal"]
    if a.no_readme:
        print("\n".join(" | ".join(r) for r in [header, *rows]))
        print(notes)
    else:
        print(write_table("log", "Log (FileLog)", header, rows, notes))


if __name__ == "__main__":
    main()
