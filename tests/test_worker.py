"""The synthesizer worker: dedup, provenance, contradictions, leases, bad input."""

from __future__ import annotations

import pytest

from swarmlog import Event, InvalidEvent
from synthesizer.errors import UnknownFact
from synthesizer.swarm import Swarm
from synthesizer.worker.synth import Synthesizer


@pytest.fixture
def swarm(log_target):  # type: ignore[no-untyped-def]
    sw = Swarm(log_target.open())
    yield sw
    sw.close()


def test_exact_duplicates_from_three_agents_become_one_fact(swarm: Swarm) -> None:
    seqs = [
        swarm.agent(a, session="s1").share("The login page crashes on Safari 17").seq
        for a in ("a1", "a2", "a3")
    ]
    swarm.synthesize()
    facts = swarm.state().facts
    assert list(facts) == [f"f{seqs[0]}"]
    f = facts[f"f{seqs[0]}"]
    assert [e.seq for e in f.evidence] == seqs
    assert [e.agent for e in f.evidence] == ["a1", "a2", "a3"]
    assert f.support == 3
    assert swarm.state().metrics.duplicates.get("exact") == 2


def test_paraphrase_merges_and_near_miss_does_not(swarm: Swarm) -> None:
    a, b = swarm.agent("a1"), swarm.agent("a2")
    first = a.share("The API server listens on port 8080").seq
    b.share("The API server is listening on port 8080")  # paraphrase
    c = b.share("The database server listens on port 5432").seq  # same topic, other fact
    swarm.synthesize()
    facts = swarm.state().facts
    assert set(facts) == {f"f{first}", f"f{c}"}
    assert facts[f"f{first}"].support == 2


def test_threshold_is_configurable(log_target) -> None:  # type: ignore[no-untyped-def]
    from synthesizer.config import SynthConfig

    cfg = SynthConfig.model_validate({"synthesizer": {"near_duplicate": 0.999}})
    sw = Swarm.open(log_target.target, config=cfg)
    sw.agent("a1").share("The API server listens on port 8080")
    sw.agent("a2").share("The API server is listening on port 8080")
    sw.synthesize()
    assert len(sw.state().facts) == 2
    sw.close()


def test_duplicate_of_evicted_fact_is_recognised_by_signature(log_target) -> None:  # type: ignore[no-untyped-def]
    from synthesizer.config import SynthConfig

    cfg = SynthConfig.model_validate({"pool": {"decay_rate": 0.5}})
    sw = Swarm.open(log_target.target, config=cfg)
    first = sw.agent("a1").share("Cache keys collide after a deploy").seq
    sw.synthesize()
    for _ in range(5):  # 0.5**4 < 0.1: evicted
        sw.tick()
    assert f"f{first}" not in sw.state().facts
    again = sw.agent("a2").share("cache keys  collide after a deploy!").seq
    sw.synthesize()
    st = sw.state()
    assert f"f{again}" not in st.facts  # not re-created
    assert st.metrics.duplicates.get("exact") == 1
    sw.close()


def test_contradiction_contested_then_superseded_and_flipped_by_evidence(swarm: Swarm) -> None:
    def claim(agent: str, value: str) -> int:
        ev = swarm.agent(agent).share(
            f"The API listens on port {value}", subject="api.port", value=value
        )
        return ev.seq or 0

    s1 = claim("a1", "8080")
    claim("a2", "8080")
    s3 = claim("a3", "3000")
    swarm.synthesize()
    st = swarm.state()
    f8080, f3000 = st.facts[f"f{s1}"], st.facts[f"f{s3}"]
    assert (f8080.status, f3000.status) == ("active", "superseded")
    assert "contested" in [h[1] for h in f3000.history]
    claim("a4", "3000")
    claim("a5", "3000")
    swarm.synthesize()
    st = swarm.state()
    f8080, f3000 = st.facts[f"f{s1}"], st.facts[f"f{s3}"]
    assert (f8080.status, f3000.status) == ("superseded", "active")
    assert f3000.support == 3
    # every step is in the history
    assert [h[1] for h in f8080.history][-1] == "superseded"
    assert "active" in [h[1] for h in f8080.history]
    types = [e.type for e in swarm.log.read() if e.key == f"f{s3}"]
    assert types[0] == "fact.created" and "fact.contested" in types
    assert "fact.resolved" in types


