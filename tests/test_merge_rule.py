"""The merge-rule work: statements that differ in a slot never merge, under either embedder; the
contradictory ones become contested rivals (``contested_with`` both ways); rewordings
with synonyms still merge under minilm. Every pair goes through the real synthesizer."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from synthesizer.config import SynthConfig
from synthesizer.merge.lexicon import lexicon
from synthesizer.merge.rule import compare
from synthesizer.state import SwarmState, fold
from synthesizer.swarm import Swarm

if lexicon() is None and not os.environ.get("CI"):  # shipped: synthesizer/merge/wordnet
    pytest.skip("the shipped WordNet copy is damaged (see the warning)", allow_module_level=True)

C, D = "contradiction", "different"
ISSUE_PAIRS = [  # named in the merge-rule work
    ("The build is green on main.", "The build is red on main.", C),
    ("Feature flags are on by default", "Feature flags are off by default", C),
    ("The shared volume is mounted read-only", "The shared volume is mounted read-write", C),
    ("The v1 API is deprecated", "The v1 API is still supported", C),
    ("The admin API is served over HTTPS", "The admin API is served over plain HTTP", C),
    ("The upload queue is full", "The upload queue is empty", C),
    ("The integration suite is stable", "The integration suite is flaky", C),
    ("Logging is verbose in production", "Logging is quiet in production", C),
    ("The cache is warm after a deploy", "The cache is cold after a deploy", C),
    ("Batching increases throughput", "Batching reduces throughput", C),
    ("Passwords are hashed with MD5", "Passwords are hashed with bcrypt", C),
    ("The orders service stores its data in PostgreSQL",
     "The orders service stores its data in MongoDB", C),
    ("Alice owns the billing service", "Bob owns the billing service", C),
    ("Consumer lag is above ten thousand messages",
     "Producer lag is above ten thousand messages", D),
    ("Reporting queries run on the read replica", "Reporting queries run on the primary", C),
    ("The memory leak is in the client library", "The memory leak is in the server", C),
    ("The cache TTL is 1 minute", "The cache TTL is 5 minutes", C),
]  # fmt: skip
OWN_PAIRS = [  # new words: in none of the labelled sets
    ("The garden sprinklers run at dawn", "The garden sprinklers run at dusk", C),
    ("The vault door is opened with a keycard", "The vault door is opened with a fingerprint", C),
    ("The river ferry is crowded in summer", "The river ferry is crowded in winter", C),
    ("Invoice totals are rounded up", "Invoice totals are rounded down", C),
    ("The choir rehearses weekly", "The choir rehearses monthly", C),
    ("The telescope mirror is concave", "The telescope mirror is convex", C),
    ("The bakery oven burns gas", "The bakery oven burns wood", C),
    ("The museum is crowded on weekdays", "The museum is crowded on weekends", C),
    ("The marathon route is flat", "The marathon route is hilly", C),
    ("The submarine hull is made of titanium", "The submarine hull is made of steel", C),
    ("The lighthouse lamp is bright", "The lighthouse lamp is dim", C),
    ("The quarterly budget was approved", "The quarterly budget was rejected", C),
    ("The wool sweater shrinks in hot water", "The wool sweater shrinks in cold water", C),
    ("The orchestra tunes to the oboe", "The orchestra tunes to the piano", C),
    ("The north tower elevator is broken", "The south tower elevator is broken", D),
    ("The violin teacher arrives late", "The cello teacher arrives late", D),
    ("The left engine overheats on takeoff", "The right engine overheats on takeoff", D),
    ("Morning commuters avoid the tunnel", "Evening commuters avoid the tunnel", D),
    ("The apple harvest is late this year", "The grape harvest is late this year", D),
    ("Ticket scanners at gate B freeze", "Ticket scanners at gate C freeze", D),
    # round 3 (tests/data/quality_testset3.jsonl): two motions that share only the name of
    # their hypernym ("move", in two senses) merged under minilm before
    ("The comet is approaching the sun", "The comet is receding from the sun", C),
]
# "weekdays" / "weekends" are flagged through WordNet's meronymy: two parts of one whole
# (a week). "Alice owns" / "Bob owns" is flagged: two holders of one definite thing
# (``rule._one_holder``).
SYNONYMS = [
    ("The dashboard shows stale numbers", "The dashboard shows outdated numbers"),
    ("The scheduler skips jobs on holidays", "The scheduler ignores jobs on holidays"),
    ("Customers cannot cancel their subscription online",
     "Users cannot cancel their subscription online"),
]  # fmt: skip


def _pair(root: Path, embedder: str, a: str, b: str) -> Swarm:
    sw = Swarm.open(root, config=SynthConfig(embedder=embedder))
    sw.agent("alpha").share(a)
    sw.agent("beta").share(b)
    sw.synthesize()
    return sw


@pytest.mark.parametrize("embedder", ["hash", "minilm"])
@pytest.mark.parametrize(("a", "b", "kind"), ISSUE_PAIRS + OWN_PAIRS)
def test_slot_differences_never_merge_and_contradictions_are_contested(
    tmp_path: Path, embedder: str, a: str, b: str, kind: str
) -> None:
    with _pair(tmp_path / "s", embedder, a, b) as sw:
        facts = sw.state().facts
        assert len(facts) == 2, f"merged under {embedder}: {a!r} / {b!r}"
        x, y = facts.values()
        if kind == C:
            assert x.contested_with == [y.id] and y.contested_with == [x.id]
            assert x.status == y.status == "contested"  # one agent each: a tie
            contests = [e for e in sw.log.read() if e.type == "fact.contested"]
            assert [(e.key, e.body["rivals"]) for e in contests] == [(y.id, [x.id])]
        else:
            assert x.contested_with == y.contested_with == []
            assert x.status == y.status == "active"


@pytest.mark.parametrize(("a", "b"), SYNONYMS)
def test_synonym_rewordings_still_merge_under_minilm(tmp_path: Path, a: str, b: str) -> None:
    with _pair(tmp_path / "s", "minilm", a, b) as sw:
        facts = sw.state().facts
        assert len(facts) == 1
        (f,) = facts.values()
        assert len(f.agents) == 2 and f.content == a


def test_the_rule_is_symmetric_on_every_pair() -> None:
    for a, b, _ in ISSUE_PAIRS + OWN_PAIRS:
        assert compare(a, b) == compare(b, a)
    for a, b in SYNONYMS:
        assert compare(a, b) == compare(b, a)


def test_resolution_follows_evidence_and_is_reversible(tmp_path: Path) -> None:
    green, red = "The build is green on main.", "The build is red on main."
    with Swarm.open(tmp_path / "s") as sw:
        g = sw.agent("a1").share(green).seq
        r = sw.agent("a2").share(red).seq
        sw.synthesize()
        fg, fr = f"f{g}", f"f{r}"
        st = sw.state()
        assert st.facts[fg].status == st.facts[fr].status == "contested"
        sw.agent("a3").share(red)  # a second agent: red wins, green superseded
        sw.synthesize()
        st = sw.state()
        assert (st.facts[fr].status, st.facts[fg].status) == ("active", "superseded")
        assert st.facts[fr].contested_with == [fg] and st.facts[fg].contested_with == [fr]
        sw.agent("a4").share(green)  # 2 vs 2: contested again
        sw.synthesize()
        st = sw.state()
        assert st.facts[fr].status == st.facts[fg].status == "contested"
        sw.agent("a5").share("the build is green on main")  # 3 vs 2: green wins
        sw.synthesize()
        st = sw.state()
        assert (st.facts[fg].status, st.facts[fr].status) == ("active", "superseded")
        # the decisions are in the log: a fold from the start is the same state
        events = list(sw.log.read())
        assert fold(events, SwarmState(sw.config)).digest() == st.digest()
        sw.checkpoint()
        assert sw.state(at_seq=len(events)).digest() == st.digest()


def test_different_things_in_one_batch_are_neither_merged_nor_flagged(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s", config=SynthConfig(embedder="minilm")) as sw:
        sw.agent("a1").share("Consumer lag is above ten thousand messages")
        sw.agent("a2").share("Producer lag is above ten thousand messages")
        sw.agent("a3").share("Consumer lag is above 10000 messages")  # the same as the first
        sw.synthesize()
        facts = sw.state().facts
        assert len(facts) == 2
        assert all(f.status == "active" and not f.contested_with for f in facts.values())
        assert sorted(len(f.agents) for f in facts.values()) == [1, 2]


def test_the_rival_is_shown_by_recall_board_mcp_and_dashboard(tmp_path: Path) -> None:
    from dashboards.mcp.tools import MemoryTools
    from synthesizer.metrics import contests
    from tests.cli_util import run_cli

    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        a = f"f{sw.agent('a1').share('The cache TTL is 1 minute').seq}"
        b = f"f{sw.agent('a2').share('The cache TTL is 5 minutes').seq}"
        sw.synthesize()
        hits = {h.fact.id: h for h in sw.agent("a3").recall("cache TTL", 5)}
        assert hits[a].fact.contested_with == [b] and f"contested_with=['{b}']" in repr(hits[a])
        tools = MemoryTools(sw, agent="a3")
        assert tools.get_fact(a).contested_with == [b]
        found = tools.search(None, "cache TTL", 5, None, None, None).hits
        assert {h.fact_id: h.contested_with for h in found} == {a: [b], b: [a]}
        (row,) = contests(sw.state())
        assert [c.id for c in row.claims] == [a, b] and "5 minutes" in row.claims[1].value
    shown = run_cli("board", a, "--root", str(root))
    assert shown.code == 0 and f"contested with: {b}" in shown.out
    listed = run_cli("search", "cache TTL", "--root", str(root))
    assert f"[contested with {a}]" in listed.out


def test_without_wordnet_the_rule_keeps_apart_and_still_merges_rewordings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Degrades to the safe side: no synonyms known, no slot difference ever merges."""
    from synthesizer.merge import lexicon as lexmod
    from synthesizer.merge import rule, statement

    def clear() -> None:
        for f in (
            lexmod.lexicon,
            rule.parse,
            rule.relation,
            statement.lemma,
            rule._bag,
        ):
            f.cache_clear()

    monkeypatch.setattr(lexmod, "wordnet_dir", lambda: None)
    clear()
    try:
        assert lexmod.lexicon() is None
        for a, b, _ in ISSUE_PAIRS + OWN_PAIRS:
            assert compare(a, b, lambda x, y: 1.0).kind != "same", (a, b)
        for a, b in SYNONYMS:
            assert compare(a, b, lambda x, y: 1.0).kind != "same"
        assert compare("The queue holds 10,000 messages", "the queue holds ten thousand messages.")
        assert compare("Refunds take 3 days", "refunds take three days").kind == "same"
    finally:
        monkeypatch.undo()
        clear()


