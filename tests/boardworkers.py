"""Board workers the tests run as real processes, and the history checker they feed.

Run as ``python -m tests.boardworkers MODE TARGET OUT [options]``; each worker opens its
own Swarm on TARGET, waits for the file ``--go`` to appear (so all start together), does
its operations and writes one JSON line per CAS attempt to OUT:
``{"pid", "agent", "key", "kind", "expected", "ok", "version", "t0", "t1", "value",
"status"}`` — ``version`` is the new version when ok, else the current version the
conflict reported; t0/t1 are ``time.monotonic_ns()`` (system-wide on Linux) around the
append; ``value``/``status`` are what the attempt tried to write.

``check_register`` verifies one key's recorded operations against a linearizable
compare-and-swap register with versions (see its docstring).
"""

from __future__ import annotations

import argparse
import os
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from swarmlog import VersionConflict
from synthesizer.board import Attempt, Board
from synthesizer.errors import UnknownFact
from synthesizer.swarm import Swarm


def _wait_go(go: str | None) -> None:
    """Block until the start file exists (all workers start their loops together)."""
    if go is None:
        return
    deadline = time.monotonic() + 120
    while not os.path.exists(go):
        if time.monotonic() > deadline:
            raise SystemExit("start file never appeared")
        time.sleep(0.002)