def test_second_worker_stands_by(log_target) -> None:  # type: ignore[no-untyped-def]
    log1 = log_target.open()
    log2 = log_target.open()
    log1.append(Event(agent="a1", type="memory.shared", body={"content": "one"}))
    w1, w2 = Synthesizer(log1, name="w1"), Synthesizer(log2, name="w2")
    w1.catch_up()
    w2.catch_up()
    assert w1.run_once() == 1
    # w2 learns the lease from the log, folding w1's batch first: nothing left to decide
    assert w2.decide_pending() == 0 and not w2.state.pending
    log1.append(Event(agent="a1", type="memory.shared", body={"content": "two"}))
    last = log2.last_seq
    assert w2.run_once() == 0 and w2.standing_by  # w1 holds the lease: w2 writes nothing
    assert log2.last_seq == last
    assert w2.standby_note().startswith("w1 holds the lease since")
    assert w1.run_once() == 1
    created = [e for e in log1.read() if e.type == "fact.created"]
    assert len(created) == 2
    w2.catch_up()
    assert w2.state.digest() == w1.state.digest()


def test_bad_input_is_rejected_and_nothing_appended(swarm: Swarm) -> None:
    a = swarm.agent("a1")
    fid = f"f{a.share('something true').seq}"
    swarm.synthesize()
    before = swarm.log.last_seq
    with pytest.raises(InvalidEvent, match="importance"):
        a.share("x", importance=1.5)
    with pytest.raises(InvalidEvent, match="importance"):
        a.share("x", importance=-0.1)
    with pytest.raises(InvalidEvent, match="finite"):
        a.feedback(fid, float("nan"))
    with pytest.raises(InvalidEvent, match="finite"):
        a.feedback(fid, float("inf"))
    with pytest.raises(UnknownFact, match="f999"):
        a.reinforce("f999")
    with pytest.raises(UnknownFact):
        a.feedback("f999", 0.5)
    with pytest.raises(InvalidEvent, match="dimensions"):
        a.share("vec", embedding=[0.1, 0.2], embedder=swarm.embedder.id)
    a.share("vec", embedding=[0.1, 0.2, 0.3], embedder="mine")
    swarm.synthesize()
    before = swarm.log.last_seq
    with pytest.raises(InvalidEvent, match="dimensions"):
        a.share("vec2", embedding=[0.1, 0.2], embedder="mine")
    with pytest.raises(InvalidEvent, match="dimensions"):
        a.recall("vec2", embedding=[0.1, 0.2], embedder="mine")
    with pytest.raises(InvalidEvent):
        a.share("")
    assert swarm.log.last_seq == before


def test_agent_vectors_never_mix_with_local_ones(swarm: Swarm) -> None:
    a = swarm.agent("a1")
    own = a.share("custom", embedding=[1.0, 0.0, 0.0], embedder="mine").seq
    local = a.share("The cache is cold after deploy").seq
    swarm.synthesize()
    hits = a.recall("anything", embedding=[1.0, 0.0, 0.0], embedder="mine")
    assert [h.fact.id for h in hits] == [f"f{own}"]
    hits = a.recall("cache cold deploy")
    assert [h.fact.id for h in hits] == [f"f{local}"]


def test_recall_logs_hits_and_ranks_by_relevance(swarm: Swarm) -> None:
    a, b = swarm.agent("a1", session="s"), swarm.agent("a2", session="s")
    hi = a.share("Memory leak in the image resizer", importance=0.9).seq
    lo = b.share("Memory leak in the image resizer worker pool", importance=0.1).seq
    b.share("Unrelated: the docs site is slow")
    swarm.synthesize()
    dense = a.recall("memory leak image resizer", limit=2, mode="dense")
    for h in dense:  # dense alone: the cosine weighted by strength and importance
        assert h.relevance == pytest.approx(h.similarity * h.strength * h.fact.importance, rel=1e-5)
    hits = a.recall("memory leak image resizer", limit=2)
    assert [h.fact.id for h in hits][:1] == [f"f{hi}"]
    for h in hits:  # hybrid: the words the query shares add to the cosine
        assert h.relevance > h.similarity * h.strength * h.fact.importance
    last = next(iter(swarm.log.read(swarm.log.last_seq)))
    assert last.type == "memory.recalled" and last.body["hits"] == [h.fact.id for h in hits]
    assert f"f{lo}" in [h.fact.id for h in a.recall("memory leak image resizer", limit=5)]


def test_recall_thread_first_and_filters(swarm: Swarm) -> None:
    t = swarm.agent("a1", thread="t1")
    g = swarm.agent("a2")
    in_thread = t.share("Retry storms hit the payments API").seq
    g.share("Retry storms hit the payments API gateway hard", category="insight")
    swarm.synthesize()
    hits = t.recall("retry storms payments", thread_first=True)
    assert hits and hits[0].fact.id == f"f{in_thread}"
    assert len(hits) <= 3
    only = t.recall("retry storms payments", category="insight")
    assert all(h.fact.category == "insight" for h in only) and only
    with pytest.raises(InvalidEvent):
        t.recall("x", limit=0)