def test_no_slot_pair_merges_even_when_the_embedder_calls_every_span_the_same() -> None:
    """Any embedder: cosine on the spans only confirms what the lexicon allows."""
    for a, b, _ in ISSUE_PAIRS + OWN_PAIRS:
        assert compare(a, b, lambda x, y: 1.0).kind != "same", (a, b)


SUBJECTS_APART = [  # the whole subject differs, and both can be true: never flagged
    ("Priya owns a vintage bicycle", "Marco owns a vintage bicycle"),  # not one thing
    ("Hannah likes the new cafeteria", "Tomas likes the new cafeteria"),  # not holding
    ("The north gate closes at midnight", "The south gate closes at midnight"),  # modifier
    ("Alice is on call this week", "Bob is on call this week"),
    ("Consumer lag is above ten thousand messages", "Producer lag is above ten thousand messages"),
]


def test_two_holders_of_one_definite_thing_contradict_and_other_subjects_do_not() -> None:
    """A differing subject is another thing, except for a relation one holder has (WordNet:
    possessing or controlling) over a definite object: then both cannot be true."""
    alice = compare("Alice owns the billing service", "Bob owns the billing service")
    assert (alice.kind, alice.reason) == ("contradicts", "another holder")
    assert compare("Kenji manages the office", "Fatima manages the office") == alice
    assert compare("The scheduler owns the job table", "The importer owns the job table") == alice
    for a, b in SUBJECTS_APART:
        assert compare(a, b, lambda x, y: 1.0).kind in ("different", "unsure"), (a, b)


