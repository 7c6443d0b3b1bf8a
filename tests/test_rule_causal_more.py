"""Cause and result once more: "X happened because of Y" beside "Y caused X" (a verb of
occurrence alone adds nothing to the event it names), and "caused the train to be
diverted" beside "the train was diverted" (the "to" of an infinitive's auxiliary is no
end of a path). Both ways: another effect, or the roles swapped, is still told apart."""

from __future__ import annotations

import pytest

from synthesizer.merge.rule import compare


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The landslide happened because of the tremor", "The tremor caused the landslide"),
        (
            "The train was diverted because a tree fell on the line",
            "A tree fell on the line and caused the train to be diverted",
        ),
        ("The outage occurred because of the storm", "The storm caused the outage"),
    ],
)
def test_cause_and_result_either_way_is_the_same(a: str, b: str) -> None:
    assert compare(a, b).kind == "same"
    assert compare(b, a).kind == "same"


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        (
            "The train was diverted because a tree fell on the line",
            "A tree fell on the line and caused the train to be cancelled",
            "contradicts",
        ),
        ("The landslide happened because of the tremor", "The landslide caused the tremor", None),
        ("The outage occurred because of the storm", "The storm caused the flooding", None),
    ],
)
def test_another_effect_or_swapped_roles_stay_apart(a: str, b: str, kind: str | None) -> None:
    v = compare(a, b)
    assert v.kind != "same"
    if kind is not None:
        assert v.kind == kind
