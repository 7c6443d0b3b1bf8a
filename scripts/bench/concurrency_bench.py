"""Many writer processes at once: swarmlog append and agent.share vs SQLite WAL and a bare loop.

Usage: ``.venv/bin/python scripts/bench/concurrency_bench.py [--writers 1,4,16,64]
[--seconds 2] [--baseline DIR] [--prefill N] [--no-write]``.

For each writer count and durability (``process``: the OS page cache; ``fsync``: each
append returns once an fdatasync covers it), every system gets the same number of writer
processes (forked from this one, so none pays an interpreter start), started together,
each appending single events in a loop for ``--seconds``; the row is the total events
per second. The systems, measured in the same run one after another:

* swarmlog ``FileLog.append`` (the shared writer index), and the same with the index
  switched off (``_wix_off``: every writer catches up by parsing the others' records,
  which is main's append path before the write-path work);
* ``agent.share`` (``Swarm.open(root).agent(name).share(text)``: build + append);
* SQLite in WAL mode, ``synchronous=NORMAL`` (process) or ``FULL`` (fsync), one
  autocommit ``INSERT`` of the same JSON per row, ``busy_timeout`` 60 s;
* the bare loop: orjson line + ``flock`` + ``write`` (+ ``fdatasync`` per event under
  fsync, outside the lock), the floor a log on files can approach;
* with ``--baseline DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/old
  83f64a7^``, the last commit before the index): ``FileLog.append`` of that tree, in a
  process of its own (``SWARMLOG_BENCH_TREE``) started right after the others of the row.

Under fsync the swarmlog rows also give appends per fdatasync (group commit). Every row
gives the CPU per append (user + system time of the writer processes over the events
they appended) of swarmlog's append and of the bare loop: on a machine whose cores are
all busy, throughput is cores over CPU per append (write-path work: why fsync at 16 writers
stays under the bare loop). ``--durability fsync`` runs only the fsync rows. The
machine's load average (``os.getloadavg``) is printed with the table: on a shared
machine the figures move with it, so compare only rows of one run.

``--prefill N``: every swarmlog log (this tree's and the baseline's) and the SQLite table
start with N records (one log built once by ``append_many``, copied for each cell; the
SQLite rows inserted in one transaction), to show appends at size: a log of a swarm
that has run for a while, not a fresh one. The no-index and ``agent.share`` columns are
left out then ("-"), and the bare loop, which keeps no index, appends to a fresh file.
"""

from __future__ import annotations

import argparse
import fcntl
import multiprocessing as mp
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, os.environ.get("SWARMLOG_BENCH_TREE") or str(Path(__file__).parents[2]))

from _table import write_table

from swarmlog import Event
from swarmlog.file.log import FileLog

FORK = mp.get_context("fork")
TEXT = "observation {}: the dataset has a 12-month cycle"


def _event(wid: int, i: int) -> Event:
    return Event(
        agent=f"agent-{wid}",
        session="s1",
        type="bench.shared",
        body={"content": TEXT.format(i), "importance": 0.5},
    )


def _loop(step: Any, start: Any, seconds: float) -> tuple[int, float]:
    """Run ``step(i)`` until ``seconds`` passed since the common start; (count, span)."""
    t0 = start.wait_until()
    end = t0 + seconds
    n = 0
    now = time.perf_counter
    while now() < end:
        step(n)
        n += 1
    return n, now() - t0


def _cpu() -> float:
    """CPU seconds (user + system) this process has used."""
    t = os.times()
    return t.user + t.system


class Start:
    """A common start time for forked workers: all set up (a barrier), then the parent
    picks an instant shortly ahead and lets them go (a second barrier)."""

    def __init__(self, parties: int) -> None:
        self.ready = FORK.Barrier(parties + 1)
        self.set = FORK.Barrier(parties + 1)
        self.at = FORK.Value("d", 0.0)

    def go(self) -> None:
        self.ready.wait()
        self.at.value = time.perf_counter() + 0.1
        self.set.wait()

    def wait_until(self) -> float:
        self.ready.wait()
        self.set.wait()
        t0 = float(self.at.value)
        while time.perf_counter() < t0:
            time.sleep(0.001)
        return t0


def w_append(where: str, wid: int, dur: str, start: Start, seconds: float, out: Any) -> None:
    durability = "fsync" if dur == "fsync" else "process"
    log = FileLog(where, durability=durability, notify=False)  # type: ignore[arg-type]
    if dur == "noindex":
        log._wix_off = True
    log.append(_event(wid, -1))  # (the first append reads the log: before the clock)
    syncs0 = log.sync_count
    cpu0 = _cpu()
    n, span = _loop(lambda i: log.append(_event(wid, i)), start, seconds)
    out.put((n, span, log.sync_count - syncs0, _cpu() - cpu0))
    log.close()