def _minilm_sim() -> Callable[[str, str], float]:
    from synthesizer.search.embed import embedder_for

    emb = embedder_for("minilm")
    return lambda x, y: float(emb.embed([x])[0] @ emb.embed([y])[0])


REWORDED = [  # the merge-rule work round 2: rewordings the rule reads as such
    # a subject's words in another order, a common word said again elided
    ("Weekend traffic is 30 percent lower than weekday traffic",
     "Traffic on weekends is 30 percent lower than on weekdays"),
    ("Mobile sessions are twice as long as desktop sessions",
     "Sessions on mobile are twice as long as on desktop"),
    # "on" before a determiner is a preposition, not the particle of "build on"
    ("Builds on the main branch take 25 minutes", "Builds of the main branch take 25 minutes"),
    # "while" is a conjunction like "when"
    ("The payment service retries when the database is under load",
     "The payment service retries while the database is under load"),
]  # fmt: skip
NOT_REWORDED = [  # the same shapes with a slot: never "same"
    ("Weekend traffic is 30 percent lower than weekday traffic",
     "Traffic on weekends is 40 percent lower than on weekdays"),
    ("Mobile sessions are twice as long as desktop sessions",
     "Desktop sessions are twice as long as mobile sessions"),
    ("Builds on the main branch take 25 minutes", "Builds of the release branch take 25 minutes"),
    ("The ingestion pipeline processes 4000 events per second",
     "The ingestion pipeline drops 4000 events per second"),
]  # fmt: skip


