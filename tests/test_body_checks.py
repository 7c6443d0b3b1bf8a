"""The plain-Python body checks (synthesizer.events) agree with the pydantic models
(synthesizer.body_models): same bodies accepted, same bodies rejected, same one-line
error, on a table of edge cases and on generated JSON-like bodies. ``swarm.configured``
(checked by the configuration's own records) keeps the messages it had as a model."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmlog.envelope import model_check
from synthesizer import events as T
from synthesizer.body_models import BODY_MODELS

PLAIN = sorted(set(T._PLAIN) - {T.SWARM_CONFIGURED})
FIELDS = {
    t: [*BODY_MODELS[t].model_fields, "x"] for t in PLAIN
}  # every field of the model, plus one it ignores


def plain_line(type_name: str, body: dict[str, Any]) -> str | None:
    errs = T.plain_errors(type_name, body)
    return T.plain_check(type_name)(body) if errs else None


def model_line(type_name: str, body: dict[str, Any]) -> str | None:
    return model_check(BODY_MODELS[type_name])(body)


def same(type_name: str, body: dict[str, Any]) -> None:
    assert plain_line(type_name, body) == model_line(type_name, body), (type_name, body)


def test_the_plain_types_are_the_per_action_ones_and_every_type_is_checked() -> None:
    per_action = {
        T.MEMORY_SHARED,
        T.MEMORY_REINFORCED,
        T.MEMORY_RECALLED,
        T.MEMORY_FEEDBACK,
        T.FACT_UPDATED,
        T.FACT_RETRACTED,
        T.BOARD_CONFLICT,
        T.IDENTITY_FORGOTTEN,
    }
    assert per_action <= set(PLAIN)
    assert set(PLAIN) | set(T.MODELLED) == set(BODY_MODELS)
    assert not set(T._PLAIN) & set(T.MODELLED)
    assert T.SWARM_CONFIGURED in T._PLAIN and T.SWARM_CONFIGURED not in BODY_MODELS


SCALARS: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    7,
    2**70,
    0.0,
    0.5,
    1.0,
    1.5,
    -0.25,
    math.nan,
    math.inf,
    -math.inf,
    "",
    " ",
    "a",
    "x y",
    "f12",
    "0.5",
    " 0.5 ",
    "1e-1",
    "1_0",
    "inf",
    "nan",
    "5",
    "٣",
    "a/b",
    ".",
    "..",
    "\x07",
    "é",
    "a" * 129,
    "a" * 257,
    "a" * 1025,
    "a" * 16385,
    [],
    [1],
    [1.5],
    ["a"],
    [0],
    [1, 2],
    [math.nan],
    [True],
    {},
    {"a": 1},
    ("a",),
    (3,),
    "active",
    "retracted",
    "bogus",
    2.0,
    2.5,
    -3,
    1e19,
    2**70,
    "5.0",
    " 7 ",
    "1_000",
    "0_0 ",
    " 1_0",
    "0_.",
    "1e3",
]


@pytest.mark.parametrize("type_name", PLAIN)
def test_every_field_against_every_edge_value(type_name: str) -> None:
    base = {
        "content": "a memory",
        "target": "f1",
        "expected": 1,
        "actual": 2,
        "usefulness": 0.5,
        "agent": "ann",
    }
    checked = 0
    for name in FIELDS[type_name]:
        for v in SCALARS:
            body = {**base, name: v}
            same(type_name, body)
            checked += 1
        same(type_name, {k: v for k, v in base.items() if k != name})
    assert checked > 0


def test_the_messages_are_pydantics() -> None:
    assert (
        model_line(T.MEMORY_SHARED, {})
        == plain_line(T.MEMORY_SHARED, {})
        == ("content: Field required")
    )
    body = {"content": " ", "importance": 2, "thread": "a b"}
    assert plain_line(T.MEMORY_SHARED, body) == "content: content must not be blank (and 2 more)"
    body = {"content": "c", "embedding": [0.5]}
    assert plain_line(T.MEMORY_SHARED, body) == (
        "event: embedder is required when an embedding is given"
    )
    same(T.MEMORY_SHARED, body)
    body = {"evidence": [1, 0, "2"], "status": "bogus"}
    assert plain_line(T.FACT_UPDATED, body) == model_line(T.FACT_UPDATED, body)
    assert plain_line(T.FACT_UPDATED, body).startswith("status: Input should be 'active'")  # type: ignore[union-attr]


_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats()
    | st.text(alphabet="0123456789.e-+ _ainfx/é\x07", max_size=12)
    | st.text(max_size=40)
    | st.sampled_from(["active", "contested", "superseded", "retracted", "f1", "hash"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@st.composite
def bodies(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    type_name = draw(st.sampled_from(PLAIN))
    keys = draw(st.lists(st.sampled_from(FIELDS[type_name]), unique=True, max_size=6))
    return type_name, {k: draw(_values) for k in keys}


@pytest.mark.slow
@settings(max_examples=1500, deadline=None)
@given(bodies())
def test_generated_bodies_get_the_same_verdict_and_message(
    case: tuple[str, dict[str, Any]],
) -> None:
    same(*case)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-5, 5), max_size=4),
    st.sampled_from([None, "hash", "", "a b"]),
)
def test_embeddings(vector: list[Any], embedder: str | None) -> None:
    same(T.MEMORY_SHARED, {"content": "c", "embedding": vector, "embedder": embedder})


CONFIGURED = [  # body -> the line pydantic's SwarmConfigured model gave (before this check)
    ({}, "config: Field required"),
    ({"config": {}}, None),
    (
        {"config": {"pool": {"capacity": 0}}},
        "config.pool.capacity: Input should be greater than or equal to 1",
    ),
    ({"config": 5}, "config: Input should be a valid dictionary or instance of SynthConfig"),
    (
        {"config": {"pool": {"capacity": 0, "boost": -1}, "embedder": "x"}},
        "config.pool.capacity: Input should be greater than or equal to 1 (and 2 more)",
    ),
    ({"config": {}, "changed": []}, "changed: Input should be a valid dictionary"),
    ({"config": {"zzz": 1}}, "config.zzz: Extra inputs are not permitted"),
    (
        {"config": {"operators": "a,b c"}},
        "config.operators: operator 'b c' contains a forbidden character ' '",
    ),
    ({"config": {"synthesizer": {"near_duplicate": "auto"}}}, None),
    (
        {"config": {"pool": 3}},
        "config.pool: Input should be a valid dictionary or instance of PoolConfig",
    ),
    ({"changed": 5}, "config: Field required (and 1 more)"),
]


@pytest.mark.parametrize(("body", "line"), CONFIGURED)
def test_swarm_configured_keeps_its_messages(body: dict[str, Any], line: str | None) -> None:
    assert T.plain_check(T.SWARM_CONFIGURED)(body) == line
