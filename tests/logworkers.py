"""Worker functions the log tests run in other processes (multiprocessing 'spawn' or fork).

Every worker opens its own handle with ``open_log(target)`` so the tests exercise real
cross-process behaviour: flock, catch-up, notifications, SIGKILL. Results come back through
queues or files. Run as a script for the long crash test::

    python -m tests.logworkers crash DIR --kills 5000
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import sys
import time
from typing import Any

import orjson

from swarmlog.file.log import FileLog
from swarmlog.testing.workers import (  # noqa: F401  the contract's workers, used here too
    _ev,
    batch_writer,
    cas_racer,
    follower,
    reused_id_appender,
    same_id_appender,
    single_writer,
    snapshot_reader,
)


def fsync_writer(target: str, wid: int, n: int, start: Any, out: Any) -> None:
    """Append ``n`` events with durability='fsync'; report (seqs, fdatasyncs this handle ran)."""
    log = FileLog(target, durability="fsync")
    start.wait()
    seqs = [log.append(_ev(f"f{wid}", f"f{wid}-{i}")).seq or 0 for i in range(n)]
    out.put((seqs, log.sync_count))
    log.close()


def checkpoint_saver(directory: str, size: int) -> None:
    """Save a big checkpoint forever (the test SIGKILLs this process mid-write)."""
    from swarmlog import FileCheckpointStore

    store = FileCheckpointStore(directory)
    data = os.urandom(size)
    seq = 1000
    while True:
        store.save(seq, data, "blob/1")
        seq += 1


# ---------------------------------------------------------------- crash test


def _crash_child(log: FileLog, ack_path: str, wid: int, seed: int) -> None:
    """Append singles and batches forever, acking each returned append to ``ack_path``."""
    rnd = random.Random(seed)
    ack = os.open(ack_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    n = 0
    pad = "x" * rnd.choice((10, 100, 1000))
    while True:
        n += 1
        if rnd.random() < 0.3:
            k = rnd.choice((2, 10, 100))
            bid = f"{wid}-{n}"
            evs = [
                _ev("crash", f"c{bid}-{i}", body={"batch": bid, "n": k, "i": i, "pad": pad})
                for i in range(k)
            ]
            out = log.append_many(evs)
            os.write(ack, b"".join(b"%d %s\n" % (e.seq or 0, e.id.encode()) for e in out))
        else:
            e = log.append(_ev("crash", f"c{wid}-{n}", body={"pad": pad}))
            os.write(ack, b"%d %s\n" % (e.seq or 0, e.id.encode()))


def crash_run(root: str, kills: int, seed: int, segment_bytes: int = 1 << 20) -> dict[str, Any]:
    """Fork writers and SIGKILL them at random moments ``kills`` times (see test_filelog_crash).

    This process stays single-threaded, so forking is safe; each child gets the parent's
    caught-up handle (its flock descriptors are reopened after fork) and starts writing at
    once. Returns counts; the acks are in ``root/acks``.
    """
    rnd = random.Random(seed)
    log = FileLog(root, segment_bytes=segment_bytes, notify=False)
    ack_dir = os.path.join(root, "acks")
    os.makedirs(ack_dir, exist_ok=True)
    live: dict[int, int] = {}
    done = 0
    wid = 0

    def spawn() -> None:
        nonlocal wid
        wid += 1
        log.version("-")  # catch up in the parent so the child starts from a warm index
        pid = os.fork()
        if pid == 0:
            try:
                _crash_child(log, os.path.join(ack_dir, f"{wid}.ack"), wid, rnd.random().hex())
            finally:
                os._exit(0)
        live[pid] = wid

    while done < kills:
        while len(live) < 2:
            spawn()
        time.sleep(rnd.uniform(0.001, 0.015))
        pid = rnd.choice(list(live))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        del live[pid]
        done += 1
    for pid in list(live):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    log.close()
    return {"kills": done, "writers": wid}


def read_acks(root: str) -> dict[str, int]:
    """id -> seq of every acknowledged append (an unfinished last ack line is ignored)."""
    acks: dict[str, int] = {}
    ack_dir = os.path.join(root, "acks")
    for name in os.listdir(ack_dir):
        with open(os.path.join(ack_dir, name), "rb") as f:
            for line in f.read().split(b"\n")[:-1]:  # the last piece has no newline
                parts = line.split(b" ")
                if len(parts) == 2 and parts[0].isdigit():
                    acks[parts[1].decode()] = int(parts[0])
    return acks


def main(argv: list[str] | None = None) -> int:
    """``crash DIR --kills N``: the long crash test, with a summary on stdout."""
    p = argparse.ArgumentParser(prog="python -m tests.logworkers")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("crash")
    c.add_argument("root")
    c.add_argument("--kills", type=int, default=1000)
    c.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    res = crash_run(a.root, a.kills, a.seed)
    log = FileLog(a.root)
    acks = read_acks(a.root)
    stored = {ev.id: ev.seq for ev in log.read()}
    lost = [i for i, s in acks.items() if stored.get(i) != s]
    rep = log.verify()
    res.update(acks=len(acks), events=len(stored), lost=len(lost), ok=rep.ok, notes=len(rep.notes))
    print(orjson.dumps(res).decode())
    return 0 if rep.ok and not lost else 1


if __name__ == "__main__":
    sys.exit(main())
