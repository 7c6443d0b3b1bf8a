"""``different`` on evidence of another value, not on where a value stands.

A statement reworded moves its quantities and names: "70 percent of memory but only 20
percent of CPU" / "only 20 percent of CPU, but 70 percent of memory"; "pushes rows to
Postgres" / "Postgres receives rows". The alignment then meets a quantity or a name at
another place and reports a slot; that is not another value, so the pair is ``unsure``
(kept apart, asked of a judge, grouped for readers), never ``different``. The same pair
with one value changed still shows another statement."""

from __future__ import annotations

import pytest

from synthesizer.merge.rule import compare

MOVED = [
    (
        "Batch jobs use 70 percent of the cluster's memory but only 20 percent of its CPU",
        "Only 20 percent of the cluster's CPU, but 70 percent of its memory, is used by batch jobs",
    ),
    (
        "The importer pushes rows to Postgres every 5 minutes",
        "Every 5 minutes, Postgres receives rows pushed by the importer",
    ),
]
CHANGED = [
    (
        "Batch jobs use 70 percent of the cluster's memory but only 20 percent of its CPU",
        "Only 25 percent of the cluster's CPU, but 70 percent of its memory, is used by batch jobs",
    ),
    (
        "The importer pushes rows to Postgres every 5 minutes",
        "Every 7 minutes, Postgres receives rows pushed by the importer",
    ),
    (
        "The importer pushes rows to Postgres every 5 minutes",
        "Every 5 minutes, MySQL receives rows pushed by the importer",
    ),
]


@pytest.mark.parametrize(("a", "b"), MOVED)
def test_values_moved_by_a_rewording_are_not_evidence(a: str, b: str) -> None:
    for x, y in ((a, b), (b, a)):
        v = compare(x, y)
        assert v.kind in ("same", "unsure"), v


@pytest.mark.parametrize(("a", "b"), CHANGED)
def test_another_value_still_shows_another_statement(a: str, b: str) -> None:
    for x, y in ((a, b), (b, a)):
        v = compare(x, y)
        assert v.kind in ("different", "contradicts"), v


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (
            "The survey counted 140 nesting pairs",
            "The survey counted one hundred and forty nesting pairs",
            "same",
        ),
        (
            "The survey counted 140 nesting pairs",
            "The survey counted one hundred and fifty nesting pairs",
            "contradicts",
        ),
        ("The ferry leaves at 6 pm", "The ferry leaves at 6 p.m.", "same"),
        ("The ferry leaves at 6 pm", "The ferry leaves at 6 a.m.", "contradicts"),
        ("The kiln holds two and three tray stacks", "The kiln holds 5 tray stacks", "contradicts"),
    ],
)
def test_quantities_spelled_out_or_abbreviated_are_read_by_value(a: str, b: str, kind: str) -> None:
    for x, y in ((a, b), (b, a)):
        assert compare(x, y).kind == kind, compare(x, y)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The courier booked a slot at the depot", "The courier reserved a slot at the depot"),
        (
            "The lab assistant noticed a crack in the flask",
            "The lab assistant spotted a crack in the flask",
        ),
    ],
)
def test_two_verbs_of_one_verb_are_not_rival_values(a: str, b: str) -> None:
    """WordNet puts "book" and "reserve", "notice" and "spot" under one verb each: two
    manners of one act, which one report words either way. Not a conflicting slot."""
    for x, y in ((a, b), (b, a)):
        assert compare(x, y).kind in ("same", "unsure"), compare(x, y)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The build server runs Linux", "The build server runs Windows"),
        ("The orchard grows apples", "The orchard grows pears"),
        ("Ticket sales doubled", "Ticket sales tripled"),
    ],
)
def test_two_kinds_of_one_thing_are_still_rival_values(a: str, b: str) -> None:
    for x, y in ((a, b), (b, a)):
        assert compare(x, y).kind == "contradicts", compare(x, y)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("Half of the crates arrived damaged", "50 percent of the crates arrived damaged", True),
        ("Half of the crates arrived damaged", "40 percent of the crates arrived damaged", False),
        ("Three quarters of the beds are taken", "75 percent of the beds are taken", True),
        ("The crossing takes an hour and a half", "The crossing takes 90 minutes", True),
        ("The crossing takes an hour and a half", "The crossing takes 80 minutes", False),
        ("The audit starts on the fifth of May", "The audit starts on the first of May", False),
    ],
)
def test_a_fraction_of_a_whole_is_its_percentage(a: str, b: str, same: bool) -> None:
    """ "half of", "a quarter of", "three quarters of" a whole, and "an hour and a half",
    are quantities by value; "the fifth of May" is a date, not a fifth."""
    for x, y in ((a, b), (b, a)):
        assert (compare(x, y).kind == "same") is same, compare(x, y)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (
            "More than half of the pilots passed the check",
            "Over 50 percent of the pilots passed the check",
            "same",
        ),
        ("Fewer than 8 of the 30 pumps leaked", "Under eight of the 30 pumps leaked", "same"),
        (
            "More than 8 of the 30 pumps leaked",
            "Fewer than 8 of the 30 pumps leaked",
            "contradicts",
        ),
        ("The drone flew over the dam", "The drone flew under the dam", "contradicts"),
        (
            "The heron earned more than the crane",
            "The crane earned more than the heron",
            "contradicts",
        ),
    ],
)
def test_a_bound_is_one_bound_however_it_is_said(a: str, b: str, kind: str) -> None:
    """ "more than" / "over" / "above" and "fewer than" / "under" / "below" before a
    quantity are one bound each, and the two lean opposite ways; before anything else
    they are the words they were ("over the dam", "more than the crane")."""
    for x, y in ((a, b), (b, a)):
        assert compare(x, y).kind == kind, compare(x, y)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (
            "During the night shift the press rejects about 3 percent of parts",
            "The press rejects about 13 percent of parts during the night shift",
            "contradicts",
        ),
        (
            "The kiln reached 900 degrees after an hour",
            "After an hour the kiln reached 950 degrees",
            "contradicts",
        ),
        (
            "During the night shift the press rejects about 3 percent of parts",
            "The press rejects about 3 seconds of parts during the night shift",
            "unsure",
        ),
    ],
)
def test_one_quantity_apart_in_reworded_statements_is_flagged(a: str, b: str, kind: str) -> None:
    """The same statement in another order but for one quantity of one dimension: that
    value is the conflicting slot. Two quantities of other dimensions show nothing."""
    for x, y in ((a, b), (b, a)):
        v = compare(x, y)
        assert v.kind == kind or (kind == "unsure" and v.kind in ("unsure", "different")), v
