"""``_fast.bounded_stamp`` (a writer alone's stamp, view/alone.py) equals the plain
``clock.bounded_stamp`` for any reading, last ts, ceiling and boot-time clock: sound
readings, NaN, infinities, an unknown ceiling, a boot clock behind the ceiling's."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmlog import _fast, clock

_t = st.one_of(
    st.floats(1.7e9, 1.8e9),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1.75e9]),
)
_ns = st.one_of(st.integers(0, 2**63 - 1), st.integers(10**12, 10**12 + 10**11))


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@pytest.mark.slow
@settings(max_examples=3000, deadline=None)
@given(reading=_t, last=_t, cap_ts=_t, cap_at=_ns, now_at=_ns)
def test_fast_bounded_stamp_equals_the_plain_one(
    reading: float, last: float, cap_ts: float, cap_at: int, now_at: int
) -> None:
    want = clock.bounded_stamp(reading, last, cap_ts, cap_at, now_at)
    got = _fast.bounded_stamp(reading, last, cap_ts, cap_at, now_at)
    assert _same(got, want), (got, want)


@given(
    base=st.floats(1.7e9, 1.8e9),
    step=st.floats(-1.0, 200.0),
    since=st.integers(0, 10**11),
    at=st.integers(1, 10**15),
)
def test_common_case_near_the_ceiling(base: float, step: float, since: int, at: int) -> None:
    """Readings around the ceiling (under, at, over it): where the inlined case decides."""
    cap_ts = base + 60.0
    reading = base + step
    want = clock.bounded_stamp(reading, base, cap_ts, at, at + since)
    assert _same(_fast.bounded_stamp(reading, base, cap_ts, at, at + since), want)
