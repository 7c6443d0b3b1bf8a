"""An event said as a noun ("the collapse of the colony happened in March") beside the
same event said with its verb ("the colony collapsed in March"): with no agent named,
the of-phrase may be the subject of a verb without an object; a verb of occurrence
("happened", "occurred", "took place") carries no meaning of its own. A date or number
after "in" is a preposition's object, not a particle ("closed in 1998" is not "close
in"). Both ways: another date, another thing, or an agent the noun does not name keep
the two apart."""

from __future__ import annotations

import pytest

from synthesizer.merge.rule import compare
from synthesizer.merge.statement import parse


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The colony collapsed in March", "The collapse of the colony happened in March"),
        ("The mine closed in 1998", "The closure of the mine was in 1998"),
        ("The bridge collapsed in 2007", "The collapse of the bridge occurred in 2007"),
        ("The festival expanded last year", "The expansion of the festival took place last year"),
    ],
)
def test_an_event_said_as_a_noun_is_the_same(a: str, b: str) -> None:
    assert compare(a, b).kind == "same"
    assert compare(b, a).kind == "same"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The colony collapsed in March", "The collapse of the colony happened in May"),
        ("The mine closed in 1998", "The closure of the mine was in 1988"),
        ("The colony collapsed in March", "The collapse of the hive happened in March"),
        ("The council closed the mine in 1998", "The closure of the mine was in 1998"),
        ("The bridge collapsed in 2007", "The collapse of the bridge did not occur in 2007"),
    ],
)
def test_another_slot_or_an_unnamed_agent_keeps_them_apart(a: str, b: str) -> None:
    assert compare(a, b).kind != "same"


def test_a_date_after_in_is_no_particle() -> None:
    assert [t.key for t in parse("The mine closed in 1998").toks] == ["mine", "close", "#:1998"]
    assert "close_in" not in [t.key for t in parse("The mine closed in March").toks]
