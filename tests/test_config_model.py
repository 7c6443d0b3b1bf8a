"""The configuration records (synthesizer.configmodel) validate as pydantic would.

For every record of ``SynthConfig`` a pydantic model is built from the same declared
fields (bounds, finiteness, validators); both get the same inputs — a table of edge
values and generated ones — and must agree on the result (as JSON) or on the errors
(location and message, in order). Plus the API the project uses: dump, copy, equality,
hashing, immutability, pickling.
"""

from __future__ import annotations

import math
import pickle
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, create_model
from pydantic import ValidationError as PydanticError

from synthesizer.config import SynthConfig, ValidationError
from synthesizer.configmodel import Record, Setting

_MODELS: dict[type, type[BaseModel]] = {}


def pydantic_twin(record: type[Record]) -> type[BaseModel]:
    """A pydantic model declaring ``record``'s fields as the original models did."""
    if record in _MODELS:
        return _MODELS[record]
    fields: dict[str, Any] = {}
    for name, s in record._fields.items():
        fields[name] = _field(s)
    model = create_model(
        record.__name__, __config__=ConfigDict(frozen=True, extra="forbid"), **fields
    )
    _MODELS[record] = model
    return model


def _field(s: Setting) -> tuple[Any, Any]:
    if isinstance(s.kind, type) and issubclass(s.kind, Record):
        twin = pydantic_twin(s.kind)
        return twin, twin()
    kind: Any = {"float?": float | None, "names": tuple[str, ...]}.get(s.kind, s.kind)
    bounds = {k: getattr(s, k) for k in ("ge", "gt", "le", "lt") if getattr(s, k) is not None}
    if s.finite:
        bounds["allow_inf_nan"] = False
    meta: list[Any] = []
    if s.before is not None:
        meta.append(BeforeValidator(s.before))
    if s.after is not None:
        meta.append(AfterValidator(s.after))
    ann = Annotated[(kind, *meta)] if meta else kind
    return ann, Field(s.default, **bounds)


def outcome_plain(data: Any) -> tuple[str, Any]:
    try:
        return "ok", SynthConfig.model_validate(data).model_dump(mode="json")
    except ValidationError as e:
        return "err", [(tuple(x["loc"]), x["msg"]) for x in e.errors()]


def outcome_pydantic(data: Any) -> tuple[str, Any]:
    try:
        return "ok", pydantic_twin(SynthConfig).model_validate(data).model_dump(mode="json")
    except PydanticError as e:
        return "err", [(tuple(x["loc"]), x["msg"]) for x in e.errors()]


def same(data: Any) -> None:
    a, b = outcome_plain(data), outcome_pydantic(data)
    if a[0] == "ok" and b[0] == "ok":  # NaN != NaN: compare the JSON text
        assert repr(a) == repr(b), data
    else:
        assert a == b, data


def test_the_twin_has_the_defaults_of_the_records() -> None:
    assert pydantic_twin(SynthConfig)().model_dump(mode="json") == SynthConfig().model_dump(
        mode="json"
    )


EDGE: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    3,
    0.0,
    0.5,
    1.0,
    1.5,
    -0.5,
    2.0,
    1e300,
    math.nan,
    math.inf,
    -math.inf,
    "",
    " ",
    "5",
    " 7 ",
    "5.0",
    "1_000",
    "0_0 ",
    " 1_0",
    "1e3",
    "0.5",
    "-1",
    "nan",
    "inf",
    "auto",
    "none",
    "x",
    "hash",
    "minilm",
    "archive",
    "delete",
    "a,b",
    "a, b c",
    [],
    ["a"],
    ["a", 1],
    ["", "b"],
    ("op",),
    {},
    {"capacity": 5},
    2**70,
]


def _leaves() -> list[tuple[str, ...]]:
    out = []
    for key in SynthConfig.leaves():
        out.append(tuple(key.split(".")))
    return out


def _put(path: tuple[str, ...], v: Any) -> dict[str, Any]:
    d: dict[str, Any] = {path[-1]: v}
    for p in reversed(path[:-1]):
        d = {p: d}
    return d


@pytest.mark.parametrize("path", _leaves(), ids=".".join)
def test_every_leaf_against_every_edge_value(path: tuple[str, ...]) -> None:
    for v in EDGE:
        same(_put(path, v))


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"pool": 5},
        {"pool": None},
        {"zzz": 1},
        {"pool": {"zzz": 1, "capacity": 0}},
        [],
        "x",
        {"pool": {"capacity": 0, "boost": -1}, "embedder": "x", "operators": 3},
    ],
)
def test_whole_inputs(data: Any) -> None:
    a = outcome_plain(data)
    if not isinstance(data, dict):
        assert a[0] == "err" and a[1][0][1].startswith("Input should be a valid dictionary")
    else:
        same(data)


_value = (
    st.none()
    | st.booleans()
    | st.integers(-5, 10**6)
    | st.floats()
    | st.text(alphabet="0123456789.e-+ _,abnfx", max_size=8)
    | st.lists(st.text(alphabet="ab ,", max_size=3), max_size=3)
)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_leaves()), _value), max_size=4))
def test_generated_settings(items: list[tuple[tuple[str, ...], Any]]) -> None:
    data: dict[str, Any] = {}
    for path, v in items:
        node = data
        for p in path[:-1]:
            node = node.setdefault(p, {})
        node[path[-1]] = v
    same(data)


def test_the_api_the_project_uses() -> None:
    cfg = SynthConfig.model_validate({"pool": {"capacity": "5"}, "operators": "a,b"})
    assert cfg.pool.capacity == 5 and cfg.operators == ("a", "b")
    assert SynthConfig.model_validate(cfg) is cfg
    assert cfg == SynthConfig.model_validate(cfg.model_dump(mode="json"))
    assert hash(cfg) == hash(SynthConfig.model_validate(cfg.model_dump()))
    assert cfg != SynthConfig() and cfg.digest() != SynthConfig().digest()
    assert cfg.model_dump(mode="json")["operators"] == ["a", "b"]
    assert cfg.model_dump()["operators"] == ("a", "b")
    copy = cfg.model_copy(update={"embedder": "minilm"})
    assert copy.embedder == "minilm" and copy.pool == cfg.pool and cfg.embedder == "hash"
    with pytest.raises(ValueError):
        cfg.embedder = "minilm"
    assert pickle.loads(pickle.dumps(cfg)) == cfg
    assert repr(SynthConfig()).startswith("SynthConfig(pool=PoolConfig(decay_rate=0.05,")
    with pytest.raises(ValidationError) as e:
        SynthConfig(pool={"capacity": 0})
    assert e.value.errors()[0]["loc"] == ("pool", "capacity")


@pytest.mark.parametrize("text", ["0-0", "0-5", "00-0", "0-1_0", "0-0.0", "-0-0", "0--0", "1-0"])
def test_integer_text_with_zeros_before_the_minus_reads_as_pydantic_reads_it(text: str) -> None:
    """pydantic-core reads "0-5" as -5 (hypothesis found "0-0" once): the plain model too."""
    same({"pool": {"capacity": text}})
    same({"promotion": {"min_support": text}})
