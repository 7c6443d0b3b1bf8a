"""Worker functions the contract suite runs in other processes (multiprocessing "spawn").

Every worker opens its own handle with ``swarmlog.open_log(target)``, so the suite checks
real cross-process behaviour (locks, catch-up, notifications); results come back through
queues. They live in the package, not in a test directory, so a child process can import
them wherever the suite runs.
"""

from __future__ import annotations

import os
import time
from typing import Any

from swarmlog import Event, EventIdReused, VersionConflict, open_log


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