def w_noindex_fsync(where: str, wid: int, dur: str, start: Start, seconds: float, out: Any) -> None:
    log = FileLog(where, durability="fsync", notify=False)
    log._wix_off = True
    log.append(_event(wid, -1))
    syncs0 = log.sync_count
    cpu0 = _cpu()
    n, span = _loop(lambda i: log.append(_event(wid, i)), start, seconds)
    out.put((n, span, log.sync_count - syncs0, _cpu() - cpu0))
    log.close()


def w_share(where: str, wid: int, dur: str, start: Start, seconds: float, out: Any) -> None:
    from synthesizer.swarm import Swarm

    durability = "fsync" if dur == "fsync" else "process"
    swarm = Swarm.open(where, durability=durability, notify=False)
    agent = swarm.agent(f"agent-{wid}")
    agent.share(TEXT.format(-1))
    n, span = _loop(lambda i: agent.share(TEXT.format(i), importance=0.5), start, seconds)
    out.put((n, span, 0, 0.0))
    swarm.close()


def w_sqlite(where: str, wid: int, dur: str, start: Start, seconds: float, out: Any) -> None:
    db = sqlite3.connect(where, timeout=60.0, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(f"PRAGMA synchronous={'FULL' if dur == 'fsync' else 'NORMAL'}")
    db.execute("PRAGMA busy_timeout=60000")
    dumps = orjson.dumps

    def step(i: int) -> None:
        d = _event(wid, i).to_dict()
        db.execute("INSERT INTO events (id, data) VALUES (?, ?)", (d["id"], dumps(d)))

    n, span = _loop(step, start, seconds)
    out.put((n, span, 0, 0.0))
    db.close()


def w_bare(where: str, wid: int, dur: str, start: Start, seconds: float, out: Any) -> None:
    lock = os.open(where + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    fd = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    dumps, flock, write = orjson.dumps, fcntl.flock, os.write
    sync = dur == "fsync"

    def step(i: int) -> None:
        line = dumps({"seq": 0, **_event(wid, i).to_dict()}) + b"\n"
        flock(lock, fcntl.LOCK_EX)
        write(fd, line)
        flock(lock, fcntl.LOCK_UN)
        if sync:
            os.fdatasync(fd)

    cpu0 = _cpu()
    n, span = _loop(step, start, seconds)
    out.put((n, span, n if sync else 0, _cpu() - cpu0))
    os.close(fd)
    os.close(lock)


def run(
    target: Any, where: str, writers: int, dur: str, seconds: float
) -> tuple[float, int, int, float]:
    """(events/s over all writers, events, fdatasyncs, CPU us per event: user + system
    of the writer processes, for the systems that measure it, else 0)."""
    start = Start(writers)
    out = FORK.Queue()
    procs = [
        FORK.Process(target=target, args=(where, w, dur, start, seconds, out))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    start.go()
    res = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(60)
    total = sum(r[0] for r in res)
    span = max(r[1] for r in res)
    return total / span, total, sum(r[2] for r in res), 1e6 * sum(r[3] for r in res) / total


def _prefilled(tmp: str, n: int) -> tuple[str, str]:
    """A FileLog and a SQLite database of ``n`` records each, to copy for every cell."""
    log_dir, db = os.path.join(tmp, "prefill-log"), os.path.join(tmp, "prefill.db")
    log = FileLog(log_dir, notify=False)
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE TABLE events (id TEXT PRIMARY KEY, data BLOB)")
    for at in range(0, n, 10_000):
        evs = log.append_many([_event(999, i) for i in range(at, min(n, at + 10_000))])
        rows = [(e.id, orjson.dumps(e.to_dict())) for e in evs]
        con.executemany("INSERT INTO events (id, data) VALUES (?, ?)", rows)
        con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    log.close()
    return log_dir, db


def _n(x: float, form: str = "{:,.0f}") -> str:
    """``x`` formatted, or "-" for a cell not measured (NaN)."""
    return "-" if x != x else form.format(x)


def _cell_log(template: str | None, path: str) -> str:
    """``path``, a copy of the prefilled log ``template`` if there is one."""
    if template is not None:
        shutil.copytree(template, path)
    return path


def baseline(tree: str, where: str, writers: int, dur: str, seconds: float) -> float:
    """Events/s of ``tree``'s FileLog.append (its own process: another swarmlog)."""
    env = {**os.environ, "SWARMLOG_BENCH_TREE": os.path.abspath(tree)}
    cmd = [sys.executable, __file__, "--cell", f"{where},{writers},{dur},{seconds}"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if res.returncode:
        raise SystemExit(f"baseline {tree}: {res.stderr.strip()[-500:]}")
    return float(res.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--writers", default="1,4,16,64")
    ap.add_argument("--durability", default="process,fsync", help="process, fsync or process,fsync")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--baseline", help="a checkout whose FileLog.append gets a column")
    ap.add_argument("--cell", help=argparse.SUPPRESS)  # (a baseline cell: where,w,dur,s)
    ap.add_argument("--no-write", action="store_true", help="print only, leave docs alone")
    ap.add_argument("--prefill", type=int, default=0, help="records every log starts with")
    args = ap.parse_args()
    if args.cell:
        where, w, dur, secs = args.cell.split(",")
        print(run(w_append, where, int(w), dur, float(secs))[0])
        return
    counts = [int(x) for x in args.writers.split(",")]
    rows = []
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="concbench-") as tmp:
        tlog, tdb = _prefilled(tmp, args.prefill) if args.prefill else (None, None)
        for dur in args.durability.split(","):
            if dur not in ("process", "fsync"):
                ap.error(f"--durability: {dur!r} is neither process nor fsync")
            for w in counts:
                tag = f"{dur}-{w}"
                db = os.path.join(tmp, f"{tag}.db")
                if tdb is not None:
                    shutil.copyfile(tdb, db)
                else:
                    con = sqlite3.connect(db)
                    con.execute("PRAGMA journal_mode=WAL")
                    con.execute("CREATE TABLE events (id TEXT PRIMARY KEY, data BLOB)")
                    con.close()
                at = _cell_log(tlog, os.path.join(tmp, f"a-{tag}"))
                app, n_app, syncs, app_cpu = run(w_append, at, w, dur, args.seconds)
                if tlog is not None:
                    shutil.rmtree(at)
                    old, n_old, old_syncs = float("nan"), 0, 0
                elif dur == "fsync":
                    old, n_old, old_syncs, _ = run(
                        w_noindex_fsync, os.path.join(tmp, f"o-{tag}"), w, dur, args.seconds
                    )
                else:
                    old, n_old, old_syncs, _ = run(
                        w_append, os.path.join(tmp, f"o-{tag}"), w, "noindex", args.seconds
                    )
                base = None
                if args.baseline:
                    at = _cell_log(tlog, os.path.join(tmp, f"x-{tag}"))
                    base = baseline(args.baseline, at, w, dur, args.seconds)
                    if tlog is not None:
                        shutil.rmtree(at)
                share = (
                    run(w_share, os.path.join(tmp, f"s-{tag}"), w, dur, args.seconds)[0]
                    if tlog is None
                    else float("nan")
                )
                sql = run(w_sqlite, db, w, dur, args.seconds)[0]
                os.unlink(db)
                bare, _, _, bare_cpu = run(
                    w_bare, os.path.join(tmp, f"b-{tag}"), w, dur, args.seconds
                )
                per = (
                    f"{n_app / max(1, syncs):.1f}"
                    + (f" (no index: {n_old / max(1, old_syncs):.1f})" if n_old else "")
                    if dur == "fsync"
                    else "-"
                )
                row = [
                    dur,
                    str(w),
                    f"{app:,.0f}",
                    _n(old),
                    *([f"{base:,.0f} ({app / base:.2f}x)"] if base is not None else []),
                    _n(share),
                    f"{sql:,.0f}",
                    f"{bare:,.0f}",
                    f"{app / sql:.2f}x",
                    _n(share / sql, "{:.2f}x"),
                    f"{app / bare:.2f}x",
                    per,
                    f"{app_cpu:.0f} / {bare_cpu:.0f} us",
                ]
                rows.append(row)
                print(" | ".join(row), f"(load {os.getloadavg()[0]:.1f})", flush=True)
    load1 = os.getloadavg()
    header = [
        "durability",
        "writers",
        "swarmlog append/s",
        "append/s, no index (main's path)",
        *([f"append/s, {args.baseline} (this / it)"] if args.baseline else []),
        "agent.share/s",
        "SQLite WAL/s (NORMAL; fsync: FULL)",
        "bare flock+write/s (fsync: + fdatasync each)",
        "append / SQLite",
        "share / SQLite",
        "append / bare",
        "appends per fdatasync",
        "CPU per append, swarmlog / bare (user + sys of the writers)",
    ]
    notes = (
        f"{os.cpu_count()} cores; load average {load0[0]:.1f} at the start, {load1[0]:.1f} "
        f"at the end (a shared machine: other engineers' test runs); {args.seconds:g} s per "
        "cell, every column of a row measured in the same run, one after another"
        + (f"; every log and table starting with {args.prefill:,} records" if args.prefill else "")
        + ". `scripts/bench/concurrency_bench.py`."
    )
    block = "\n".join(" | ".join(r) for r in rows)
    if args.no_write:
        print(block)
        print(notes)
        return
    title = "Many writer processes (write-path work)"
    print(write_table("concurrency", title, header, rows, notes))


if __name__ == "__main__":
    main()
