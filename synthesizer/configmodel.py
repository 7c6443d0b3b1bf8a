"""Frozen, validated records without pydantic: what ``config`` declares the configuration with.

Every process that folds a swarm builds its configuration (from a checkpoint, from the
log's ``swarm.configured``), and an agent's ``board`` or ``reinforce`` call cannot
afford pydantic's import and model building for it. A ``Record`` subclass declares its
fields with ``setting(default, ge=…, …)`` (or ``nested(Record)``); construction and
``model_validate`` check them with pydantic's lax conversions (a numeric string for a
number, an integral float for an int) and pydantic's messages, and raise
``ValidationError`` (a ValueError) whose ``errors()`` lists ``loc``/``msg``/``input`` as
pydantic's does. The API is the part of pydantic's the project uses: ``model_validate``,
``model_dump(mode=…)``, ``model_copy(update=…)``, equality, hashing, ``repr``.
tests/test_config_model.py checks it against pydantic models built from the same fields.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

Validator = Callable[[Any], Any]


class ValidationError(ValueError):
    """Values that do not hold; ``errors()`` gives each as ``{"loc", "msg", "input"}``."""

    def __init__(self, title: str, errors: list[dict[str, Any]]) -> None:
        self.title = title
        self._errors = errors
        first = errors[0]
        loc = ".".join(str(p) for p in first["loc"]) or title
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{title}: {loc}: {first['msg']}{more}")

    def errors(self) -> list[dict[str, Any]]:
        return [dict(e) for e in self._errors]


class Setting(NamedTuple):
    """One field: ``kind`` is float, int, str, ``"float?"`` (a float or None), ``"names"``
    (a tuple of strings) or a ``Record`` subclass; bounds as in pydantic's ``Field``."""

    kind: Any
    default: Any = None
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    finite: bool = False
    before: Validator | None = None
    after: Validator | None = None
    shown: str | None = None

    def describe(self) -> str:
        """What the field accepts, e.g. ``int >= 1`` (``swarmlog config show``)."""
        if self.shown is not None:
            return self.shown
        kind = {"float?": "float | None", "names": "tuple"}.get(self.kind) or self.kind.__name__
        pairs = (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
        bounds = [f"{op} {getattr(self, a)}" for a, op in pairs if getattr(self, a) is not None]
        return kind + (" " + ", ".join(bounds) if bounds else "")


def setting(default: Any, **how: Any) -> Any:
    """A field with this default (its kind is the default's type unless ``kind=``)."""
    return Setting(how.pop("kind", type(default)), default, **how)


def nested(record: type[Record]) -> Any:
    """A field holding a record (default: the record's defaults)."""
    return Setting(record)


# ---------------------------------------------------------------- conversions

_INT_TEXT = re.compile(r"(?:[+-]|0+-)?\d+(_\d+)*(\.0+)?")
"""An integer as pydantic-core reads text: its leading zeros may come before the minus
("0-5" is -5, "00-0" is 0)."""
_TOO_BIG = "Unable to parse input string as an integer, exceeded maximum size"


def _number_text(v: str) -> str | None:
    """A numeric string as pydantic reads it: surrounding whitespace stripped, single
    underscores between characters dropped (none leading, trailing or doubled, and none
    with surrounding whitespace: pydantic refuses ``"0_0 "`` as a float), ASCII."""
    t = v.strip()
    if "_" in t:
        if t != v or t.startswith("_") or t.endswith("_") or "__" in t:
            return None
        t = t.replace("_", "")
    return t if t.isascii() else None


def lax_float(v: Any) -> float | str:
    """``v`` as pydantic's lax float reads it (a bool, a number, a numeric string), or
    pydantic's error message."""
    if isinstance(v, (bool, int, float)):
        try:
            return float(v)
        except OverflowError:
            return "Input should be a valid number"
    if isinstance(v, str):
        t = _number_text(v)
        if t is not None:
            try:
                return float(t)
            except ValueError:
                pass
        return "Input should be a valid number, unable to parse string as a number"
    return "Input should be a valid number"


def lax_int(v: Any) -> int | str:
    """``v`` as pydantic's lax int reads it (a bool, an integral number, an integer
    string), or pydantic's error message."""
    if isinstance(v, (bool, int)):
        return int(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return "Input should be a finite number"
        if v != int(v):
            return "Input should be a valid integer, got a number with a fractional part"
        if not -(2**63) <= v < 2**63:
            return _TOO_BIG
        return int(v)
    if isinstance(v, str):
        t = v.strip()
        if t.isascii() and _INT_TEXT.fullmatch(t):
            digits = t.split(".")[0]
            if digits[0] == "0" and "-" in digits:  # "0-5": zeros, then the sign
                digits = "-" + digits.split("-", 1)[1]
            return _TOO_BIG if len(digits) > 4300 else int(digits)
        return "Input should be a valid integer, unable to parse string as an integer"
    return "Input should be a valid integer"


def _bounds(s: Setting, x: float) -> str | None:
    """pydantic's order: le, lt, ge, gt (a NaN fails the first bound there is)."""
    if s.le is not None and not x <= s.le:
        return f"Input should be less than or equal to {s.le:g}"
    if s.lt is not None and not x < s.lt:
        return f"Input should be less than {s.lt:g}"
    if s.ge is not None and not x >= s.ge:
        return f"Input should be greater than or equal to {s.ge:g}"
    if s.gt is not None and not x > s.gt:
        return f"Input should be greater than {s.gt:g}"
    return None


def _value(s: Setting, v: Any, loc: tuple[Any, ...], errors: list[dict[str, Any]]) -> Any:
    """``v`` converted for ``s``; problems are appended to ``errors`` (result unused then)."""

    def bad(msg: str, where: tuple[Any, ...] = loc, got: Any = v) -> None:
        errors.append({"loc": where, "msg": msg, "input": got})

    if s.before is not None:
        try:
            v = s.before(v)
        except ValueError as e:
            return bad(f"Value error, {e}")
    kind = s.kind
    if isinstance(kind, type) and issubclass(kind, Record):
        if isinstance(v, kind):
            return v
        if not isinstance(v, Mapping):
            return bad(f"Input should be a valid dictionary or instance of {kind.__name__}")
        return kind._build(v, loc, errors)
    if kind == "float?" and v is None:
        return None
    if kind in (float, "float?"):
        x = lax_float(v)
        if isinstance(x, str):
            return bad(x)
        if s.finite and not math.isfinite(x):
            return bad("Input should be a finite number")
        why = _bounds(s, x)
        out: Any = x
    elif kind is int:
        n = lax_int(v)
        if isinstance(n, str):
            return bad(n)
        why = _bounds(s, n)
        out = n
    elif kind is str:
        if not isinstance(v, str):
            return bad("Input should be a valid string")
        why, out = None, v
    elif kind == "names":
        if not isinstance(v, (list, tuple)):
            return bad("Input should be a valid tuple")
        for i, item in enumerate(v):
            if not isinstance(item, str):
                bad("Input should be a valid string", (*loc, i), item)
        why, out = None, tuple(v)
    else:
        raise TypeError(f"unknown setting kind {kind!r}")
    if why is not None:
        return bad(why)
    if s.after is not None:
        try:
            out = s.after(out)
        except ValueError as e:
            return bad(f"Value error, {e}")
    return out


# ---------------------------------------------------------------- records


class Record:
    """Base of the configuration records: fields are the class's ``Setting`` attributes,
    in order; instances are immutable and compare by value."""

    _fields: ClassVar[dict[str, Setting]] = {}

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        cls._fields = {k: v for k, v in vars(cls).items() if isinstance(v, Setting)}

    def __init__(self, **values: Any) -> None:
        errors: list[dict[str, Any]] = []
        built = self._build(values, (), errors)
        if errors:
            raise ValidationError(type(self).__name__, errors)
        object.__setattr__(self, "__dict__", dict(built.__dict__))

    @classmethod
    def _build(
        cls, data: Mapping[str, Any], loc: tuple[Any, ...], errors: list[dict[str, Any]]
    ) -> Any:
        """An instance from ``data`` without running ``__init__``; errors are collected."""
        out: dict[str, Any] = {}
        for name, s in cls._fields.items():
            if name in data:
                out[name] = _value(s, data[name], (*loc, name), errors)
            elif isinstance(s.kind, type) and issubclass(s.kind, Record):
                out[name] = s.kind._default()
            else:
                out[name] = s.default
        for name in data:
            if name not in cls._fields:
                errors.append(
                    {
                        "loc": (*loc, name),
                        "msg": "Extra inputs are not permitted",
                        "input": data[name],
                    }
                )
        obj = cls.__new__(cls)
        object.__setattr__(obj, "__dict__", out)
        return obj

    @classmethod
    def _default(cls) -> Any:
        return cls._build({}, (), [])

    @classmethod
    def model_validate(cls, data: Any) -> Any:
        """An instance from a mapping (or an instance, returned as is); ValidationError
        if a value does not hold or a key is unknown."""
        if isinstance(data, cls):
            return data
        errors: list[dict[str, Any]] = []
        if not isinstance(data, Mapping):
            msg = f"Input should be a valid dictionary or instance of {cls.__name__}"
            raise ValidationError(cls.__name__, [{"loc": (), "msg": msg, "input": data}])
        obj = cls._build(data, (), errors)
        if errors:
            raise ValidationError(cls.__name__, errors)
        return obj

    def model_dump(self, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict (nested records too); ``mode="json"``: tuples as lists."""
        out: dict[str, Any] = {}
        for name, v in self.__dict__.items():
            if isinstance(v, Record):
                v = v.model_dump(mode)
            elif isinstance(v, tuple) and mode == "json":
                v = list(v)
            out[name] = v
        return out

    def model_copy(self, update: Mapping[str, Any] | None = None) -> Any:
        """A copy with some fields replaced (not validated, as in pydantic)."""
        obj = type(self).__new__(type(self))
        object.__setattr__(obj, "__dict__", {**self.__dict__, **(update or {})})
        return obj

    @classmethod
    def leaves(cls, prefix: str = "") -> dict[str, str]:
        """Dotted leaf keys -> what each accepts, e.g. ``pool.capacity: int >= 1``."""
        out: dict[str, str] = {}
        for name, s in cls._fields.items():
            if isinstance(s.kind, type) and issubclass(s.kind, Record):
                out.update(s.kind.leaves(f"{prefix}{name}."))
            else:
                out[prefix + name] = s.describe()
        return out

    def __setattr__(self, name: str, value: Any) -> None:
        raise ValidationError(
            type(self).__name__,
            [{"loc": (name,), "msg": "Instance is frozen", "input": value}],
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.__dict__ == self.__dict__

    def __hash__(self) -> int:
        return hash((type(self), *self.__dict__.values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({inner})"
