"""A worker for the flat-combining tests: appends in its own process, printing each
acknowledged id and seq, then how many other writers' posts it combined."""

from __future__ import annotations

import sys

from swarmlog import Event
from swarmlog.file.log import FileLog


def event(name: str, i: int) -> Event:
    """The event ``i`` of worker ``name``; ids ``s<i>`` are shared by every worker (the
    same event posted by several processes: one is stored, the others get it back)."""
    if i % 10 == 5:
        return Event(agent="s", type="t", id=f"s{i}", key=f"key{i % 7}", body={"i": i})
    return Event(agent=name, type="t", id=f"{name}-{i}", key=f"key{i % 7}", body={"i": i})


def main(root: str, name: str, n: int, durability: str) -> None:
    with FileLog(root, notify=False, durability=durability) as log:  # type: ignore[arg-type]
        for i in range(n):
            e = log.append(event(name, i))
            if durability == "fsync":  # (acknowledged: a completed fdatasync covers it)
                assert log._sync._words()[2] >= e.seq, (e.seq, log._sync._words()[2])
            sys.stdout.write(f"{e.id} {e.seq}\n")
            sys.stdout.flush()
        slots = log._slots
        sys.stdout.write(f"combined {0 if slots is None else slots.combined}\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
