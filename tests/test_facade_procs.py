"""The facades across real processes, on FileLog and on JetStream (a real nats-server).

* 8 processes race ``put_if_version`` on one entry with the same expected version:
  exactly one applies, and every loser sees the winner's version;
* a pool, a store and a bank used from two processes on one root see each other's
  writes; replay from a checkpoint equals replay from the start with their events.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from synthesizer import MemoryBank, MemoryEntry, MemoryStore, SharedMemoryPool
from synthesizer.compat import events as FE
from synthesizer.replay import state_at
from tests.conftest import LogTarget
from tests.facadeworkers import RACE_ID

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

ROOT = Path(__file__).resolve().parent.parent
RACERS = 8


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.facadeworkers", *args],
        cwd=ROOT,
        env=_env(),
        stdout=subprocess.PIPE,
    )


def _result(p: subprocess.Popen[bytes]) -> Any:
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0, f"worker {p.pid} failed"
    return orjson.loads(out)


def test_eight_processes_race_put_if_version(log_target: LogTarget, tmp_path: Path) -> None:
    with MemoryStore(log_target.target) as store:
        store.put(RACE_ID, MemoryEntry("shared", "initial", version=1))
        go = tmp_path / "go"
        procs = [_start("race", log_target.target, str(go), str(i)) for i in range(RACERS)]
        time.sleep(1.0)  # let them open their logs; the go file releases them together
        go.touch()
        results = [_result(p) for p in procs]
        winners = [r for r in results if r["applied"]]
        assert len(winners) == 1, results
        won = 100 + winners[0]["index"]
        assert all(r["current"] == won for r in results), results
        final = store.get(RACE_ID, "shared")
        assert final is not None and final.version == won
        assert final.value == f"writer {winners[0]['index']}"
        # every conditional put that reached the log is keyed: the per-key CAS let each in
        # only at the key's version its writer had folded
        puts = [ev for ev in store.log.read(1) if ev.type == FE.STORE_PUT]
        assert all(ev.key is not None for ev in puts) and len(puts) >= 2


def test_put_if_version_acknowledges_its_own_write(tmp_path: Path) -> None:
    """The faults work item 4: 4 processes x 150 increments, each retried until acknowledged:
    the counter ends at exactly the number acknowledged. (Deciding ``applied`` from the
    newest seq told a writer whose put was stored, and then built on by another, that
    it was not: it wrote its increment again; main counted 626 for 600.)"""
    target = str(tmp_path / "s")
    go = tmp_path / "go"
    with MemoryStore(target) as store:
        procs = [_start("count", target, str(go), "150") for _ in range(4)]
        time.sleep(1.0)
        go.touch()
        results = [_result(p) for p in procs]
        acked = sum(r["acked"] for r in results)
        assert acked == 600
        final = store.get(RACE_ID, "counter")
        assert final is not None and (final.value, final.version) == (600, 600), results
        assert sum(r["tries"] for r in results) > 600  # they did race


def test_two_processes_share_pool_store_and_bank(log_target: LogTarget) -> None:
    target = log_target.target
    wrote = _result(_start("write", target, "child"))
    with (
        SharedMemoryPool(target) as pool,
        MemoryStore(target) as store,
        MemoryBank(target) as bank,
    ):
        assert pool.get(wrote["pool"]) is not None  # the child's writes, seen here
        e = store.get({"tenant": "child"}, "doc")
        assert e is not None and (e.value, e.version) == ({"by": "child"}, 3)
        assert store.seen({"tenant": "child"}, "sig-child")
        assert [m.memory_id for m in bank.get_thread_memories("child", "t1")] == [wrote["bank"]]
        # and this process's writes, seen by another
        pool.share("parent", "pool memory written by parent", "discovery", 0.7)
        store.put({"tenant": "parent"}, MemoryEntry("doc", {"by": "parent"}, version=3))
        store.record_signature({"tenant": "parent"}, "sig-parent")
        bank.store_memory("parent", "bank memory of parent", thread_id="t1")
        seen = _result(_start("read", target, "parent"))
        assert seen["pool"] == ["pool memory written by parent"]
        assert seen["pool_hits"][0] == "pool memory written by parent"
        assert seen["store"] == [{"by": "parent"}, 3, 1]  # the reader's get counted an access
        assert seen["seen"] is True
        assert seen["bank"] == seen["recalled"] == ["bank memory of parent"]
        e2 = store.get({"tenant": "parent"}, "doc")
        assert e2 is not None and e2.access_count == 2  # its access and ours, in one log
        # replay from a checkpoint equals replay from the start, facade events included
        for _ in range(3):
            pool.decay()
        pool.swarm.checkpoint()
        bank.consolidate_memories("parent", older_than_days=0)
        store.forget({"tenant": "child"})
        live = store.refresh().digest()
        log = log_target.open()
        try:
            assert state_at(log, from_start=True).digest() == live
            assert state_at(log).digest() == live
        finally:
            log.close()
