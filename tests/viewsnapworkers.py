"""Worker processes of the view-snapshot tests: each is a fresh writer on one FileLog.

    python -m tests.viewsnapworkers retry ROOT OLD_JSON              # re-append stored events
    python -m tests.viewsnapworkers write ROOT OLD_JSON GO INDEX N   # a concurrent writer

OLD_JSON holds stored events as [id, seq] pairs. Each worker saves snapshots early
(``SAVE_AFTER`` 20) and prints one JSON object on stdout: whether its handle started from
a snapshot, and what it saw.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from swarmlog import Event, VersionConflict, open_log
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot
from swarmlog.file.view.columns import BasedDict


def _open(root: str) -> tuple[FileLog, list[bool]]:
    snapshot.SAVE_AFTER = 20
    loads: list[bool] = []
    real = snapshot.load

    def load(log: snapshot.View) -> bool:
        loads.append(real(log))
        return loads[-1]

    snapshot.load = load
    log = open_log(root)
    assert isinstance(log, FileLog)
    return log, loads


def _copy(d: dict[str, Any]) -> Event:
    """The event stored as ``d`` (its envelope), to append again: a retry."""
    return Event.from_dict({k: v for k, v in d.items() if k != "seq"})


def _again(log: FileLog, d: dict[str, Any]) -> int:
    """Append a retry of the stored event ``d``; the seq it was stored at."""
    seq = log.append(_copy(d)).seq
    assert seq is not None
    return seq


def retry(root: str, old_json: str) -> dict[str, Any]:
    """Re-append every stored event of OLD_JSON; report the seqs the log answered."""
    old = orjson.loads(Path(old_json).read_bytes())
    log, loads = _open(root)
    with log:
        seqs = [_again(log, d) for _eid, _seq, d in old]
        return {"loaded": loads, "based": isinstance(log._ids, BasedDict), "seqs": seqs}


def write(root: str, old_json: str, go: str, index: int, n: int) -> dict[str, Any]:
    """Once GO exists: n rounds of a fresh append, a retried old id (alone or inside a
    batch of fresh ones) and a CAS increment of key "ctr"; then retry its own ids."""
    old = orjson.loads(Path(old_json).read_bytes())
    log, loads = _open(root)
    mine: list[tuple[str, int]] = []
    mine_ev: list[Event] = []
    wrong: list[Any] = []
    counted = 0
    with log:
        while not os.path.exists(go):
            time.sleep(0.005)
        for i in range(n):
            eid, seq, d = old[(index * 31 + i * 7) % len(old)]
            if i % 2:
                fresh = [
                    Event(agent=f"w{index}", type="note", body={"i": i, "j": j}) for j in (0, 1)
                ]
                stored = log.append_many([fresh[0], _copy(d), fresh[1]])
                mine += [(e.id, e.seq or 0) for e in (stored[0], stored[2])]
                mine_ev += [stored[0], stored[2]]
                got = stored[1].seq
            else:
                e = log.append(Event(agent=f"w{index}", type="note", body={"i": i}))
                mine.append((e.id, e.seq or 0))
                mine_ev.append(e)
                got = _again(log, d)
            if got != seq:
                wrong.append([eid, seq, got])
            while True:  # a CAS increment: the version read is the log's
                v = log.version("ctr")
                try:
                    log.append(
                        Event(agent=f"w{index}", type="count", key="ctr", body={}), {"ctr": v}
                    )
                    counted += 1
                    break
                except VersionConflict:
                    continue
        for ev in mine_ev[::5]:
            if _again(log, ev.to_dict()) != ev.seq:
                wrong.append([ev.id, ev.seq])
        based = isinstance(log._ids, BasedDict)
    return {"loaded": loads, "based": based, "mine": mine, "wrong": wrong, "counted": counted}


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "retry":
        out = retry(args[0], args[1])
    else:
        out = write(args[0], args[1], args[2], int(args[3]), int(args[4]))
    sys.stdout.buffer.write(orjson.dumps(out))
