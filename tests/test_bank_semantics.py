"""The merge-rule work item 6 (seed 004): a MemoryBank's memories last until pruned or consolidated.

On main they were facts of the pool like any other: 1,005 ``store_memory`` calls left
1,000 (pool capacity), 60 pool ticks left none (decay below the eviction threshold), and
their working energy expiring (a tick after it decayed) removed them. Now only the bank's own prune
and consolidation remove them; the pool's own memories still obey capacity and decay.
On a FileLog (real files), with replay from a checkpoint equal to replay from seq 1.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from synthesizer import MemoryBank, SharedMemoryPool
from synthesizer import events as T
from synthesizer.configlog import change_config
from synthesizer.replay import save_checkpoint, state_at

pytestmark = pytest.mark.timeout(300)


def test_bank_memories_are_not_the_pools_to_evict(tmp_path: Path) -> None:
    root = str(tmp_path / "s")
    with MemoryBank(root) as bank:
        for i in range(1005):
            bank.store_memory("agent-7", f"observation {i}: queue depth was {i * 3}")
        assert bank.get_agent_memory_stats("agent-7")["total_memories"] == 1005
    with SharedMemoryPool(root) as pool:
        for _ in range(60):
            pool.decay()
        pooled = [pool.share("a1", f"pool note {i}", "discovery", 0.5) for i in range(3)]
        for _ in range(60):  # the pool's own memories still decay away
            pool.decay()
        assert all(pool.get(m.id) is None for m in pooled)
    with MemoryBank(root) as bank:
        assert bank.get_agent_memory_stats("agent-7")["total_memories"] == 1005
        hits = bank.recall_memories("agent-7", "observation 17: queue depth was 51", limit=1)
        assert hits and hits[0].content.startswith("observation 17:")
        log = bank.swarm.log
        save_checkpoint(log, state_at(log))
    log = FileLog(root)
    assert state_at(log).digest() == state_at(log, from_start=True).digest()


def test_working_tier_expiry_and_capacity_spare_bank_memories(tmp_path: Path) -> None:
    root = tmp_path / "s"
    MemoryBank(str(root)).close()  # a swarm's own defaults: working memories expire
    change_config(FileLog(root), {"pool.capacity": "50"})  # a small pool
    with SharedMemoryPool(str(root), max_capacity=50) as pool:
        for i in range(60):  # the pool's memories are capped ...
            pool.share("a1", f"pool finding {i}", "discovery", 0.5)
    with MemoryBank(str(root)) as bank:
        ids = [bank.store_memory("b", f"bank memory {i}") for i in range(80)]
    with SharedMemoryPool(str(root), max_capacity=50) as pool:
        for i in range(10):  # ... and new pool memories make room among the pool's only
            pool.share("a1", f"later pool finding {i}", "discovery", 0.5)
        facts = pool.swarm.refresh().facts
        assert all(i in facts for i in ids) and len(facts) == 50 + 80
    log = FileLog(root)  # working energy decays 36,000x an hour: gone in a second
    change_config(log, {"tiers.working_decay": "36000"})
    time.sleep(1.0)  # (the swarm clock is the log's: no writer can jump it, so wait)
    log.append(Event(agent="system", type=T.POOL_TICK, body={}))
    log.close()
    with MemoryBank(str(root)) as bank:
        facts = bank.swarm.refresh().facts
        assert all(i in facts for i in ids)
        assert bank.get_agent_memory_stats("b")["total_memories"] == 80
        # the pool's own working memories did expire
        assert not [f for f in facts.values() if f.id not in ids]
    with MemoryBank(str(root)) as bank:  # the bank's own prune still removes them
        bank.prune_old_memories("b", older_than_days=1e-6)
        assert bank.get_agent_memory_stats("b")["total_memories"] == 0
