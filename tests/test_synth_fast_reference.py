"""Each speed trick of the fold (``synthesizer/state/_fast.py``) against a plain reference.

The references are the plain code the trick replaces: keyword construction
(``RawMemory.from_shared``, ``facts.new_fact``), ``tiers.access`` on the pydantic config,
comprehensions and loops, ``Fact.to_row`` / ``Fact.from_row``. For generated input the
fast function must give the same result (floats compared exactly: the fold's digest
depends on every bit).
"""

from __future__ import annotations

import ast
import copy
import gc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthesizer.config import SynthConfig
from synthesizer.state import SwarmState, _fast, fold_dicts, tiers
from synthesizer.state.facts import (
    LONG_TERM,
    SHORT_TERM,
    WORKING,
    Evidence,
    Fact,
    RawMemory,
    new_fact,
)

ROOT = Path(__file__).resolve().parent.parent
MALFORMED = (KeyError, TypeError, ValueError, IndexError)
# no time limits: the machine may be busy, and a slow example is not a wrong one
RELAXED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.text("abcxyz-", min_size=1, max_size=6)
maybe_names = st.none() | names
times = st.floats(0.0, 1e9, allow_nan=False)
units = st.floats(-5.0, 5.0, allow_nan=False)


# ---------------------------------------------------------------- raw memories


@st.composite
def shared_envelopes(draw: st.DrawFn) -> dict[str, Any]:
    body: dict[str, Any] = {"content": draw(names)}
    optional: dict[str, st.SearchStrategy[Any]] = {
        "category": names,
        "importance": st.integers(0, 1) | st.floats(0.0, 1.0),
        "subject": names,
        "value": names,
        "thread": names,
        "ttl_s": st.integers(1, 10_000) | st.floats(1.0, 1e6),
        "embedding": st.lists(st.integers(-3, 3) | units, max_size=4),
        "embedder": names,
    }
    for key in draw(st.lists(st.sampled_from(sorted(optional)), unique=True, max_size=4)):
        body[key] = draw(optional[key])
    if draw(st.integers(0, 9)) == 0:
        body.pop("content")  # malformed: both must refuse it
    d: dict[str, Any] = {
        "seq": draw(st.integers(1, 10**9)),
        "agent": draw(names),
        "ts": draw(times),
        "type": "memory.shared",
        "body": body,
    }
    for key in ("session", "thread"):
        value = draw(maybe_names)
        if value is not None or draw(st.booleans()):
            d[key] = value
    return d


@RELAXED
@given(shared_envelopes())
def test_raw_memory_equals_from_shared(d: dict[str, Any]) -> None:
    try:
        want = RawMemory.from_shared(d)
    except MALFORMED as e:
        with pytest.raises(type(e)):
            _fast.raw_memory(d)
        return
    got = _fast.raw_memory(d)
    assert type(got) is RawMemory
    assert got == want
    assert [type(v) for v in got] == [type(v) for v in want]


# ---------------------------------------------------------------- facts


raws = st.builds(
    RawMemory,
    seq=st.integers(1, 10**9),
    agent=names,
    session=maybe_names,
    thread=maybe_names,
    ts=times,
    content=names,
    category=names,
    importance=st.floats(0.0, 1.0),
    subject=maybe_names,
    value=maybe_names,
    ttl_s=st.none() | st.floats(1.0, 1e6),
    embedding=st.none() | st.lists(units, max_size=4),
    embedder=maybe_names,
    origins=st.none()
    | st.lists(
        st.fixed_dictionaries(
            {"swarm": names, "name": names, "fact": names, "seqs": st.lists(st.integers(1, 9))}
        ),
        max_size=2,
    ),
)


def reference_fact_from_raw(
    fid: str, raw: RawMemory, seq: int, ts: float, sig: str | None, strength: float
) -> Fact:
    return new_fact(
        id=fid,
        content=raw.content,
        category=raw.category,
        importance=raw.importance,
        seq=seq,
        ts=ts,
        evidence=[raw.evidence()],
        strength=strength,
        subject=raw.subject,
        value=raw.value,
        expires_at=None if raw.ttl_s is None else raw.ts + raw.ttl_s,
        thread=raw.thread,
        session=raw.session,
        signature=sig,
        embedding=raw.embedding,
        embedder=raw.embedder,
    )


@RELAXED
@given(names, raws, st.integers(1, 10**9), times, maybe_names, st.floats(0.0, 1.0))
def test_fact_from_raw_equals_new_fact(
    fid: str, raw: RawMemory, seq: int, ts: float, sig: str | None, strength: float
) -> None:
    got = _fast.fact_from_raw(fid, raw, seq, ts, sig, strength)
    want = reference_fact_from_raw(fid, raw, seq, ts, sig, strength)
    assert got == want
    assert type(got.evidence[0]) is Evidence
    # fresh containers: the fast path must not share mutable state between facts
    again = _fast.fact_from_raw(fid, raw, seq, ts, sig, strength)
    for name in ("evidence", "cited", "reinforced_by", "history"):
        assert getattr(got, name) is not getattr(again, name)


