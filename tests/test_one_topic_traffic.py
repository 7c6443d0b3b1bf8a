"""load_bench's one-topic traffic: one domain's words, rediscoveries in other words, and
many candidates per memory (what makes it a different load from the mixed traffic)."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "bench"))

import _one_topic
import load_bench
import scale_bench

from swarmlog import open_log
from synthesizer.search.embed import embedder_for

OTHER = set(_one_topic.SYNONYMS.values()) | set(_one_topic.FILLERS)


def test_statements_are_one_domain_and_deterministic() -> None:
    assert len(set(_one_topic.VOCAB)) == 60
    a = [_one_topic.statement(random.Random(3)) for _ in range(2)]
    b = [_one_topic.statement(random.Random(3)) for _ in range(2)]
    assert a == b
    rng = random.Random(4)
    for _ in range(500):
        words = _one_topic.statement(rng).split()
        assert 6 <= len(words) <= 12
        assert set(words) <= set(_one_topic.VOCAB)


def test_a_rediscovery_is_the_same_finding_in_other_words() -> None:
    rng = random.Random(5)
    for i in range(300):
        text = _one_topic.prefill(i)
        again = _one_topic.reword(text, rng)
        assert again != text
        words = again.split()
        assert set(words) <= set(_one_topic.VOCAB) | OTHER
        assert set(words) & set(_one_topic.FILLERS)  # a filler word added
        assert not set(words) & set(_one_topic.SYNONYMS)  # each said in the other word
        said = {_one_topic.SYNONYMS.get(w, w) for w in text.split()}
        assert len(said & set(words)) >= len(said) - 1  # one word dropped at most


def test_one_topic_memories_have_many_candidates_and_mixed_ones_few() -> None:
    emb = embedder_for("hash")
    rng = random.Random(6)
    one = np.asarray(emb.embed([_one_topic.statement(rng) for _ in range(1200)]))
    mixed = np.asarray(emb.embed([scale_bench.content(i, rng) for i in range(1200)]))

    def over_floor(v: np.ndarray) -> float:
        """Facts at or above the contest floor per memory, per 1,000 live facts."""
        sims = v[:200] @ v[200:].T  # 200 memories against 1,000 facts
        return float((sims >= 0.55).sum(axis=1).mean())

    # ~1.4 (70 candidates a memory at 50k facts) against ~0.005
    assert over_floor(one) >= 1.0 > 20 * over_floor(mixed)


def test_the_agents_append_one_topic_memories_to_a_real_log(tmp_path: Path) -> None:
    path = tmp_path / "swarm"
    open_log(path).close()
    load_bench.child_agent(str(path), 2, 200.0, 0.2, time.time(), "one-topic")
    log = open_log(path)
    try:
        got = [d["body"]["content"] for b in log.read_batches(1) for d in b]
    finally:
        log.close()
    assert len(got) == 40
    allowed = set(_one_topic.VOCAB) | OTHER
    assert all(set(t.lower().split()) <= allowed for t in got)
    assert any(t.isupper() for t in got)  # an exact repeat, other case
    assert any(set(t.split()) & set(_one_topic.FILLERS) for t in got)  # a rediscovery
