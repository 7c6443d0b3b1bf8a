"""Worker processes of the facade tests: each opens its own facades on the target.

    python -m tests.facadeworkers race TARGET GO_FILE INDEX   # one put_if_version racer
    python -m tests.facadeworkers count TARGET GO_FILE N      # N acknowledged increments
    python -m tests.facadeworkers write TARGET NAME           # pool, store, bank writes
    python -m tests.facadeworkers read TARGET NAME            # what NAME's writes look like

Each prints one JSON object on stdout.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import orjson

from synthesizer import MemoryBank, MemoryEntry, MemoryIdentity, MemoryStore, SharedMemoryPool

RACE_ID = MemoryIdentity(tenant="race", principal="p", conversation_id="c")


def race(target: str, go: str, index: int) -> dict[str, Any]:
    """Wait for the go file, then put_if_version(expected 1) with version 100 + index."""
    with MemoryStore(target) as store:
        store.refresh()
        while not os.path.exists(go):
            time.sleep(0.005)
        entry = MemoryEntry("shared", f"writer {index}", version=100 + index)
        r = store.put_if_version(RACE_ID, entry, 1)
        return {"index": index, "applied": r.applied, "current": r.current_version}


def count(target: str, go: str, n: int) -> dict[str, Any]:
    """Wait for the go file, then increment the shared counter ``n`` times with
    put_if_version, retrying each increment until it is acknowledged (applied=True)."""
    acked = tries = 0
    with MemoryStore(target) as store:
        store.refresh()
        while not os.path.exists(go):
            time.sleep(0.005)
        while acked < n:
            tries += 1
            cur = store.get(RACE_ID, "counter")
            value, version = (0, 0) if cur is None else (int(cur.value), cur.version)
            entry = MemoryEntry("counter", value + 1, version=version + 1)
            if store.put_if_version(RACE_ID, entry, version).applied:
                acked += 1
    return {"acked": acked, "tries": tries}


def write(target: str, name: str) -> dict[str, Any]:
    """One write through each facade, as agent/tenant ``name``."""
    with SharedMemoryPool(target) as pool:
        m = pool.share(name, f"pool memory written by {name}", "discovery", 0.7)
    with MemoryStore(target) as store:
        store.put({"tenant": name}, MemoryEntry("doc", {"by": name}, version=3))
        store.record_signature({"tenant": name}, f"sig-{name}")
    with MemoryBank(target) as bank:
        b = bank.store_memory(name, f"bank memory of {name}", thread_id="t1")
    return {"pool": m.id, "bank": b}


def read(target: str, name: str) -> dict[str, Any]:
    """What this process sees of ``name``'s writes."""
    with SharedMemoryPool(target) as pool:
        # bank memories are facts of the same pool (category = memory type)
        mems = [m.content for m in pool.get_by_agent(name) if m.category == "discovery"]
        hits = [h.memory.content for h in pool.search(f"pool memory written by {name}", 3)]
    with MemoryStore(target) as store:
        e = store.get({"tenant": name}, "doc")
        seen = store.seen({"tenant": name}, f"sig-{name}")
    with MemoryBank(target) as bank:
        rows = [r.content for r in bank.get_thread_memories(name, "t1")]
        recalled = [r.content for r in bank.recall_memories(name, f"bank memory of {name}")]
    return {
        "pool": mems,
        "pool_hits": hits,
        "store": None if e is None else [e.value, e.version, e.access_count],
        "seen": seen,
        "bank": rows,
        "recalled": recalled,
    }


def main(argv: list[str]) -> None:
    cmd, target, arg = argv[0], argv[1], argv[2]
    if cmd == "race":
        out = race(target, arg, int(argv[3]))
    elif cmd == "count":
        out = count(target, arg, int(argv[3]))
    elif cmd == "write":
        out = write(target, arg)
    elif cmd == "read":
        out = read(target, arg)
    else:
        raise SystemExit(f"unknown command {cmd!r}")
    sys.stdout.write(orjson.dumps(out).decode() + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