def test_rewordings_of_round_two_merge_and_their_slot_variants_do_not() -> None:
    sim = _minilm_sim()
    for a, b in REWORDED:
        assert compare(a, b, sim).kind == "same", (a, b, compare(a, b, sim))
    for a, b in NOT_REWORDED:
        assert compare(a, b, sim).kind != "same", (a, b)
        assert compare(a, b, lambda x, y: 1.0).kind != "same", (a, b)


ROUND_FOUR = [  # session 10: unseen sentences (tests/data/quality_testset4.jsonl) that merged
    # a capital letter inside a sentence is a label, not the article: the roles swapped
    ("Service A calls service B", "Service B calls service A"),
    # a word for a broader or narrower one that the embedder reads apart: its frame (one
    # shared word either side) read alike is no evidence, the shared words carry it
    ("The patch fixes the memory leak", "The patch introduces the memory leak"),
    ("Dana is the author of the report", "Dana is the reviewer of the report"),
    ("The ingestion pipeline processes 4000 events per second",
     "The ingestion pipeline handles 4000 events per second"),  # (merged before: now unsure)
    # an active beside a passive, the nouns in one order: the roles swapped
    ("The courier paid the client", "The courier was paid by the client"),
    ("Alice hired Bob", "Alice was hired by Bob"),
    ("The editor rejected the author", "The editor was rejected by the author"),
]  # fmt: skip
PASSIVES = [  # a passive beside an active, read agent first: the same statement
    ("The client paid the courier", "The courier was paid by the client"),
    ("The storm damaged the pier last night", "The pier was damaged by the storm last night"),
    ("The chemist diluted the acid", "The acid was diluted by the chemist"),
    ("The client did not pay the courier", "The courier was not paid by the client"),
    ("The report is due by Friday", "The report is due on Friday"),  # "by": not an agent
]


@pytest.mark.parametrize("embedder", ["hash", "minilm"])
def test_swapped_roles_and_broader_words_never_merge(tmp_path: Path, embedder: str) -> None:
    """Through the synthesizer under both embedders none of round four's pairs is one
    fact; the swapped roles are not one even under an embedder that calls every span the
    same (a broader or narrower word is the embedder's to judge, as a synonym is)."""
    for i, (a, b) in enumerate(ROUND_FOUR):
        with _pair(tmp_path / f"s{i}", embedder, a, b) as sw:
            assert len(sw.state().facts) == 2, f"merged under {embedder}: {a!r} / {b!r}"
        assert compare(a, b) == compare(b, a)
        if i == 0 or i > 3:
            assert compare(a, b, lambda x, y: 1.0).kind != "same", (a, b)


def test_a_passive_beside_an_active_is_read_agent_first() -> None:
    sim = _minilm_sim()
    for a, b in PASSIVES:
        assert compare(a, b).kind == compare(a, b, sim).kind == "same", (a, b)
        assert compare(a, b) == compare(b, a)
    flipped = compare("The client paid the courier", "The client was not paid by the courier")
    assert flipped.kind != "same"
    named = compare("The invoice was paid by Alice", "The invoice was paid by Bob")
    assert named.kind == "contradicts"  # both passive: compared as written