@st.composite
def facts(draw: st.DrawFn) -> Fact:
    raw = draw(raws)
    f = reference_fact_from_raw(
        "f" + str(raw.seq), raw, raw.seq + 1, raw.ts, draw(maybe_names), draw(units)
    )
    f.tier = draw(st.sampled_from((WORKING, SHORT_TERM, LONG_TERM)))
    f.energy = draw(st.floats(0.0, 10.0))
    f.energy_ts = draw(times)
    f.reinforcements = draw(st.integers(0, 5))
    f.reinforced_by = draw(st.lists(names, max_size=3))
    f.cited = draw(st.lists(st.integers(1, 99), max_size=3))
    f.history = [[1, "contested", None]] if draw(st.booleans()) else []
    f.evidence += [Evidence(q, a, None, 1.0) for q, a in draw(st.lists(st.tuples(
        st.integers(1, 99), names), max_size=2))]  # fmt: skip
    return f


tier_configs = st.builds(
    lambda w, s, lo, a, ps, pl: SynthConfig(
        tiers={
            "working_decay": w,
            "short_decay": s,
            "long_decay": lo,
            "access_energy": a,
            "promote_short": ps,
            "promote_long": ps + pl,
        }
    ),
    st.floats(0.0, 5.0),
    st.floats(0.0, 5.0),
    st.floats(0.0, 5.0),
    st.floats(0.0, 3.0),
    st.floats(0.0, 5.0),
    st.floats(0.0, 5.0),
)


@RELAXED
@given(facts(), st.floats(-1e6, 1e6), tier_configs)
def test_access_equals_tiers_access(f: Fact, dt: float, cfg: SynthConfig) -> None:
    ts = f.energy_ts + dt
    want = copy.deepcopy(f)
    tiers.access(want, ts, cfg.tiers)
    _fast.access(f, ts, _fast.Knobs(cfg))
    assert (f.energy, f.energy_ts, f.tier) == (want.energy, want.energy_ts, want.tier)
    assert f == want


@RELAXED
@given(facts(), st.floats(-1e6, 1e6), tier_configs)
def test_access_reports_promotion(f: Fact, dt: float, cfg: SynthConfig) -> None:
    before = f.tier
    promoted = _fast.access(f, f.energy_ts + dt, _fast.Knobs(cfg))
    assert promoted == (f.tier != before)


@RELAXED
@given(tier_configs)
def test_knobs_mirror_the_config(cfg: SynthConfig) -> None:
    k = _fast.Knobs(cfg)
    sources = {"capacity": cfg.pool, "boost": cfg.pool, "max_strength": cfg.pool}
    for name in _fast.Knobs.__slots__:
        assert getattr(k, name) == getattr(sources.get(name, cfg.tiers), name)


# ---------------------------------------------------------------- the loop's columns


@RELAXED
@given(st.lists(st.dictionaries(st.sampled_from("abc"), st.integers(), min_size=3)))
def test_column_equals_comprehension(dicts: list[dict[str, int]]) -> None:
    assert _fast.column(dicts, "b") == [d["b"] for d in dicts]


@RELAXED
@given(st.dictionaries(names, st.integers(1, 9)), st.lists(names))
def test_tally_equals_counting_loop(start: dict[str, int], keys: list[str]) -> None:
    want = dict(start)
    for k in keys:
        want[k] = want.get(k, 0) + 1
    got = dict(start)
    _fast.tally(got, keys)
    assert list(got.items()) == list(want.items())  # values and first-seen key order


# ---------------------------------------------------------------- checkpoint rows


@settings(RELAXED, max_examples=50)
@given(st.lists(facts(), max_size=4))
def test_fact_rows_round_trip_like_to_row_and_from_row(fs: list[Fact]) -> None:
    rows = _fast.fact_rows(fs)
    assert rows == [f.to_row() for f in fs]
    want = {row[0]: Fact.from_row(row) for row in copy.deepcopy(rows)}
    got = _fast.facts_from_rows(rows)
    assert list(got.items()) == list(want.items())
    assert list(got.values()) == [f for f in {f.id: f for f in fs}.values()]
    assert all(type(e) is Evidence for f in got.values() for e in f.evidence)


def test_paused_gc_changes_nothing_but_the_collector() -> None:
    s = SwarmState()
    fold_dicts(
        s,
        [
            {"seq": i, "ts": float(i), "agent": "a", "type": "memory.shared",
             "body": {"content": f"m{i}"}}
            for i in range(1, 50)
        ],
    )  # fmt: skip
    plain = s.to_dict()
    assert gc.isenabled()
    with _fast.paused_gc():
        assert not gc.isenabled()
        with _fast.paused_gc():  # re-entrant
            assert s.to_dict() == plain
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with _fast.paused_gc():
            pass
        assert not gc.isenabled()  # the prior setting is restored, not forced on
    finally:
        gc.enable()


# ---------------------------------------------------------------- construction sites


def test_facts_are_built_by_keyword_outside_the_fast_path() -> None:
    """No ``Fact(...)`` / ``RawMemory(...)`` with positional arguments in the code: the
    only positional builders are ``_fast`` (checked above) and the serial forms."""
    allowed = {"_fast.py", "facts.py"}
    bad = []
    for pkg in ("synthesizer", "dashboards"):
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name in allowed:
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Name)
                    and node.func.id in ("Fact", "RawMemory")
                    and node.args
                ):
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not bad, "positional construction: " + ", ".join(bad)
