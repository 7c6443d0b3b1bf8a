"""The capacity victim (one C-level ``min``) equals the seed's loop: weakest first, on equal
strength the oldest, the first such fact in iteration order; NaN strengths as the loop."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from synthesizer.state.pool import capacity_victim

NAN = float("nan")  # one object: tuples compare it equal to itself, the loop does not


def _loop(facts: list[Any]) -> str | None:
    best = None
    for f in facts:
        if (
            best is None
            or f.strength < best.strength
            or (f.strength == best.strength and f.created_seq < best.created_seq)
        ):
            best = f
    return None if best is None else best.id


strengths = st.one_of(
    st.sampled_from([0.05, 0.1, 0.2, 1.0, math.inf, NAN]),
    st.just(0.0).map(lambda _: float("nan")),  # a fresh NaN object each time
    st.floats(min_value=0.0, max_value=2.0),
)


@given(st.lists(st.tuples(strengths, st.integers(0, 20)), max_size=40))
def test_victim_equals_the_loop(rows: list[tuple[float, int]]) -> None:
    facts = [
        SimpleNamespace(id=f"f{i}", strength=s, created_seq=c) for i, (s, c) in enumerate(rows)
    ]
    assert capacity_victim(facts) == _loop(facts)
    assert capacity_victim(iter(facts)) == _loop(facts)  # any iterable, consumed once