HEDGED = [  # a hedge (wordclass.HEDGES) added or swapped for another class: another claim
    ("The team seldom deploys on Fridays", "The team deploys on Fridays"),
    ("The disk is almost full", "The disk is full"),
    ("Users may delete their data", "Users must delete their data"),
    ("All tests pass on main", "Some tests pass on main"),
    ("The bug was partially fixed", "The bug was fixed"),
    ("The job can run in parallel", "The job runs in parallel"),
    ("The release will probably slip", "The release will slip"),
    ("The suspect allegedly stole the car", "The suspect stole the car"),
]
SCALED = [  # two hedges of one scale leaning opposite ways: both cannot be true
    ("The build rarely fails", "The build often fails"),
    ("Most customers prefer the annual plan", "Few customers prefer the annual plan"),
    ("The queue holds at most 100 messages", "The queue holds at least 100 messages"),
    ("The outage happened last week", "The outage happened next week"),
    ("The release is likely to slip", "The release is unlikely to slip"),
]
HEDGES_ALIKE = [  # one class, or no hedge at all: the same statement
    ("A few tenants complained", "Some tenants complained"),
    ("The store may close early", "The store might close early"),
    ("The service will restart at midnight", "The service restarts at midnight"),
    ("Subscribers cannot change their address", "Subscribers are unable to change their address"),
    ("Checkpoints are saved after every epoch", "Checkpoints are saved after each epoch"),
    ("The outage happened last week", "The outage happened the previous week"),
    ("The release is likely to slip", "The release will probably slip"),
    ("The battery will last ten hours", "The battery lasts ten hours"),  # "last": a verb
    ("The vendor will possibly raise prices", "The vendor may raise prices"),
]


@pytest.mark.parametrize("embedder", ["hash", "minilm"])
def test_a_hedge_added_or_changed_never_merges(tmp_path: Path, embedder: str) -> None:
    """Through the synthesizer under both embedders, and by the rule under an embedder
    that calls every span the same."""
    for i, (a, b) in enumerate(HEDGED + SCALED):
        with _pair(tmp_path / f"s{i}", embedder, a, b) as sw:
            assert len(sw.state().facts) == 2, f"merged under {embedder}: {a!r} / {b!r}"
        assert compare(a, b, lambda x, y: 1.0).kind != "same", (a, b)


def test_hedges_of_one_scale_leaning_apart_contradict_and_one_class_is_the_same() -> None:
    for a, b in HEDGED:
        assert compare(a, b).kind == "different", (a, b)
        assert compare(a, b) == compare(b, a)
    for a, b in SCALED:
        assert compare(a, b).kind == "contradicts", (a, b)
    for a, b in HEDGES_ALIKE:
        assert compare(a, b).kind == "same", (a, b, compare(a, b))
    assert compare("The job can run in parallel", "The job cannot run in parallel").kind == (
        "contradicts"
    )


DIRECTED = [  # the same words, the ends of a path swapped or another end: never the same
    ("The flight goes from Paris to Rome", "The flight goes from Rome to Paris", C),
    ("The money moved from savings to checking", "The money moved from checking to savings", C),
    ("The file was copied from the server to the laptop",
     "The file was copied from the laptop to the server", C),
    ("The tenant moved to Lisbon in May", "The tenant moved from Lisbon in May", C),
    ("The train from Oslo arrives at noon", "The train to Oslo arrives at noon", D),
    ("Prices rose to 5 percent", "Prices rose by 5 percent", C),
]  # fmt: skip
PATHS_ALIKE = [  # the same path: the same statement
    ("The courier drove from Bremen to Hamburg", "The courier drove to Hamburg from Bremen"),
    ("The pipeline copies logs into the archive", "The pipeline copies logs to the archive"),
    (
        "On Monday the funds were sent to the charity",
        "The funds were sent to the charity on Monday",
    ),
    ("The team plans to migrate the wiki", "The team plans to migrate its wiki"),  # infinitive
]


@pytest.mark.parametrize("embedder", ["hash", "minilm"])
def test_a_path_reversed_or_another_end_never_merges(tmp_path: Path, embedder: str) -> None:
    for i, (a, b, _) in enumerate(DIRECTED):
        with _pair(tmp_path / f"s{i}", embedder, a, b) as sw:
            assert len(sw.state().facts) == 2, f"merged under {embedder}: {a!r} / {b!r}"