def counter(target: str, out: str, key: str, n: int, agent: str, go: str | None) -> None:
    """``n`` read-modify-write increments of ``key``'s value through ``board.update``."""
    swarm = Swarm.open(target)
    board: Board = swarm.board
    rows: list[dict[str, Any]] = []
    pid = os.getpid()

    def note(a: Attempt) -> None:
        rows.append(
            {
                "pid": pid,
                "agent": agent,
                "key": a.fact_id,
                "kind": "incr",
                "expected": a.expected,
                "ok": a.ok,
                "version": a.version,
                "t0": a.started,
                "t1": a.ended,
                "value": a.change.get("value"),
                "status": None,
            }
        )

    board.get(key)  # warm up: fold the log once before the start
    _wait_go(go)
    for _ in range(n):
        board.update(
            key,
            lambda f: {"value": str(int(f.value or "0") + 1)},
            retries=100_000,
            agent=agent,
            on_attempt=note,
        )
    swarm.close()
    Path(out).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def mixed(
    target: str, out: str, keys: Sequence[str], n: int, agent: str, seed: int, go: str | None
) -> None:
    """``n`` single CAS attempts on random keys: create when missing, else increment
    (mostly), retract or re-activate; conflicts are recorded, not retried."""
    rnd = random.Random(seed)
    swarm = Swarm.open(target)
    board: Board = swarm.board
    rows: list[dict[str, Any]] = []
    pid = os.getpid()
    board.refresh()
    _wait_go(go)
    for _ in range(n):
        key = rnd.choice(list(keys))
        try:
            f = board.get(key)
        except UnknownFact:
            kind, expected = "create", 0
            change: dict[str, Any] = {"content": f"counter {key}", "value": "0"}
        else:
            expected = f.version
            r = rnd.random()
            if f.status == "retracted" and r < 0.5:
                kind, change = "revive", {"status": "active", "reason": "re-checked"}
            elif f.status != "retracted" and r < 0.15:
                kind, change = "retract", {"status": "retracted", "reason": "doubt"}
            else:
                kind, change = "incr", {"value": str(int(f.value or "0") + 1)}
        t0 = time.monotonic_ns()
        try:
            v = board.cas(key, expected, agent=agent, **change)
            ok = True
        except VersionConflict as e:
            v, ok = e.actual, False
            # the conflict must carry exactly the events since what we read
            assert e.expected == expected and all(
                ev.key == key and expected < (ev.seq or 0) <= e.actual for ev in e.events
            ), "conflict events outside (expected, actual]"
            assert e.events and e.events[-1].seq == e.actual, "conflict misses the latest event"
        t1 = time.monotonic_ns()
        rows.append(
            {
                "pid": pid,
                "agent": agent,
                "key": key,
                "kind": kind,
                "expected": expected,
                "ok": ok,
                "version": v,
                "t0": t0,
                "t1": t1,
                "value": change.get("value"),
                "status": change.get("status"),
            }
        )
    swarm.close()
    Path(out).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def read_rows(paths: Sequence[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """All recorded attempts of the given output files."""
    rows: list[dict[str, Any]] = []
    for p in paths:
        rows.extend(orjson.loads(line) for line in Path(p).read_bytes().splitlines() if line)
    return rows


@dataclass
class Checked:
    """What ``check_register`` established: the accepted chain and the final model."""

    chain: list[Mapping[str, Any]]
    conflicts: int
    value: str | None
    status: str | None


def check_register(
    ops: Sequence[Mapping[str, Any]],
    start_version: int = 0,
    start_value: str | None = None,
    start_status: str | None = None,
) -> Checked:
    """Check one key's operations against a linearizable CAS register; raise AssertionError.

    A history of CAS operations on a versioned register is linearizable iff:

    1. the accepted writes form one chain: sorted by their new version, the first expects
       ``start_version`` and each expects the previous one's new version (so no two
       accepted writes share an expected version, and none is lost or doubled);
    2. the chain order agrees with real time: linearization points p_i in [t0_i, t1_i]
       increasing along the chain exist (greedy p_i = max(p_{i-1}, t0_i) <= t1_i);
    3. every conflict reported a version other than the one it expected, that was in
       the chain (or the start) and that existed at some point during its call: it was
       written before the call ended and replaced after the call began;
    4. the values follow the register's model in chain order: an increment writes the
       previous value + 1; a create starts at "0" as active; retract/revive set status.
    """
    accepted = sorted((o for o in ops if o["ok"]), key=lambda o: o["version"])
    conflicts = [o for o in ops if not o["ok"]]
    versions = [o["version"] for o in accepted]
    assert len(set(versions)) == len(versions), "two accepted writes got the same version"
    dup = [v for v, c in Counter(o["expected"] for o in accepted).items() if c > 1]
    assert not dup, f"two accepted writes from the same expected version(s) {dup[:5]}"
    prev = start_version
    for o in accepted:
        assert o["expected"] == prev, (
            f"broken chain: write {o['version']} expected {o['expected']}, previous is {prev}"
        )
        assert o["version"] > prev, "versions must grow"
        prev = o["version"]
    # 2. real-time order of the chain
    p = -1
    for o in accepted:
        p = max(p, o["t0"])
        assert p <= o["t1"], (
            f"write {o['version']} must be linearized before an earlier-finished write"
        )
    # 3. conflicts saw a version that was current during their call
    born: dict[int, int] = {start_version: -1}  # version -> earliest possible birth (t0)
    died: dict[int, float] = {}  # version -> latest possible death (t1 of the successor)
    before = start_version
    for o in accepted:
        born[o["version"]] = o["t0"]
        died[before] = o["t1"]
        before = o["version"]
    died[before] = float("inf")
    for c in conflicts:
        v = c["version"]
        assert v != c["expected"], f"conflict reported the version it expected ({v})"
        assert v in born, f"conflict reported version {v}, which no write produced"
        assert born[v] <= c["t1"], f"conflict saw version {v} before it was written"
        assert died[v] >= c["t0"], f"conflict saw version {v} after it was replaced"
    # 4. the model
    value, status = start_value, start_status
    for o in accepted:
        kind = o["kind"]
        if kind == "create":
            assert status is None, "a create succeeded on an existing fact"
            value, status = o["value"], "active"
            assert value == "0"
        elif kind == "incr":
            assert status is not None, "an increment succeeded before the fact existed"
            want = str(int(value or "0") + 1)
            assert o["value"] == want, (
                f"write {o['version']} wrote {o['value']}, model says {want} (lost update)"
            )
            value = o["value"]
        elif kind in ("retract", "revive"):
            assert status is not None
            status = o["status"]
        else:
            raise AssertionError(f"unknown op kind {kind!r}")
    return Checked(list(accepted), len(conflicts), value, status)


def main(argv: list[str] | None = None) -> None:
    """Entry point of a worker process."""
    ap = argparse.ArgumentParser(prog="python -m tests.boardworkers")
    ap.add_argument("mode", choices=("counter", "mixed"))
    ap.add_argument("target")
    ap.add_argument("out")
    ap.add_argument("--key", action="append", default=[])
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--agent", default=f"w{os.getpid()}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--go", default=None)
    a = ap.parse_args(argv)
    if a.mode == "counter":
        counter(a.target, a.out, a.key[0], a.n, a.agent, a.go)
    else:
        mixed(a.target, a.out, a.key, a.n, a.agent, a.seed, a.go)


if __name__ == "__main__":
    main()
