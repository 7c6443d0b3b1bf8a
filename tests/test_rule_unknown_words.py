"""Words the lexicon does not know (a trade's or a tool's verbs: "requeue", "mislabel",
"autoscale"): their regular inflections share one key, so a rewording in another tense or
voice is the same statement, and a changed slot beside them still keeps two apart (or
flags them). A base that is itself a known word is not taken over ("sharding" is not
"shard"), and a capitalised word at a sentence's start is keyed as the same name inside
one ("Alice")."""

from __future__ import annotations

import pytest

from synthesizer.merge.rule import compare
from synthesizer.merge.statement import parse
from synthesizer.merge.wordclass import unknown_base


@pytest.mark.parametrize(
    ("forms", "base"),
    [
        (["mislabel", "mislabels", "mislabelled", "mislabeled", "mislabeling"], "mislabel"),
        (["requeue", "requeues", "requeued", "requeuing"], "requeu"),
        (["autoscale", "autoscales", "autoscaled", "autoscaling"], "autoscal"),
        (["dedupe", "dedupes", "deduped", "deduping"], "dedup"),
        (["redis"], "redis"),
        (["k8s"], "k8s"),
        (["api"], "api"),
    ],
)
def test_inflections_of_an_unknown_word_share_one_base(forms: list[str], base: str) -> None:
    assert {unknown_base(f) for f in forms} == {base}


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The job requeues failed tasks", "Failed tasks are requeued by the job"),
        (
            "The scheduler autoscaled the workers at noon",
            "At noon the workers were autoscaled by the scheduler",
        ),
        (
            "The sorting robot mislabels one parcel in two hundred",
            "One parcel in two hundred is mislabelled by the sorting robot",
        ),
        ("The importer dedupes the invoices", "The invoices are deduped by the importer"),
    ],
)
def test_a_rewording_around_an_unknown_verb_is_the_same(a: str, b: str) -> None:
    assert compare(a, b).kind == "same"
    assert compare(b, a).kind == "same"


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("The job requeued 40 tasks", "400 tasks were requeued by the job", "contradicts"),
        (
            "The sorting robot mislabels one parcel in two hundred",
            "One parcel in twenty is mislabelled by the sorting robot",
            "contradicts",
        ),
        ("The job requeued the failed tasks", "The job dequeued the failed tasks", None),
        ("The importer dedupes the invoices", "The invoices are deduped by the exporter", None),
    ],
)
def test_a_changed_slot_beside_an_unknown_verb_still_keeps_them_apart(
    a: str, b: str, kind: str | None
) -> None:
    v = compare(a, b)
    assert v.kind != "same"
    if kind is not None:
        assert v.kind == kind


def test_a_known_word_is_not_taken_over_by_an_unknown_ones_base() -> None:
    assert compare("The sharding failed overnight", "The shard failed overnight").kind != "same"
    keys = [t.key for t in parse("The sharding failed overnight").toks]
    assert "sharding" in keys and "shard" not in keys


def test_a_name_at_the_start_meets_the_same_name_inside() -> None:
    a, b = parse("Alice is older than Bob"), parse("Bob is older than Alice")
    assert sorted(t.key.split("<")[0] for t in a.toks) == sorted(
        t.key.split("<")[0] for t in b.toks
    )
    assert compare("Alice is older than Bob", "Bob is older than Alice").kind == "contradicts"
