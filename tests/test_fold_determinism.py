"""Determinism of the fold: same events -> same digest, from seq 1 or from a checkpoint
(``from_bytes(to_bytes())``) at any point, and through the stored record encoding."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog.envelope import Event, decode, encode
from synthesizer import SwarmState, SynthConfig, apply, fold
from synthesizer import events as T
from synthesizer.state import fold_dicts

CFG = SynthConfig(
    pool={"capacity": 5, "decay_rate": 0.3, "eviction_threshold": 0.2},
    tiers={"coactivation_threshold": 1, "promote_short": 1.8},
)
AGENTS = ("a", "b", "c", "d")
SESSIONS = ("s1", "s2", "s3")

Op = tuple[int, int, int, int, float]
OPS = st.lists(
    st.tuples(
        st.sampled_from((0, 0, 1, 2, 2, 3, 4, 5, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
        st.integers(0, 7),
        st.integers(0, 7),
        st.integers(0, 3),
        st.floats(-0.01, 1.0, allow_nan=False),
    ),
    min_size=5,
    max_size=90,
)


def build(ops: list[Op]) -> list[Event]:
    """Turn abstract ops into a plausible stored event stream (seqs 1..n)."""
    out: list[Event] = []
    pending: list[int] = []
    fids: list[str] = []
    raws: list[int] = []
    ts = 1_000_000.0

    versions: dict[str, int] = {}  # key -> seq of its last record (the log's CAS versions)

    def emit(type_: str, body: dict[str, Any], agent: str, **kw: Any) -> int:
        nonlocal ts
        seq = len(out) + 1
        if agent == T.SYNTH_AGENT:  # as the worker stamps its batches (authz)
            body = {**body, "lease": versions.get(T.SYNTH_AGENT, 0)}
        elif type_ in (T.FACT_UPDATED, T.FACT_RETRACTED):  # as the board does
            body = {**body, "base": versions.get(kw["key"], 0)}
        out.append(Event(agent=agent, type=type_, body=body, seq=seq, ts=ts, swarm="t", **kw))
        if kw.get("key") is not None:
            versions[kw["key"]] = seq
        return seq

    def fid(i: int) -> str:
        return fids[i % len(fids)] if fids else "f0"

    for kind, i, j, k, x in ops:
        ts += x * 900.0  # up to 15 minutes, sometimes slightly backwards
        agent, session = AGENTS[i % 4], SESSIONS[j % 3]
        if kind in (0, 1):
            body: dict[str, Any] = {"content": f"m{i}{j}", "importance": round(max(x, 0), 3)}
            if k == 1:
                body.update(subject=f"subj{j % 2}", value=str(i))
            if k == 2:
                body.update(ttl_s=3600.0 * (1 + i), embedding=[x, 1.0, -0.5], embedder="e")
            seq = emit(T.MEMORY_SHARED, body, agent, session=session, thread=f"t{k}")
            pending.append(seq)
            raws.append(seq)
        elif kind in (2, 3) and pending and (kind == 2 or not fids):
            raw = pending.pop(i % len(pending))
            related = [[fid(j), round(0.6 + x * 0.4, 3)]] if fids else []
            emit(
                T.FACT_CREATED,
                {"evidence": raw, "signature": f"s{raw}", "related": related},
                T.SYNTH_AGENT,
                key=f"f{raw}",
            )
            fids.append(f"f{raw}")
        elif kind == 3 and pending and fids:
            raw = pending.pop(i % len(pending))
            body = {"evidence": raw, "kind": "near" if k else "exact", "similarity": 0.95}
            emit(T.FACT_CORROBORATED, body, T.SYNTH_AGENT, key=fid(j))
        elif kind == 4:
            emit(T.MEMORY_REINFORCED, {"target": fid(j)}, agent)
        elif kind == 5:
            hits = [fid(j), fid(j + 1), fid(j + k)]
            emit(T.MEMORY_RECALLED, {"query": "q", "hits": hits}, agent, session=session)
        elif kind == 6:
            emit(T.MEMORY_FEEDBACK, {"target": fid(j), "usefulness": (x - 0.3) * 4}, agent)
        elif kind == 7:
            ts += 3 * 3600.0 if k == 3 else 0.0
            emit(T.POOL_TICK, {}, "clock")
        elif kind == 8:
            emit(T.SESSION_ENDED, {}, agent, session=session)
        elif kind == 9 and fids:
            emit(T.FACT_CONTESTED, {"subject": "x", "rivals": [fid(j + 1)]}, T.SYNTH_AGENT,
                 key=fid(j))  # fmt: skip
        elif kind == 10 and fids:
            body = {"subject": "x", "winner": fid(j), "losers": [fid(j + 1)], "reason": "r"}
            emit(T.FACT_RESOLVED, body, T.SYNTH_AGENT, key=fid(j))
        elif kind == 11:
            key = fid(j) if k else f"board{i}"
            body = {"content": f"board {i}", "value": str(j), "evidence": [max(1, len(out))]}
            emit(T.FACT_UPDATED, body, agent, key=key, causes=[max(1, len(out) - 1)])
        elif kind == 12 and fids:
            emit(T.FACT_RETRACTED, {"reason": "no"}, agent, key=fid(j))
        elif kind == 13:
            emit(T.BOARD_CONFLICT, {"target": fid(j), "expected": 1, "actual": 2}, agent)
        elif kind == 14:
            emit(T.SYNTH_PROGRESS, {"upto": len(out)}, T.SYNTH_AGENT, key=T.SYNTH_AGENT)
        elif kind == 15:
            if i == 7:
                emit(T.IDENTITY_FORGOTTEN, {"agent": AGENTS[k]}, "operator")
            elif i == 8:  # not an operator: stored, refused by the fold
                emit(T.IDENTITY_FORGOTTEN, {"agent": AGENTS[k]}, "mallory")
            else:
                cite = [raws[j % len(raws)]] if raws else [max(1, len(out))]
                emit("custom.note", {"n": i}, agent, causes=cite)
    return out


@pytest.mark.slow
@pytest.mark.soak  # a minute or more
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, cut=st.floats(0.0, 1.0))
def test_checkpoint_anywhere_gives_same_digest(ops: list[Op], cut: float) -> None:
    events = build(ops)
    full = fold(events, SwarmState(CFG))
    k = int(cut * len(events))
    head = fold(events[:k], SwarmState(CFG))
    blob = head.to_bytes()
    resumed = SwarmState.from_bytes(blob)
    assert resumed.to_bytes() == blob
    assert resumed.digest() == head.digest()
    fold(events[k:], resumed)
    assert resumed.digest() == full.digest()
    assert resumed.stats() == full.stats()
    assert not full.metrics.ignored.get("malformed")
    # version invariant: a live fact's version is the seq of its last keyed event
    last: dict[str, int] = {}
    for e in events:
        if e.key is not None and e.seq is not None:
            last[e.key] = e.seq
    for f in full.facts.values():
        assert f.version == last[f.id]
        assert 0.0 < f.strength <= 1.0
        assert f.tier in T.TIERS and f.status in T.STATUSES


@pytest.mark.slow
@pytest.mark.soak  # a minute or more
@settings(max_examples=60, deadline=None)
@given(ops=OPS)
def test_stored_encoding_and_copy_do_not_change_the_digest(ops: list[Op]) -> None:
    events = build(ops)
    direct = fold(events, SwarmState(CFG))
    stored = [decode(encode(e))[0] for e in events]
    assert fold(stored, SwarmState(CFG)).digest() == direct.digest()
    twin = direct.copy()
    assert twin.digest() == direct.digest()
    tail = Event(agent="clock", type=T.POOL_TICK, seq=len(events) + 1, ts=2e6, swarm="t")
    apply(twin, tail)
    assert twin.digest() != direct.digest() or not events
    assert fold(events, SwarmState(CFG)).digest() == direct.digest()


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(ops=OPS, sizes=st.lists(st.integers(1, 40), min_size=1, max_size=8))
def test_folding_chunks_equals_folding_one_by_one(ops: list[Op], sizes: list[int]) -> None:
    """``fold_dicts`` of lists (the chunk path: counters by C-level maps after the
    handlers) gives exactly the state of ``apply`` per event, overlaps skipped."""
    events = build(ops)
    one = fold(events, SwarmState(CFG))
    dicts = [decode(encode(e))[0].envelope for e in events]
    chunked = SwarmState(CFG)
    i = 0
    k = 0
    while i < len(dicts):
        n = sizes[k % len(sizes)]
        k += 1
        start = max(0, i - (n // 3 if k % 3 == 0 else 0))  # sometimes re-send an overlap
        fold_dicts(chunked, [dict(d) for d in dicts[start : i + n]])
        i += n
    assert chunked.digest() == one.digest()
    for name in ("events_total", "by_type", "by_agent", "first_ts"):
        assert getattr(chunked.metrics, name) == getattr(one.metrics, name), name
    assert list(chunked.metrics.by_agent) == list(one.metrics.by_agent)  # same order
    assert (chunked.last_seq, chunked.last_ts) == (one.last_seq, one.last_ts)


def test_chunk_with_a_forgotten_identity_equals_one_by_one() -> None:
    ops: list[Op] = [(0, 0, 0, 0, 0.1), (0, 1, 0, 0, 0.1), (15, 7, 0, 0, 0.1), (0, 0, 1, 0, 0.1)]
    events = build(ops)
    assert events[2].type == T.IDENTITY_FORGOTTEN and events[2].body == {"agent": "a"}
    one = fold(events, SwarmState(CFG))
    chunked = fold_dicts(SwarmState(CFG), [decode(encode(e))[0].envelope for e in events])
    assert chunked.metrics.by_agent == one.metrics.by_agent == {"b": 1, "operator": 1, "a": 1}
    assert chunked.digest() == one.digest()
    # an agent forgetting itself: its own event is counted, then dropped with the rest
    selfish = Event(
        agent="b", type=T.IDENTITY_FORGOTTEN, body={"agent": "b"}, seq=5, ts=2e6, swarm="t"
    )
    apply(one, selfish)
    fold_dicts(chunked, [decode(encode(selfish))[0].envelope])
    assert chunked.metrics.by_agent == one.metrics.by_agent == {"operator": 1, "a": 1}
    assert chunked.digest() == one.digest()


def test_digest_depends_on_config() -> None:
    assert SwarmState(CFG).digest() != SwarmState().digest()
    assert SynthConfig().digest() == SynthConfig().digest() != CFG.digest()
