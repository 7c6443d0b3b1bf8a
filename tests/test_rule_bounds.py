"""Inclusive bounds on a quantity, said before it or after it ("at least three", "no
fewer than three", "three or more", "500 messages or fewer", "at most 500"): one bound
said either way is a rewording; another value under the same bound, a strict bound
against an inclusive one, a bound against none, and bounds leaning opposite ways keep
the two apart (the last flagged)."""

from __future__ import annotations

import pytest

from synthesizer.merge.rule import compare


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "The cluster needs at least three voting members",
            "The cluster needs three or more voting members",
        ),
        (
            "The cluster needs at least three voting members",
            "The cluster needs no fewer than three voting members",
        ),
        ("The queue holds at most 500 messages", "The queue holds no more than 500 messages"),
        ("The queue holds 500 messages or fewer", "The queue holds at most 500 messages"),
        ("Two or more nodes failed", "At least two nodes failed"),
        ("The lift carries a maximum of 8 people", "The lift carries at most 8 people"),
    ],
)
def test_one_bound_said_either_way_is_the_same(a: str, b: str) -> None:
    assert compare(a, b).kind == "same"
    assert compare(b, a).kind == "same"


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (
            "The cluster needs at least three voting members",
            "The cluster needs at least five voting members",
            "contradicts",
        ),
        (
            "The queue holds 500 messages or fewer",
            "The queue holds 800 messages or fewer",
            "contradicts",
        ),
        (
            "The cluster needs at least three voting members",
            "The cluster needs fewer than three voting members",
            "contradicts",
        ),
        (
            "The queue holds 500 messages or more",
            "The queue holds at most 500 messages",
            "contradicts",
        ),
        (
            "The cluster needs at least three voting members",
            "The cluster needs more than three voting members",
            None,
        ),
        (
            "The cluster needs at least three voting members",
            "The cluster needs three voting members",
            None,
        ),
        ("The queue holds at most 500 messages", "The queue holds 500 messages", None),
    ],
)
def test_another_value_or_bound_keeps_them_apart(a: str, b: str, kind: str | None) -> None:
    v = compare(a, b)
    assert v.kind != "same"
    if kind is not None:
        assert v.kind == kind
