"""The seeds' argument objects (polish work): seed 000's nested config object and share
input object, ``toVectorMemory()`` entries, a pool opened on a configured swarm; seed
001's options objects; per-category counts in ``swarmlog stats`` and MCP stats."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from synthesizer import MemoryEntry, MemoryIdentity, MemoryStore, SharedMemoryPool
from synthesizer.compat.pool import VectorMemoryEntry
from tests.cli_util import run_cli

ME = MemoryIdentity(tenant="t", principal="p", conversation_id="c")


def test_pool_takes_the_seeds_nested_config_object() -> None:
    cfg = {
        "decay": {"rate": 0.1, "interval": 1},
        "eviction": {"threshold": 0.2},
        "capacity": {"maxMemories": 3},
        "reinforcement": {"boost": 0.3, "maxStrength": 1.0},
    }
    for pool in (SharedMemoryPool(cfg), SharedMemoryPool(config=cfg)):
        p = pool.config.pool
        assert (p.decay_rate, p.eviction_threshold, p.capacity, p.boost) == (0.1, 0.2, 3, 0.3)
        for i in range(5):
            pool.share("a1", f"memory number {i} about a distinct topic {i * 17}")
        assert pool.size == 3  # the capacity it was given
        pool.close()
    partial = SharedMemoryPool({"capacity": {"maxMemories": 7}})  # Partial<MemoryPoolConfig>
    assert partial.config.pool.capacity == 7 and partial.config.pool.decay_rate == 0.05
    partial.close()
    for bad, why in (
        ({"decay": {"speed": 1}}, "unknown pool config decay.speed"),
        ({"decay": {"interval": 5}}, "decay.interval must be 1"),
        ({"capacity": 10}, "must be an object"),
        ({"capacity": {"maxMemories": 0}}, "capacity"),
    ):
        with pytest.raises(ValueError, match=why):
            SharedMemoryPool(bad)
    with pytest.raises(ValueError, match="given twice"):
        SharedMemoryPool({"capacity": {"maxMemories": 5}}, max_capacity=6)


def test_pool_share_takes_the_seeds_input_object() -> None:
    with SharedMemoryPool() as pool:
        m = pool.share("analyst-1", {"content": "a 12-month cycle", "category": "discovery",
                                     "importance": 0.8})  # fmt: skip
        assert (m.content, m.category, m.importance) == ("a 12-month cycle", "discovery", 0.8)
        m2 = pool.share("analyst-1", {"content": "defaults apply"})
        assert (m2.category, m2.importance) == ("general", 0.5)
        with pytest.raises(ValueError, match="unknown share input field 'tags'"):
            pool.share("a", {"content": "x", "tags": ["y"]})
        with pytest.raises(ValueError, match="needs content"):
            pool.share("a", {"category": "x"})
        assert pool.size == 2


def test_to_vector_memory_returns_entries() -> None:
    with SharedMemoryPool() as pool:
        a = pool.share("ann", "the queue drops messages", "bug", 0.9)
        b = pool.share("bob", "deploys need two approvals", "process", 0.4)
        entries = pool.to_vector_memory()
        assert isinstance(entries, list) and len(entries) == 2
        assert all(isinstance(e, VectorMemoryEntry) for e in entries)
        assert [e.id for e in entries] == [a.id, b.id]
        assert entries[0].content == "the queue drops messages"
        assert entries[0].metadata == {"agent": "ann", "category": "bug", "importance": "0.9"}
        assert entries[1].strength == pytest.approx(1.0)
        # as the seed's persistence example: store each entry elsewhere, load it back
        with SharedMemoryPool() as other:
            for e in entries:
                other.share("system", {"content": e.content,
                                       "category": e.metadata["category"],
                                       "importance": e.strength})  # fmt: skip
            assert other.size == 2
        assert entries.store("one more") and pool.size == 3  # still the adapter too


def test_pool_opens_a_configured_swarm(tmp_path: Path) -> None:
    root = str(tmp_path / "s")
    assert run_cli("init", "--root", root, "--set", "pool.capacity=500").code == 0
    with SharedMemoryPool(root) as pool:  # was: ConfigError (capacity 1000 vs 500)
        assert pool.config.pool.capacity == 500
    with SharedMemoryPool(root, max_capacity=500) as pool:  # agreeing numbers are fine
        assert pool.config.pool.capacity == 500
    with pytest.raises(Exception, match="differs"):
        SharedMemoryPool(root, max_capacity=10)


def test_store_takes_the_seeds_options_objects() -> None:
    with MemoryStore() as store:
        store.put(ME, MemoryEntry("a", 1, embedding=(1.0, 0.0), embedder_id="m1", tier="hot"))
        store.put(ME, MemoryEntry("b", 2, embedding=(0.6, 0.8), embedder_id="m1", tier="warm"))
        store.put(ME, MemoryEntry("c", 3, embedding=(0.0, 1.0), embedder_id="m2", tier="hot"))
        q = [1.0, 0.0]
        assert [h.entry.id for h in store.search(ME, q, {"tiers": ["hot"]})] == ["a", "c"]
        assert [h.entry.id for h in store.search(ME, q, {"minScore": 0.5})] == ["a", "b"]
        assert [h.entry.id for h in store.search(ME, q, {"embedderId": "m2"})] == ["c"]
        assert [h.entry.id for h in store.search(ME, q, {"k": 1})] == ["a"]
        assert store.search(ME, q, {"topK": 2, "minScore": 0.5, "tiers": ["warm"]})[0].entry.id \
            == "b"
        with pytest.raises(ValueError, match="unknown search option 'min'"):
            store.search(ME, q, {"min": 1})
        with pytest.raises(ValueError, match="either as an object or as keywords"):
            store.search(ME, q, {"k": 1}, tiers=["hot"])
        page = store.list(ME, {"limit": 2})
        assert len(page.entries) == 2 and page.cursor
        rest = store.list(ME, {"limit": 2, "cursor": page.cursor})
        assert len(rest.entries) == 1
        assert [e.id for e in store.list(ME, {"tiers": ["warm"]}).entries] == ["b"]
        with pytest.raises(ValueError, match="unknown list option"):
            store.list(ME, {"offset": 1})


def test_stats_count_facts_per_category(cli_root: str) -> None:
    for text, cat in (("alpha one", "bug"), ("beta two", "bug"), ("gamma three", "plan")):
        assert run_cli("--root", cli_root, "append", "-a", "a1", "-c", cat, text).code == 0
    assert run_cli("--root", cli_root, "synth", "--once").code == 0
    r = run_cli("--root", cli_root, "stats")
    assert "facts by category: bug 2, plan 1" in r.out
    d = orjson.loads(run_cli("--root", cli_root, "stats", "--json").out)
    assert d["by_category"] == {"bug": 2, "plan": 1}
