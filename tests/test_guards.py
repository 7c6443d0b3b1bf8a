"""Near-miss guards: different numbers, units, negation, polarity or components never merge,
whichever embedder scored the pair (the merge rule, ``synthesizer.merge.rule``, decides)."""

from __future__ import annotations

import pytest

from synthesizer.config import SynthConfig
from synthesizer.merge.lexicon import lexicon
from synthesizer.merge.rule import parse
from synthesizer.search.embed import HashingEmbedder
from synthesizer.swarm import Swarm
from synthesizer.worker.guards import conflict

NEAR_MISSES = [  # the reason is the merge rule's (the old guards' word lists are gone)
    ("The cache TTL is five minutes", "The cache TTL is five hours", "number"),
    ("The cache TTL is five minutes", "The cache TTL is two minutes", "number"),
    ("The API server listens on port 8080", "The API server listens on port 9090", "number"),
    ("Uploads over 10 MB fail", "Uploads over 10 GB fail", "number in the subject"),
    ("Staging runs Kubernetes 1.29", "Staging runs Kubernetes 1.27", "number"),
    ("The date picker shows the wrong month", "The date picker shows the wrong year", "unit"),
    ("The login test is flaky on CI", "The login test is not flaky on CI", "negation"),
    ("Retries are idempotent", "Retries aren't idempotent", "negation"),
    ("The job starts", "The job fails to start", "negation"),
    ("Weekend traffic is lower than weekday traffic", "Weekend traffic is higher", None),
    ("The CSV parser drops the first line", "The CSV parser drops the last line", "antonym"),
    ("The Redis cluster has three replicas", "The Kafka cluster has three replicas",
     "name in the subject"),
    ("Churn peaks in January", "Churn peaks in March", "name"),
    ("The login test is flaky on CI", "The checkout test is flaky on CI", "word in the subject"),
    ("The payment service times out", "The search service times out", "word in the subject"),
    ("The index is stale when a user is deleted", "The index is stale when an order is deleted",
     "word"),
]  # fmt: skip

SAME = [
    ("The cache TTL is five minutes", "Cached entries expire after 5 minutes"),
    ("The CDN caches assets for 24 hours", "The CDN caches assets for 24h"),
    ("Certificates expire in 14 days", "Certificates expire in two weeks"),
    ("Failover takes under 30 seconds", "Failover takes under half a minute"),
    ("The queue holds 10,000 messages", "The queue holds ten thousand messages"),
    ("Average order value is $42", "Average order value is 42 dollars"),
    ("Conversion fell 8%", "Conversion fell 8 percent"),
    ("The login test is flaky on CI", "The sign-in test passes and fails at random in CI"),
    ("Deploys are blocked on Fridays after 3pm", "Deployments are blocked on Fridays after 3 pm"),
    ("Uploads larger than 10 MB fail", "Uploads larger than 10MB fail"),
    ("The TTL of the cache is five minutes", "The cache TTL is five minutes"),
]


needs_wordnet = pytest.mark.skipif(lexicon() is None, reason="WordNet is not installed")


@needs_wordnet
@pytest.mark.parametrize(("a", "b", "reason"), NEAR_MISSES)
def test_near_misses_are_kept_apart(a: str, b: str, reason: str | None) -> None:
    got = conflict(a, b)
    assert got is not None and (reason is None or got == reason)
    assert conflict(b, a) == got  # symmetric


@needs_wordnet
@pytest.mark.parametrize(("a", "b"), SAME)
def test_paraphrases_pass(a: str, b: str) -> None:
    assert conflict(a, b) is None
    assert conflict(b, a) is None


def test_quantities_in_base_units() -> None:
    def keys(text: str) -> list[str]:
        return [t.key for t in parse(text).toks if t.key.startswith("#")]

    assert keys("expires in 2 weeks") == keys("expires in 14 days")
    assert keys("450ms") == keys("450 milliseconds")
    assert [t.name for t in parse("p99 is 450 ms").toks] == [True, False]
    assert parse("no one may deploy").negated and not parse("we deploy").negated


