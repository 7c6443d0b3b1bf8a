"""Candidate generation (``synthesizer.worker.candidates``) never changes a decision: the worker's
decisions with it equal those of the former per-fact masks and ``prune.bound_pairs``, on
the quality sets and on a 20k-memory swarm with claims, rewordings and promoted facts."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.config import PoolConfig, SynthConfig, TierConfig
from synthesizer.search import prune
from synthesizer.search.factindex import FactIndex
from synthesizer.state import SwarmState
from synthesizer.worker import candidates, scorer
from synthesizer.worker.synth import Synthesizer

DATA = Path(__file__).parent / "data"
WORDS = ["cache", "proxy", "login", "export", "token", "retry", "locale", "upload", "webhook"]
# low promotion thresholds: corroborated facts become short/long-term (retro candidates)
CONFIG = SynthConfig(
    tiers=TierConfig(promote_short=0.3, promote_long=0.8), pool=PoolConfig(capacity=8000)
)


def _quality_memories() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted(DATA.glob("quality_pairs*.jsonl")):
        pairs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        out += [{"content": p["a"]} for p in pairs]
        out += [{"content": p["b"]} for p in pairs]
    return out


def _swarm_memories(n: int) -> list[dict[str, Any]]:
    rng = random.Random(25)
    out: list[dict[str, Any]] = []
    for i in range(n):
        if out and i % 10 == 3:
            out.append({"content": rng.choice(out)["content"].upper()})  # exact repeat
        elif out and i % 10 == 6:
            out.append({"content": rng.choice(out)["content"] + " again"})  # rewording
        elif i % 20 == 9:
            subject = f"svc{rng.randrange(50)}.port"
            out.append(
                {
                    "content": f"{subject} is {rng.randrange(3)}",
                    "subject": subject,
                    "value": str(rng.randrange(3)),
                }
            )
        else:
            words = " ".join(rng.choices(WORDS, k=4))
            out.append({"content": f"{words} w{rng.randrange(3000)} fails in module {i % 4000}"})
    return out


def _recall(log: Any, stored: list[Event]) -> None:
    """A recall whose hits are every 4th memory's fact: accessed, hence promoted."""
    hits = [f"f{e.seq}" for e in stored[::4]]
    log.append(Event(agent="r", type=T.MEMORY_RECALLED, body={"query": "q", "hits": hits}))


def _decide(
    path: Path, memories: list[dict[str, Any]], chunk: int, check: Callable[[], None] | None
) -> list[tuple[str, str | None, str]]:
    """Share ``memories`` ``chunk`` at a time, deciding after each; the decisions made."""
    log = open_log(path)
    w = Synthesizer(log, config=CONFIG)
    for lo in range(0, len(memories), chunk):
        stored = log.append_many(
            [
                Event(agent=f"a{(lo + i) % 5}", type=T.MEMORY_SHARED, body=body)
                for i, body in enumerate(memories[lo : lo + chunk])
            ]
        )
        w.run_once()
        _recall(log, stored)
        if check is not None:
            check()
    kinds = {T.FACT_CREATED, T.FACT_CORROBORATED, T.FACT_REVIVED, T.FACT_CONTESTED, T.FACT_RESOLVED}
    out = [
        (
            e.type,
            e.key,
            json.dumps({k: v for k, v in e.body.items() if k != "lease"}, sort_keys=True),
        )
        for e in log.read()
        if e.type in kinds
    ]
    w.catch_up()
    retro = int(candidates.scoring_masks(w.index, w.state)[1].sum())
    log.close()
    out.append(("retro facts", None, str(retro)))
    return out


def _reference(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(candidates, "scoring_masks", candidates.reference_masks)
    monkeypatch.setattr(candidates, "bound_pairs", prune.bound_pairs)
    monkeypatch.setattr(scorer, "TOP_K", None)  # every candidate from the floor (test_topk)


def _masks_equal(w_of: Callable[[], tuple[FactIndex, SwarmState]]) -> Callable[[], None]:
    def check() -> None:
        index, state = w_of()
        fast = candidates.scoring_masks(index, state)
        ref = candidates.reference_masks(index, state)
        assert np.array_equal(fast[0], ref[0]) and np.array_equal(fast[1], ref[1])

    return check


@pytest.mark.parametrize(
    ("name", "chunk"),
    # the 20,000-memory swarm folds twice (~270 s on 2 idle cores): its own time limit
    [("quality", 64), pytest.param("swarm", 2000, marks=pytest.mark.timeout(1200))],
)
@pytest.mark.slow
@pytest.mark.soak  # a minute or more
def test_decisions_equal_with_and_without_the_candidate_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, chunk: int
) -> None:
    memories = _quality_memories() if name == "quality" else _swarm_memories(20_000)
    fast = _decide(tmp_path / "fast", memories, chunk, None)
    with monkeypatch.context() as m:
        _reference(m)
        ref = _decide(tmp_path / "ref", memories, chunk, None)
    assert fast == ref
    kinds = {t for t, _, _ in fast}
    assert T.FACT_CORROBORATED in kinds and T.FACT_CREATED in kinds
    if name == "swarm":
        assert T.FACT_CONTESTED in kinds
        assert int(fast[-1][2]) > 0  # some facts were promoted: the retro floor was exercised


