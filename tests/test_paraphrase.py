"""Paraphrase evidence (synthesizer/merge/paraphrase.py), each phenomenon both ways: the
rewording is ``same``; the same construction with a slot changed is kept apart (and
``contradicts`` where both cannot be true). Verdicts rest on evidence: a should-merge pair
of any labelled set the rule does not merge is ``different`` only with a reason naming
another value or thing. Pairs here are this file's own, written before the method."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesizer.merge.paraphrase import causal, regrouped, unfronted
from synthesizer.merge.rule import compare, may_bind, settle
from synthesizer.search.embed import embedder_for

SAME_PAIRS = [
    # cause and result, either order
    (
        "The import stalls because the staging table is locked",
        "The staging table is locked, so the import stalls",
    ),
    (
        "The pump overheats because the coolant line is blocked",
        "The coolant line is blocked, which causes the pump to overheat",
    ),
    # light verb + a derived noun
    (
        "The auditor made a decision to reopen the ledger",
        "The auditor decided to reopen the ledger",
    ),
    ("The surveyor carried out an inspection of the bridge", "The surveyor inspected the bridge"),
    # an of-phrase read as a possessive
    ("The battery of the drone drains quickly", "The drone's battery drains quickly"),
    # a fronted phrase
    (
        "After the firmware update, the scanner reboots twice",
        "The scanner reboots twice after the firmware update",
    ),
    # a nominalised subject read as a clause
    (
        "The contractor repaired the roof quickly",
        "The repair of the roof by the contractor was quick",
    ),
    # a negated antonym
    ("The east gate did not open this morning", "The east gate stayed shut this morning"),
]

APART_PAIRS = [
    # the same constructions, one slot changed
    (
        "The import stalls because the staging table is locked",
        "The staging table is locked, so the export stalls",
    ),
    ("The auditor made a decision to reopen the ledger", "The auditor decided to close the ledger"),
    ("The battery of the drone drains quickly", "The drone's battery charges quickly"),
    (
        "After the firmware update, the scanner reboots twice",
        "The scanner reboots five times after the firmware update",
    ),
    # the nominalised subject with agent and object swapped
    (
        "The contractor repaired the roof quickly",
        "The repair of the contractor by the roof was quick",
    ),
    # roles swapped around a verb
    ("The courier paid the supplier", "The supplier paid the courier"),
    # a leading clause is not a fronted phrase (read so, the two held the same words)
    ("The nurse took the samples, not the doctor", "The doctor took the samples, not the nurse"),
]

CONTRADICTING = [
    # one cause, conflicting effects (also against a concession)
    (
        "The import stalls because the staging table is locked",
        "The staging table is locked, yet the import runs",
    ),
    # the same words regrouped, the polarity flipped
    (
        "The auditor made a decision to reopen the ledger",
        "The auditor decided not to reopen the ledger",
    ),
    # the same words regrouped, one measure apart
    (
        "The kiln's peak temperature is 900 degrees",
        "The peak temperature of the kiln is 1200 degrees",
    ),
    (
        "After the firmware update, the scanner reboots twice",
        "The scanner reboots five times after the firmware update",
    ),
    ("The battery of the drone drains quickly", "The drone's battery charges quickly"),
]


@pytest.mark.parametrize(("a", "b"), SAME_PAIRS)
def test_a_rewording_is_the_same_statement(a: str, b: str) -> None:
    assert compare(a, b).kind == "same", compare(a, b)
    assert compare(b, a).kind == "same"
    assert settle(a, b).kind == "same"
    assert may_bind(a, b)


@pytest.mark.parametrize(("a", "b"), APART_PAIRS)
def test_the_same_construction_with_a_slot_changed_stays_apart(a: str, b: str) -> None:
    assert compare(a, b).kind != "same", compare(a, b)
    assert settle(a, b).kind != "same"


@pytest.mark.parametrize(("a", "b"), CONTRADICTING)
def test_a_changed_slot_that_conflicts_is_flagged(a: str, b: str) -> None:
    assert compare(a, b).kind == "contradicts", compare(a, b)


def test_cause_and_effect_swapped_is_a_different_statement() -> None:
    v = compare("The outage caused the queue backlog", "The queue backlog caused the outage")
    assert v.kind == "different"
    assert "swapped" in v.reason


def test_the_readings() -> None:
    c = causal("The import stalls because the staging table is locked")
    assert c is not None
    assert (c.cause, c.effect) == ("the staging table is locked", "The import stalls")
    assert causal("The import is so slow") is None  # a degree, not a result
    assert causal("The import stalls, so that nobody waits") is None  # a purpose
    assert unfronted("Since May, the job fails") == "the job fails since May"
    assert unfronted("Alice, the job fails") == "Alice, the job fails"  # not a phrase
    assert unfronted("The nurse left, not the doctor") == "The nurse left, not the doctor"
    assert regrouped("The courier paid the supplier", "The supplier paid the courier") is None


EVIDENCE = ("number", "unit", "name", "quantity", "subject", "hedge", "swapped", "direction")


def _labelled() -> list[dict]:
    out = []
    for path in sorted((Path(__file__).parent / "data").glob("quality_*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if "a" in row:
                out.append(row)
    return out


def test_a_should_merge_pair_is_different_only_on_evidence() -> None:
    """Every labelled set, the hashing embedder's span similarity: a should-merge pair the
    rule does not merge is ``unsure``, or ``different`` with a reason naming another
    quantity, name, hedge, direction or thing in the subject."""
    emb = embedder_for("hash")
    sim = lambda x, y: float(emb.embed([x])[0] @ emb.embed([y])[0])  # noqa: E731
    unproven = []
    for row in _labelled():
        if row.get("merge"):
            v = compare(row["a"], row["b"], sim)
            if v.kind == "different" and not any(w in v.reason for w in EVIDENCE):
                unproven.append((row["a"], row["b"], v.reason))
    assert unproven == []
