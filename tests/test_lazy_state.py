"""A state loaded lazily from a checkpoint (``payload``, ``table``) equals the
state it was saved from: same bytes, same order, same statistics and metrics, and
folding on from it gives the digest of folding from seq 1 — whatever facts were parsed."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, open_log
from synthesizer import SwarmState, SynthConfig, fold, metrics
from synthesizer import events as T
from synthesizer.config import PoolConfig
from synthesizer.replay import (
    CHECKPOINT_FORMAT,
    fold_into,
    load_checkpoint,
    save_checkpoint,
    state_at,
)
from synthesizer.state import payload
from synthesizer.state.facts import Fact
from synthesizer.state.table import FactTable
from synthesizer.swarm import Swarm
from tests.test_fold_determinism import CFG, OPS, Op, build

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ordered_stats(s: SwarmState) -> list[Any]:
    """``stats()`` with its dicts' key order (the plain loop's first-appearance order)."""
    d = s.stats().as_dict()
    return [(k, list(v.items()) if isinstance(v, dict) else v) for k, v in d.items()]


def _metrics(s: SwarmState) -> bytes:
    return orjson.dumps(metrics.compute(s, "t").to_dict())  # key order included


def _same(lazy: SwarmState, eager: SwarmState) -> None:
    assert list(lazy.facts) == list(eager.facts)
    assert list(lazy.evicted) == list(eager.evicted)
    assert _ordered_stats(lazy) == _ordered_stats(eager)
    assert _metrics(lazy) == _metrics(eager)
    assert lazy.to_bytes() == eager.to_bytes()


@pytest.mark.slow
@SETTINGS
@given(ops=OPS, cut=st.floats(0.0, 1.0), touch=st.lists(st.integers(0, 100), max_size=12))
def test_lazy_load_equals_eager_and_folds_on_to_the_same_digest(
    ops: list[Op], cut: float, touch: list[int]
) -> None:
    events = build(ops)
    full = fold(events, SwarmState(CFG))
    k = int(cut * len(events))
    head = fold(events[:k], SwarmState(CFG))
    lazy = payload.decode(payload.encode(head))
    assert isinstance(lazy.facts, FactTable) and lazy.facts.unparsed() == len(head.facts)
    assert lazy.to_bytes() == head.to_bytes()
    assert _ordered_stats(lazy) == _ordered_stats(head)
    assert lazy.facts.unparsed() == len(head.facts)  # from the rows and the saved columns
    _same(lazy, head)  # metrics parse only the top facts and those claiming subjects
    ids = list(head.facts)
    for i in touch:  # parse some facts: the mixed path
        if ids:
            fid = ids[i % len(ids)]
            assert lazy.facts[fid] == head.facts[fid]
    _same(lazy, head)
    again = payload.decode(payload.encode(lazy))  # a checkpoint of a mixed table
    _same(again, head)
    fold(events[k:], again)  # ticks, evictions, forgets, board writes on unparsed rows
    assert again.digest() == full.digest()
    _same(again, full)


def _fact(fid: str) -> Fact:
    return Fact(id=fid, content=fid, category="c", importance=0.5, created_seq=1,
                created_ts=1.0, version=1)  # fmt: skip


@SETTINGS
@given(
    ops=st.lists(
        st.tuples(
            st.sampled_from(("get", "pop", "del", "set", "popitem", "in")), st.integers(0, 30)
        ),
        max_size=40,
    )
)
def test_fact_table_keeps_dict_semantics(ops: list[tuple[str, int]]) -> None:
    state = SwarmState()
    for i in range(20):
        state.facts[f"f{i}"] = _fact(f"f{i}")
    table = payload.decode(payload.encode(state)).facts
    plain: dict[str, Fact] = dict(state.facts)
    assert isinstance(table, FactTable)
    for op, i in ops:
        fid = f"f{i}"
        if op == "get":
            assert table.get(fid) == plain.get(fid)
        elif op == "pop":
            assert table.pop(fid, None) == plain.pop(fid, None)
        elif op == "del" and fid in plain:
            del plain[fid]
            del table[fid]
        elif op == "set":  # a new id goes last; an existing one keeps its place
            plain[fid] = table[fid] = _fact(fid)
        elif op == "popitem" and plain:
            assert table.popitem() == plain.popitem()
        elif op == "in":
            assert (fid in table) == (fid in plain)
        assert len(table) == len(plain)
        assert list(table) == list(plain)
    assert list(table.items()) == list(plain.items())
    assert table.unparsed() == 0


def _swarm(path: Path) -> Swarm:
    cfg = SynthConfig(pool=PoolConfig(capacity=30, decay_rate=0.4, eviction_threshold=0.3))
    return Swarm.open(path, config=cfg)


@pytest.mark.slow
def test_replay_from_a_lazy_checkpoint_equals_replay_from_the_start(tmp_path: Path) -> None:
    """Through a file log: recalls touch some facts, a tick evicts, the capacity evicts,
    a forget rewrites; each time the checkpointed state folds on to the full replay."""
    rng = random.Random(7)
    words = ["cache", "port", "login", "crash", "export", "retry", "token", "proxy"]
    with _swarm(tmp_path / "s") as sw:
        for i in range(40):
            agent = sw.agent(f"a{i % 4}", session=f"s{i % 2}")
            agent.share(f"{rng.choice(words)} {rng.choice(words)} note {i}", importance=0.7)
        sw.synthesize()
        sw.checkpoint()
        log = sw.log
        lazy = load_checkpoint(log)
        assert lazy is not None and isinstance(lazy.facts, FactTable)
        assert lazy.facts.unparsed() == len(lazy.facts) > 0
        steps = [
            lambda: sw.agent("a1", session="s1").recall("cache port", limit=3),
            lambda: sw.agent("a2").reinforce(sorted(sw.state().facts)[0]),
            lambda: sw.tick(),
            lambda: [sw.agent("a3").share(f"more {w} {j}") for j, w in enumerate(words)],
            lambda: sw.synthesize(),
            lambda: sw.tick(),
            lambda: sw.tick(),  # strength 0.6^3 < 0.3: decay evicts the unreinforced
            lambda: sw.forget(agent="a0"),
        ]
        for step in steps:
            step()
            fresh = state_at(log, from_start=True)
            assert state_at(log).digest() == fresh.digest()
            loaded = load_checkpoint(log)
            assert loaded is not None and isinstance(loaded.facts, FactTable)
            fold_into(loaded, log)
            assert loaded.digest() == fresh.digest()
            assert _metrics(loaded) == _metrics(fresh)
            sw.checkpoint()  # the next step starts from a checkpoint of a mixed table
        evictions = state_at(log).metrics.evictions
        assert evictions.get("capacity") and evictions.get("decay"), evictions


def test_a_loaded_state_outlives_its_checkpoint_file(tmp_path: Path) -> None:
    """The payload is mapped: pruning or replacing the file leaves a loaded state whole."""
    with _swarm(tmp_path / "s") as sw:
        for i in range(12):
            sw.agent("a", session="s").share(f"distinct memory number {i}")
        sw.synthesize()
        sw.checkpoint()
        loaded = load_checkpoint(sw.log)
        assert loaded is not None and isinstance(loaded.facts, FactTable)
        ck = sw.log.checkpoints.latest()
        assert ck is not None and isinstance(ck.data, memoryview)  # a mapping, not a copy
        for info in sw.log.checkpoints.list():
            sw.log.checkpoints.delete(info)
        want = state_at(sw.log, from_start=True)
        assert loaded.digest() == want.digest()
        assert [f.content for f in loaded.facts.values()] == [
            f.content for f in want.facts.values()
        ]


def test_a_checkpoint_of_the_former_layout_is_passed_over(tmp_path: Path) -> None:
    """A checkpoint written before this layout (the canonical bytes as the payload) is
    not loaded; the state is replayed and equals the fold from the start."""
    with _swarm(tmp_path / "s") as sw:
        for i in range(6):
            sw.agent("a").share(f"memory {i}")
        sw.synthesize()
        st_ = sw.refresh()
        sw.log.checkpoints.save(st_.last_seq, st_.to_bytes(), "swarmstate/3", "")
        assert load_checkpoint(sw.log) is None
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
        assert CHECKPOINT_FORMAT != "swarmstate/3"


def test_a_damaged_payload_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A payload of the right tag that does not decode is skipped with one line."""
    log = open_log(tmp_path / "s")
    log.append(Event(agent="a", type=T.MEMORY_SHARED, body={"content": "x"}))
    st_ = state_at(log)
    save_checkpoint(log, st_)
    log.append(Event(agent="a", type=T.MEMORY_SHARED, body={"content": "y"}))
    log.checkpoints.save(log.last_seq, b"swarmstate-rows 1 000000000002\n{}", CHECKPOINT_FORMAT)
    assert load_checkpoint(log) is not None  # the older, good one
    assert any("does not decode" in r.getMessage() for r in caplog.records)


def test_the_header_alone_gives_the_configuration() -> None:
    """``state_dict`` (configlog's reader of a checkpoint whose configuring event retention
    deleted) reads the configuration and its seq without the fact rows."""
    events = build([(0, 1, 2, 0, 0.5), (2, 0, 0, 0, 0.1), (7, 0, 0, 0, 0.2)])
    state = fold(events, SwarmState(CFG))
    state.config_seq = 2
    d = payload.state_dict(payload.encode(state))
    assert SynthConfig.model_validate(d["config"]) == CFG
    assert d["config_seq"] == 2 and d["last_seq"] == state.last_seq and d["facts"] == []
    with pytest.raises(ValueError):
        payload.state_dict(state.to_bytes())  # the canonical form is not a payload
