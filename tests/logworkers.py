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

from swarmlog import Event, EventIdReused, VersionConflict, open_log
from swarmlog.file.log import FileLog


def _ev(agent: str, id: str | None = None, **kw: Any) -> Event:
    return Event(agent=agent, type="test.event", id=id, **kw)


def single_writer(target: str, wid: int, n: int, start: Any = None) -> list[int]:
    """Append ``n`` single events with ids ``s<wid>-<i>``; return the seqs in order."""
    if start is not None:
        start.wait()
    log = open_log(target)
    seqs = []
    for i in range(n):
        seqs.append(log.append(_ev(f"w{wid}", f"s{wid}-{i}", body={"i": i})).seq or 0)
    log.close()
    return seqs


def batch_writer(target: str, wid: int, batches: int, size: int, start: Any = None) -> list[int]:
    """Append ``batches`` batches of ``size``; ids ``b<wid>-<batch>-<i>``; return first seqs."""
    if start is not None:
        start.wait()
    log = open_log(target)
    firsts = []
    for b in range(batches):
        evs = [
            _ev(f"b{wid}", f"b{wid}-{b}-{i}", body={"batch": f"{wid}-{b}", "n": size, "i": i})
            for i in range(size)
        ]
        out = log.append_many(evs)
        firsts.append(out[0].seq or 0)
    log.close()
    return firsts


def cas_racer(target: str, key: str, rounds: int, barrier: Any, results: Any) -> None:
    """Each round: read the key's version, wait for all racers, append expecting it."""
    log = open_log(target)
    me = os.getpid()
    for r in range(rounds):
        barrier.wait()
        v = log.version(key)
        barrier.wait()
        try:
            got = log.append(_ev(f"racer{me}", key=key, body={"r": r}), expect={key: v})
            results.put((r, "ok", v, got.seq))
        except VersionConflict as e:
            results.put((r, "conflict", e.expected, e.actual))
    log.close()


def same_id_appender(target: str, rounds: int, barrier: Any, results: Any) -> None:
    """Each round, append an event with the round's fixed id (and content) at the same
    moment as a twin."""
    log = open_log(target)
    for r in range(rounds):
        barrier.wait()
        got = log.append(_ev("twin", f"twin{r}", body={"round": r}))
        results.put((r, got.seq, got.id))
    log.close()


def reused_id_appender(target: str, rounds: int, barrier: Any, results: Any) -> None:
    """Each round, append the round's fixed id with content of this process's own at the
    same moment as a rival: puts (round, "ok", seq, pid) or (round, "reused", seq, pid)."""
    log = open_log(target)
    me = os.getpid()
    for r in range(rounds):
        barrier.wait()
        try:
            got = log.append(_ev("twin", f"rival{r}", body={"pid": me}))
            results.put((r, "ok", got.seq, me))
        except EventIdReused as e:
            results.put((r, "reused", e.seq, me))
    log.close()


def follower(target: str, from_seq: int, count: int, timeout: float, out: Any, **opts: Any) -> None:
    """Follow from ``from_seq`` until ``count`` events arrived (or ``timeout`` of silence).

    Puts ``("ready", None)`` once following, then ``(seen, latencies)`` where seen is the
    list of (seq, id) and latencies is the list of (now - ts) per event, in seconds.
    """
    log = open_log(target, **opts)
    seen: list[tuple[int, str]] = []
    lat: list[float] = []
    it = log.follow(from_seq, timeout=timeout)
    out.put(("ready", None))
    for ev in it:
        lat.append(time.time() - ev.ts)
        seen.append((ev.seq or 0, ev.id))
        if len(seen) >= count:
            break
    out.put((seen, lat))
    log.close()


def snapshot_reader(target: str, duration: float, out: Any) -> None:
    """Read the whole log repeatedly for ``duration`` s; report any partial batch seen."""
    log = open_log(target)
    bad: list[str] = []
    reads = 0
    end = time.monotonic() + duration
    while time.monotonic() < end:
        counts: dict[str, int] = {}
        need: dict[str, int] = {}
        for ev in log.read():
            b = ev.body.get("batch")
            if b is not None:
                counts[b] = counts.get(b, 0) + 1
                need[b] = ev.body["n"]
        bad.extend(f"batch {b}: {c}/{need[b]}" for b, c in counts.items() if c != need[b])
        reads += 1
    out.put((reads, bad[:10]))
    log.close()


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