def test_the_ends_of_a_path_are_compared_and_a_verbs_own_preposition_is_not() -> None:
    for a, b, kind in DIRECTED:
        v = compare(a, b, lambda x, y: 1.0)
        assert v.kind == ("contradicts" if kind == C else "different"), (a, b, v)
        assert compare(a, b) == compare(b, a)
    for a, b in PATHS_ALIKE:
        assert compare(a, b).kind == "same", (a, b, compare(a, b))
    # a differing word decides, not the preposition that goes with it
    connected = compare(
        "The pump is connected to tank one", "The pump is disconnected from tank one"
    )
    assert connected.kind != "same"
    assert compare("The depot is close to the motorway", "The depot is near the motorway").kind == (
        compare("The depot is close to the motorway", "The depot is near the motorway", None).kind
    )


def test_a_span_read_word_for_word_is_decided_by_its_one_differing_pair() -> None:
    """Spans of as many words, all pairs the same or synonyms but one: that one pair is
    judged as one word for one word, not the span as a paraphrase the embedder reads."""
    sim = _minilm_sim()
    a = "The school teaches evening classes"
    assert compare(a, "The school teaches weekend courses", sim).kind == "contradicts"
    assert compare(a, "The school teaches weekend courses", lambda x, y: 1.0).kind != "same"
    assert compare(a, "The school teaches evening courses", sim).kind == "same"


# Under an embedder that calls every span the same, a word WordNet files as a broader or
# narrower one is a rewording (as under any embedder that reads the two words alike):
# the only keep-apart pairs of the labelled sets that merge there.
EMBEDDER_DECIDED = {
    ("The patch fixes the memory leak", "The patch introduces the memory leak"),
    ("Dana is the author of the report", "Dana is the reviewer of the report"),
    ("The choir sings in unison", "The choir sings in harmony"),
    ("The committee postponed the vote", "The committee held the vote"),
}


def test_keep_apart_pairs_stay_apart_under_an_embedder_that_calls_all_the_same() -> None:
    """Every keep-apart pair of every labelled set (tests/data/quality_*.jsonl, with the
    probes of session 10), the embedder's cosine 1.0 for every span: only the pairs above
    merge (the code of session 9 merged 49 of these 575)."""
    merged = set()
    for path in sorted((Path(__file__).parent / "data").glob("quality_*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            if "a" not in row or row.get("merge", False):
                continue
            if compare(row["a"], row["b"], lambda x, y: 1.0).kind == "same":
                merged.add((row["a"], row["b"]))
    assert merged == EMBEDDER_DECIDED


def test_not_all_is_some_not_and_a_comparison_has_two_sides() -> None:
    assert compare("Not all servers were patched", "No servers were patched").kind != "same"
    some_not = compare("Not all servers were patched", "Some servers were not patched")
    assert some_not.kind == "same"
    more = compare(
        "The hospital has more nurses than doctors", "The hospital has more doctors than nurses"
    )
    assert more.kind == "contradicts"
    longer = compare("The tunnel is longer than the bridge", "The bridge is longer than the tunnel")
    assert longer.kind == "contradicts"


def test_a_clause_of_time_or_condition_keeps_its_words() -> None:
    """The words after "when", "while", "if", "unless", "until" carry the clause: two
    clauses swapped are another statement, one clause moved whole is the same."""
    swapped = compare("The alarm rings when the door opens", "The door opens when the alarm rings")
    assert (swapped.kind, swapped.reason) == ("different", "clauses swapped")
    moved = compare("When the door opens the alarm rings", "The alarm rings when the door opens")
    assert moved.kind == "same"
    assert compare(
        "The job runs if the cache is warm", "The job runs when the cache is warm"
    ).kind == ("same")
    unless = compare("The job runs if the cache is warm", "The job runs unless the cache is warm")
    assert unless.kind != "same"


def test_a_block_moved_past_a_negation_moves_what_is_denied() -> None:
    a = "The patch was applied to staging but not to production"
    assert compare(a, "The patch was applied to production but not to staging").kind != "same"
    assert compare(a, "The patch was applied to staging but not to production.").kind == "same"