def _hash_swarm(tmp_path, near: float) -> Swarm:  # type: ignore[no-untyped-def]
    cfg = SynthConfig.model_validate({"synthesizer": {"near_duplicate": near}})
    return Swarm.open(tmp_path / "s", config=cfg, embedder=HashingEmbedder())


def test_guards_hold_with_the_hashing_embedder_at_any_threshold(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Even with the threshold far down, a near-miss is a new fact, not evidence."""
    with _hash_swarm(tmp_path, 0.3) as sw:
        chosen = [NEAR_MISSES[i] for i in (0, 2, 3, 6, 9, 11, 14)]  # distinct first statements
        seqs = [sw.agent(f"a{i}").share(a).seq for i, (a, _, _) in enumerate(chosen)]
        misses = [sw.agent("b").share(b).seq for _, b, _ in chosen]
        sw.synthesize()
        facts = sw.state().facts
        assert {f"f{s}" for s in misses} <= set(facts)
        assert all(len(facts[f"f{s}"].evidence) == 1 for s in seqs + misses)


def test_a_guarded_nearest_does_not_hide_the_next_candidate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    memory = "The cache TTL is five minutes"
    miss, para = "The cache TTL is five hours", "The TTL of the cache is 5 minutes"
    emb = HashingEmbedder()
    v = emb.embed([memory, miss, para])
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) >= 0.5  # the near-miss is nearer
    with _hash_swarm(tmp_path, 0.5) as sw:
        f_miss = sw.agent("a1").share(miss).seq
        f_para = sw.agent("a2").share(para).seq
        sw.synthesize()
        m = sw.agent("a3").share(memory).seq
        sw.synthesize()
        facts = sw.state().facts
        assert set(facts) == {f"f{f_miss}", f"f{f_para}"}
        assert [e.seq for e in facts[f"f{f_para}"].evidence] == [f_para, m]
    # the same inside one batch (the in-batch candidates go through the guards too)
    with _hash_swarm(tmp_path / "one", 0.5) as sw:
        a = sw.agent("a1").share(miss).seq
        b = sw.agent("a2").share(para).seq
        c = sw.agent("a3").share(memory).seq
        sw.synthesize()
        facts = sw.state().facts
        assert set(facts) == {f"f{a}", f"f{b}"}
        assert [e.seq for e in facts[f"f{b}"].evidence] == [b, c]


def test_agent_vectors_are_guarded_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An agent's own vectors (any embedder) cannot merge a near-miss either."""
    with Swarm.open(tmp_path / "s") as sw:
        same = [1.0, 0.0, 0.0, 0.0]
        first = sw.agent("a1").share("The cache TTL is five minutes", embedding=same, embedder="x")
        second = sw.agent("a2").share("The cache TTL is five hours", embedding=same, embedder="x")
        third = sw.agent("a3").share("The cache TTL is 5 minutes", embedding=same, embedder="x")
        sw.synthesize()
        facts = sw.state().facts
        assert set(facts) == {f"f{first.seq}", f"f{second.seq}"}
        assert [e.seq for e in facts[f"f{first.seq}"].evidence] == [first.seq, third.seq]


def test_symmetric_on_every_labelled_pair() -> None:
    """Which statement came first never changes the decision."""
    import json
    from pathlib import Path

    data = Path(__file__).parent / "data"
    files = sorted(data.glob("quality_pairs*.jsonl"))
    assert len(files) == 3
    for f in files:
        for line in f.open():
            p = json.loads(line)
            assert conflict(p["a"], p["b"]) == conflict(p["b"], p["a"]), p


@pytest.mark.parametrize("text", ["auto", "", "None", "null"])
def test_near_duplicate_auto_means_the_embedders(text: str) -> None:
    cfg = SynthConfig.model_validate({"synthesizer": {"near_duplicate": text}})
    assert cfg.synthesizer.near_duplicate is None
    assert SynthConfig().synthesizer.near_duplicate is None
    assert (
        SynthConfig.model_validate(
            {"synthesizer": {"near_duplicate": "0.75"}}
        ).synthesizer.near_duplicate
        == 0.75
    )
