"""One quantity apart, the rest the same statement in other words: with the quantity
written as the other's, any reading of the rule (a light verb and its noun, a passive, a
fronted phrase) shows the same statement, so the quantity is the one conflicting slot. A
bare number (a version, a pump's number) may name another thing and is not read so, and
a quantity in the subject names another thing."""

from __future__ import annotations

import pytest

from synthesizer.merge.rule import compare
from synthesizer.merge.statement import with_value


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The trustee made a payment of 12,000 euros to the creditor",
            "The trustee paid 21,000 euros to the creditor",
        ),
        (
            "The robot arm makes a pause of three seconds between picks",
            "The robot arm pauses for eight seconds between picks",
        ),
        (
            "The clerk made a payment of 300 dollars to the supplier",
            "The clerk paid $450 to the supplier",
        ),
    ],
)
def test_a_reworded_statement_one_quantity_apart_is_flagged(a: str, b: str) -> None:
    assert compare(a, b).kind == "contradicts"
    assert compare(b, a).kind == "contradicts"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The trustee made a payment of 12,000 euros to the creditor",
            "The trustee paid 12,000 euros to the creditor",
        ),
        (
            "The robot arm makes a pause of three seconds between picks",
            "The robot arm pauses for three seconds between picks",
        ),
    ],
)
def test_with_the_same_quantity_they_are_the_same(a: str, b: str) -> None:
    assert compare(a, b).kind == "same"


def test_a_bare_number_is_not_read_as_a_conflicting_value() -> None:
    v = compare(
        "The new driver is not compatible with kernel 6.8",
        "The new driver is incompatible with kernel 6.6",
    )
    assert v.kind != "contradicts"


def test_with_value_replaces_the_one_place_a_quantity_is_written() -> None:
    assert (
        with_value("The trustee paid 21,000 euros", ["21,000"], "12,000")
        == "The trustee paid 12,000 euros"
    )
    assert with_value("Two of two hundred", ["two"], "three") is None  # written twice
    assert with_value("The arm pauses", ["eight"], "three") is None  # written nowhere
