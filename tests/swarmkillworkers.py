"""A writer for the swarm-kill test: random appends until it is killed, printing each
acknowledged one (``A id seq``; a CAS: ``C id seq key expected``)."""

from __future__ import annotations

import random
import sys

from swarmlog import Event, VersionConflict
from swarmlog.file.log import FileLog

SHARED = 300
"""Ids every writer may send (the same event: a retry for all but the first)."""


def main(root: str, name: str, durability: str, seed: int) -> None:
    rnd = random.Random(seed)
    out = sys.stdout
    with FileLog(root, notify=False, durability=durability) as log:  # type: ignore[arg-type]
        i = 0
        while True:
            i += 1
            op = rnd.random()
            lines: list[str] = []
            if op < 0.55:
                e = log.append(Event(agent=name, type="t", id=f"{name}-{i}", body={"i": i}))
                lines.append(f"A {e.id} {e.seq}")
            elif op < 0.70:
                sid = f"shared-{rnd.randrange(SHARED)}"
                e = log.append(Event(agent="s", type="t", id=sid, body={"v": sid}))
                lines.append(f"A {e.id} {e.seq}")
            elif op < 0.85:
                evs = [
                    Event(agent=name, type="t", id=f"{name}-{i}-{k}", body={"k": k})
                    for k in range(rnd.randrange(1, 6))
                ]
                lines.extend(f"A {e.id} {e.seq}" for e in log.append_many(evs))
            else:
                key = f"k{rnd.randrange(4)}"
                v = log.version(key)
                ev = Event(agent=name, type="t", id=f"{name}-{i}", key=key, body={"i": i})
                try:
                    e = log.append(ev, expect={key: v})
                except VersionConflict:
                    continue
                lines.append(f"C {e.id} {e.seq} {key} {v}")
            if durability == "fsync":  # (acknowledged: a completed fdatasync covers it)
                top = max(int(line.split()[2]) for line in lines)
                assert log._sync._words()[2] >= top, (top, log._sync._words()[2])
            out.write("".join(line + "\n" for line in lines))
            out.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