@pytest.mark.slow
def test_fast_masks_equal_the_reference_after_every_pass(tmp_path: Path) -> None:
    memories = _swarm_memories(3000)
    log = open_log(tmp_path / "s")
    w = Synthesizer(log, config=CONFIG)
    seen_retro = seen_claim = False
    for lo in range(0, len(memories), 250):
        stored = log.append_many(
            [
                Event(agent=f"a{(lo + i) % 5}", type=T.MEMORY_SHARED, body=body)
                for i, body in enumerate(memories[lo : lo + 250])
            ]
        )
        w.run_once()
        _recall(log, stored)
        w.catch_up()
        fast = candidates.scoring_masks(w.index, w.state)
        ref = candidates.reference_masks(w.index, w.state)
        assert np.array_equal(fast[0], ref[0]) and np.array_equal(fast[1], ref[1])
        seen_claim |= bool(fast[0].any())
        seen_retro |= bool(fast[1].any())
    assert seen_claim and seen_retro
    log.close()


def test_bound_pairs_keeps_every_pair_at_its_floor() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=(400, 64)).astype(np.float32)
    facts = np.vstack([base, base[:200] + 0.1 * rng.normal(size=(200, 64)).astype(np.float32)])
    facts /= np.linalg.norm(facts, axis=1, keepdims=True)
    mem = facts[::7] + 0.05 * rng.normal(size=(len(facts[::7]), 64)).astype(np.float32)
    mem /= np.linalg.norm(mem, axis=1, keepdims=True)
    basis = prune.BoundBasis.fit(facts, k=8)
    floor = np.where(np.arange(len(facts)) % 5 == 0, 0.7, 0.9)
    rows, cols = candidates.bound_pairs(
        basis.augment(mem), basis.augment(facts), floor, raw=(mem, facts)
    )
    got = set(zip(rows.tolist(), cols.tolist(), strict=True))
    exact = mem.astype(np.float64) @ facts.astype(np.float64).T
    want = {(int(r), int(c)) for r, c in zip(*np.nonzero(exact >= floor[None, :]), strict=True)}
    assert want and want <= got
    assert list(zip(rows.tolist(), cols.tolist(), strict=True)) == sorted(got)


def test_verified_keeps_every_pair_at_its_floor_with_canonical_values() -> None:
    rng = np.random.default_rng(5)
    facts = rng.normal(size=(300, 384)).astype(np.float32)
    facts[100:200] = facts[:100] + 0.03 * rng.normal(size=(100, 384)).astype(np.float32)
    facts /= np.linalg.norm(facts, axis=1, keepdims=True)
    mem = facts[::3] + 0.025 * rng.normal(size=(100, 384)).astype(np.float32)
    mem /= np.linalg.norm(mem, axis=1, keepdims=True)
    rows, cols = (a.ravel() for a in np.meshgrid(np.arange(100), np.arange(300), indexing="ij"))
    floor = np.where(np.arange(300) % 4 == 0, 0.7, 0.9)
    exact = prune.exact_cosines(mem, facts, rows, cols)
    r, c, v = candidates.verified(mem, facts, rows, cols, floor)
    want = {
        (int(a), int(b))
        for a, b in zip(rows[exact >= floor[cols]], cols[exact >= floor[cols]], strict=True)
    }
    got = dict(zip(zip(r.tolist(), c.tolist(), strict=True), v.tolist(), strict=True))
    assert want and want <= set(got) and len(got) < len(rows)
    full = dict(zip(zip(rows.tolist(), cols.tolist(), strict=True), exact.tolist(), strict=True))
    assert all(full[p] == x for p, x in got.items())  # the canonical values, bit for bit


def test_bound_pairs_takes_the_float32_product_where_the_bound_does_not_prune(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A low floor the bound cannot prune (k = 2 on 64 dims): the row blocks switch to the
    float32 product (``raw_direct``) and find the same pairs as bound-then-thin, and a
    batch of 3 memories (one wide column block) the same as one of 300."""
    rng = np.random.default_rng(11)
    facts = rng.normal(size=(3000, 64)).astype(np.float32)
    facts[1500:] = facts[:1500] + 0.4 * rng.normal(size=(1500, 64)).astype(np.float32)
    facts /= np.linalg.norm(facts, axis=1, keepdims=True)
    mem = facts[::10] + 0.3 * rng.normal(size=(300, 64)).astype(np.float32)
    mem /= np.linalg.norm(mem, axis=1, keepdims=True)
    basis = prune.BoundBasis.fit(facts, k=2)
    floor = np.where(np.arange(len(facts)) % 3 == 0, 0.3, 0.55)
    left, right = basis.augment(mem), basis.augment(facts)
    switched: list[bool] = []
    real = candidates.raw_direct

    def spy(thinned: int, rows: int) -> bool:
        switched.append(real(thinned, rows))
        return switched[-1]

    monkeypatch.setattr(candidates, "raw_direct", spy)
    got = candidates.bound_pairs(left, right, floor, raw=(mem, facts))
    assert any(switched)
    monkeypatch.setattr(candidates, "raw_direct", lambda thinned, rows: False)
    ref = candidates.bound_pairs(left, right, floor, raw=(mem, facts))
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1])
    exact = mem.astype(np.float64) @ facts.astype(np.float64).T
    want = set(zip(*np.nonzero(exact >= floor[None, :]), strict=True))
    assert want and want <= set(zip(got[0].tolist(), got[1].tolist(), strict=True))
    monkeypatch.setattr(candidates, "raw_direct", real)
    few = candidates.bound_pairs(left[:3], right, floor, raw=(mem[:3], facts))
    keep = got[0] < 3
    assert np.array_equal(few[0], got[0][keep]) and np.array_equal(few[1], got[1][keep])
