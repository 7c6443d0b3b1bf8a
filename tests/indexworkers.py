"""Helpers for the writer index tests: what the index holds, what the segments say, and
a worker that runs a list of append operations in its own process."""

from __future__ import annotations

import os
import sys
from typing import Any

from swarmlog import Event, VersionConflict
from swarmlog.file.log import FileLog
from swarmlog.file.view.writerindex import WriterIndex, swarm_key

View = tuple[tuple[int, int, int, float, bytes], dict[str, int], dict[str, int]]


def index_view(root: str) -> View | None:
    """(end, id -> seq, key -> seq) held by ``<root>/index``; None if it is not trusted."""
    with FileLog(root, create=False, notify=False) as log:
        key = swarm_key(log.swarm_id if log._swarm_id else "")
    ix = WriterIndex.open(root)
    try:
        if not ix.load(key):
            return None
        nxt, seg, off, _ino, last_ts, tip = ix.end
        ids = dict(ix.entries(ix.ids_at, ix.id_cap))
        keys = dict(ix.entries(ix.keys_at, ix.key_cap))
        return (nxt, seg, off, last_ts, tip), ids, keys
    finally:
        ix.close()


def segment_view(root: str) -> View:
    """The same view rebuilt from the segments by the plain catch-up (no index)."""
    with FileLog(root, create=False, notify=False) as log:
        log._wix_off = True
        log._catch_up(locked=False)
        ids = {k: v for k, v in log._ids.items()}
        keys = dict(log._versions.items())
        at = log._end
        end = (at.last + 1, at.seg_first, at.seg_end, at.last_ts, at.tip)
        return end, ids, keys


def run_ops(root: str, wid: int, ops: list[tuple[str, Any]], out: Any) -> None:
    """Run ``ops`` in order: ("a", id) append, ("m", [ids]) append_many, ("c", key) a CAS
    (read the version, append expecting it; a conflict is fine), ("r", id) a retry of an
    id. Put {id: seq} of every acknowledged event on ``out``. An id names the same event
    in every worker (one agent), so a shared id is a retry, never a reused id."""
    acked: dict[str, int] = {}
    with FileLog(root, notify=False) as log:
        for op, arg in ops:
            if op in ("a", "r"):
                acked[arg] = log.append(Event(agent="w", type="t", id=arg)).seq or 0
            elif op == "m":
                got = log.append_many([Event(agent="w", type="t", id=i) for i in arg])
                acked.update((e.id, e.seq or 0) for e in got)
            else:
                v = log.version(arg)
                e = Event(agent=f"w{wid}", type="t", key=arg, body={"w": wid})
                try:
                    acked[e.id] = log.append(e, expect={arg: v}).seq or 0
                except VersionConflict:
                    pass
    out.put(acked)


def ack_loop(root: str, n: int) -> None:
    """Append ``n`` events, printing each acknowledged id and seq (a crash test's writer)."""
    with FileLog(root, notify=False) as log:
        for i in range(n):
            e = log.append(Event(agent="k", type="t", id=f"k{os.getpid()}-{i}", key=f"key{i % 3}"))
            sys.stdout.write(f"{e.id} {e.seq}\n")
            sys.stdout.flush()


if __name__ == "__main__":
    ack_loop(sys.argv[1], int(sys.argv[2]))
