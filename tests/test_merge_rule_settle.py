"""The merge rule's shortcuts decide as the plain rule does (merge-rule work, cost of the rule).

``settle`` (the synthesizer's entry without a judge), ``may_bind`` (a pre-filter on the
token multisets) and ``compare``'s skipping of span embeddings in little-shared pairs are
checked against the plain reference (``compare(..., exhaustive=True)``) on every labelled
pair and on pairs shaped like ``synth_bench``'s; the lexicon's binary search against a
full read of WordNet's index; and a synthesizer pass with the shortcuts against one
without them, event for event.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from swarmlog import Event, open_log
from synthesizer.merge import rule
from synthesizer.merge.lexicon import POS, lexicon
from synthesizer.merge.rule import CONTRADICTS, DIFFERENT, SAME, UNSURE, compare, may_bind, settle
from synthesizer.search.embed import embedder_for
from synthesizer.worker import contest
from synthesizer.worker.synth import Synthesizer

if lexicon() is None and not os.environ.get("CI"):  # shipped: synthesizer/merge/wordnet
    pytest.skip("the shipped WordNet copy is damaged (see the warning)", allow_module_level=True)

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "bench"))
from _corpus import WORDS, sentence  # noqa: E402


def _labelled() -> list[tuple[str, str]]:
    out = []
    for f in sorted(DATA.glob("quality_*.jsonl")):
        for line in f.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if "a" in row and "b" in row:
                out.append((row["a"], row["b"]))
    return out


def _bench_like(n: int) -> list[tuple[str, str]]:
    """synth_bench's memories and near variants of them (a word, a number, a negation)."""
    rng = random.Random(7)
    out = []
    for i in range(n):
        a = sentence(rng, i)
        words = a.split()
        k = rng.randrange(6)
        variants = [
            sentence(rng, i + 1),
            " ".join([*words[:k], rng.choice(WORDS), *words[k + 1 :]]),
            a.replace(f"module {i}", f"module {i + 1}"),
            a.replace("fails", "never fails"),
            " ".join(words[:3] + words[4:]),
        ]
        out += [(a, v) for v in variants]
    return out


def _span_sim() -> Callable[[str, str], float]:
    emb = embedder_for("hash")
    cache: dict[str, np.ndarray] = {}

    def sim(x: str, y: str) -> float:
        for t in (x, y):
            if t not in cache:
                cache[t] = emb.embed([t])[0]
        return float(cache[x] @ cache[y])

    return sim


def test_shortcuts_decide_as_the_plain_rule() -> None:
    sim = _span_sim()
    pairs = _labelled() + _bench_like(300)
    kinds = set()
    for a, b in pairs:
        ref = compare(a, b, sim, exhaustive=True)
        kinds.add(ref.kind)
        assert compare(a, b, sim) == ref, (a, b)
        got = settle(a, b, sim)
        if ref.kind in (SAME, CONTRADICTS):
            assert got == ref, (a, b)
        else:
            assert got.kind in (DIFFERENT, UNSURE), (a, b, ref, got)
        if not may_bind(a, b):
            assert ref.kind not in (SAME, CONTRADICTS), (a, b, ref)
    assert kinds == {SAME, CONTRADICTS, DIFFERENT, UNSURE}  # every verdict was exercised


def _plain_index(root: Path, pos: str) -> dict[str, tuple[str, ...]]:
    """WordNet's index file read whole, as the lexicon did before the binary search."""
    out = {}
    name = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}[pos]
    for line in (root / f"index.{name}").read_text(encoding="utf-8").splitlines():
        if line.startswith(" "):
            continue
        parts = line.split()
        n_syn, n_ptr = int(parts[2]), int(parts[3])
        out[parts[0]] = tuple(f"{pos}:{o}" for o in parts[6 + n_ptr : 6 + n_ptr + n_syn])
    return out


def test_binary_search_finds_what_a_full_read_of_the_index_holds() -> None:
    lex = lexicon()
    assert lex is not None
    rng = random.Random(3)
    for pos in POS:
        full = _plain_index(lex.root, pos)
        lemmas = sorted(full)
        sample = set(lemmas[:50] + lemmas[-50:] + rng.sample(lemmas, 2000))
        for w in sample:
            assert lex._offsets(pos, w) == full[w], (pos, w)
        for miss in ("", "zzzz", "aaaa_", "a b", lemmas[0][:-1] + "~", lemmas[-1] + "z"):
            assert lex._offsets(pos, miss) == full.get(miss), (pos, miss)


def _decisions(root: Path, memories: list[str], plain: bool, mp: pytest.MonkeyPatch) -> list:
    """The synthesizer's events for ``memories``; ``plain``: without the shortcuts."""
    if plain:
        mp.setattr(contest, "settle", lambda a, b, s=None: compare(a, b, s, exhaustive=True))
        mp.setattr(contest, "may_bind", lambda a, b: True)
    try:
        log = open_log(str(root))
        log.append_many(
            [
                Event(agent=f"a{i % 5}", type="memory.shared", body={"content": m})
                for i, m in enumerate(memories)
            ]
        )
        w = Synthesizer(log)
        w.run_once()
        out = [
            (e.type, e.key, {k: v for k, v in e.body.items() if k not in ("worker", "since")})
            for e in log.read()
            if e.type.startswith("fact.")
        ]
        log.close()
        return out
    finally:
        mp.undo()


def test_a_pass_with_the_shortcuts_decides_as_one_without(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = [m for pair in _bench_like(120) for m in pair]
    memories += [m for pair in _labelled()[:200] for m in pair]
    fast = _decisions(tmp_path / "fast", memories, False, monkeypatch)
    plain = _decisions(tmp_path / "plain", memories, True, monkeypatch)
    assert fast == plain
    assert any(t == "fact.contested" for t, _, _ in fast)  # contests were decided
    assert any(t == "fact.corroborated" for t, _, _ in fast)  # and merges
    assert rule.settle is settle  # the patch was undone
