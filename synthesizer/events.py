"""Event type names, and the plain-Python checks of their bodies at append.

``synthesizer.bodies`` registers a body check for every event type the synthesizer
knows (``swarmlog.envelope.register_check``) when the package is imported, so a log
rejects malformed bodies of known types, in one line, while carrying unknown types
through. The bodies agents write (``memory.*``, ``fact.updated``, ``fact.retracted``,
``board.conflict``, ``pool.tick``, ``session.*``, ``identity.forgotten``) and the
configuration (``swarm.configured``, by ``config``'s plain records) are checked here,
in plain Python: no pydantic on an agent's append. The synthesizer's own types are
checked by their pydantic models in ``body_models`` (the schema of record), built when
a body of such a type is first appended. tests/test_body_checks.py shows the plain
checks accept and reject exactly what the models do, with the same messages. The fold
never uses either: it reads the already-checked body dicts directly. The seeds' facade
types are in ``seedvocab.py``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from swarmlog.envelope import BodyCheck
from swarmlog.names import check_name
from synthesizer.configmodel import lax_float, lax_int

# ---------------------------------------------------------------- type names

MEMORY_SHARED = "memory.shared"
MEMORY_REINFORCED = "memory.reinforced"
MEMORY_RECALLED = "memory.recalled"
MEMORY_FEEDBACK = "memory.feedback"
FACT_CREATED = "fact.created"
FACT_CORROBORATED = "fact.corroborated"
FACT_REVIVED = "fact.revived"
FACT_CONTESTED = "fact.contested"
FACT_RESOLVED = "fact.resolved"
FACT_UPDATED = "fact.updated"
FACT_RETRACTED = "fact.retracted"
POOL_TICK = "pool.tick"
SESSION_STARTED = "session.started"
SESSION_ENDED = "session.ended"
IDENTITY_FORGOTTEN = "identity.forgotten"
SYNTH_PROGRESS = "synth.progress"
BOARD_CONFLICT = "board.conflict"
SWARM_CONFIGURED = "swarm.configured"
ORIGIN_WITHDRAWN = "origin.withdrawn"
"""Promotion takes origins back off a global fact (see ``synthesizer.state.origins``)."""
PROMOTION_DONE = "promotion.done"
"""A task swarm's record that its ended sessions were promoted (see ``promote``)."""
JUDGE_ASKED = "judge.asked"
"""The synthesizer links two facts as possible duplicates and asks a judge (ids only)."""
JUDGE_ANSWERED = "judge.answered"
"""A judge's answer to an open question (``synthesizer.state.judging``)."""

CONFIG_KEY = "swarm.config"
"""CAS key of ``swarm.configured`` events: its version is the seq of the configuration in force."""

SYNTH_AGENT = "synthesizer"
"""Agent name (and CAS key) of the synthesizer's events."""

STATUSES = ("active", "contested", "superseded", "retracted")
TIERS = ("working", "short_term", "long_term")
MAX_CONTENT = 16384
MAX_SHORT_TEXT = 1024

# ---------------------------------------------------------------- plain checks
# Each field check returns its errors as (location suffix, pydantic's message); the
# messages and the lax conversions (a number for a float, a numeric string, a bool) are
# pydantic's, so the one-line error is the same whichever checked the body.

Errors = list[tuple[str, str]]
FieldCheck = Callable[[Any], Errors]


def _text(
    min_len: int = 0, max_len: int | None = None, after: Callable[[str], Any] | None = None
) -> FieldCheck:
    """A string of ``min_len``..``max_len`` characters, then ``after`` (a ValueError's
    message is the error)."""

    def check(v: Any) -> Errors:
        if isinstance(v, (bytes, bytearray)):
            v = bytes(v).decode("utf-8", "replace")
        if not isinstance(v, str):
            return [("", "Input should be a valid string")]
        if len(v) < min_len:
            s = "" if min_len == 1 else "s"
            return [("", f"String should have at least {min_len} character{s}")]
        if max_len is not None and len(v) > max_len:
            return [("", f"String should have at most {max_len} characters")]
        if after is not None:
            try:
                after(v)
            except ValueError as e:
                return [("", str(e))]
        return []

    return check


def _not_blank(v: str) -> None:
    if not v.strip():
        raise ValueError("content must not be blank")


def _printable_subject(v: str) -> None:
    if not v.strip() or any(not ch.isprintable() for ch in v):
        raise ValueError("subject must be non-blank printable text")


def _name(v: str) -> None:
    check_name("name", v)


def _number(
    ge: float | None = None, le: float | None = None, gt: float | None = None
) -> FieldCheck:
    """A finite float (pydantic's ``allow_inf_nan=False``) within the bounds."""

    def check(v: Any) -> Errors:
        f = lax_float(v)
        if isinstance(f, str):
            return [("", f)]
        if not math.isfinite(f):
            return [("", "Input should be a finite number")]
        if gt is not None and not f > gt:
            return [("", f"Input should be greater than {gt:g}")]
        if ge is not None and not f >= ge:
            return [("", f"Input should be greater than or equal to {ge:g}")]
        if le is not None and not f <= le:
            return [("", f"Input should be less than or equal to {le:g}")]
        return []

    return check


def _strict_int(ge: int) -> FieldCheck:
    """An int, not a bool, a float or a string (pydantic's ``strict=True``), >= ``ge``."""

    def check(v: Any) -> Errors:
        if type(v) is not int:
            return [("", "Input should be a valid integer")]
        if v < ge:
            return [("", f"Input should be greater than or equal to {ge}")]
        return []

    return check


def _integer(ge: int) -> FieldCheck:
    """An int by pydantic's lax rules (an integral float, an integer string), >= ``ge``."""

    def check(v: Any) -> Errors:
        n = lax_int(v)
        if isinstance(n, str):
            return [("", n)]
        if n < ge:
            return [("", f"Input should be greater than or equal to {ge}")]
        return []

    return check


def _list_of(item: FieldCheck, after: Callable[[list[Any]], Any] | None = None) -> FieldCheck:
    """A list whose items pass ``item`` (one error per bad item, located by index)."""

    def check(v: Any) -> Errors:
        if not isinstance(v, (list, tuple)):
            return [("", "Input should be a valid list")]
        errs = [(f".{i}{sub}", msg) for i, x in enumerate(v) for sub, msg in item(x)]
        if not errs and after is not None:
            try:
                after(list(v))
            except ValueError as e:
                return [("", str(e))]
        return errs

    return check


def _one_of(*allowed: str) -> FieldCheck:
    quoted = [repr(a) for a in allowed]
    msg = "Input should be " + ", ".join(quoted[:-1]) + " or " + quoted[-1]

    def check(v: Any) -> Errors:
        return [] if isinstance(v, str) and v in allowed else [("", msg)]

    return check


def _non_empty(v: list[Any]) -> None:
    if not v:
        raise ValueError("embedding must not be empty")


NAME = _text(after=_name)
CONTENT = _text(1, MAX_CONTENT, _not_blank)
SUBJECT = _text(1, 256, _printable_subject)
VALUE = _text(max_len=MAX_CONTENT)
SHORT_TEXT = _text(max_len=MAX_SHORT_TEXT)
IMPORTANCE = _number(ge=0.0, le=1.0)
SEQ = _strict_int(1)
VERSION = _strict_int(0)
VECTOR = _list_of(_number(), _non_empty)
STATUS = _one_of(*STATUSES)


MAX_ORIGINS = 64
"""Origins one memory may carry (a bootstrapped fact carries its global fact's too)."""
MAX_SEQS = 256
"""Raw seqs one origin may list (the first ones: enough to find the raw events back)."""

_ORIGIN_TEXT_KEYS = ("swarm", "name", "fact")


def _origin_text(v: Any, key: str) -> str | None:
    if not isinstance(v, str) or not v or len(v) > 256 or not v.isprintable():
        return f"origin {key} must be printable text of 1 to 256 characters"
    return None


def origin_problem(o: Any) -> str | None:
    """Why ``o`` is not a valid origin dict, or None: ``{"swarm", "name", "fact"}`` short
    printable text, ``seqs`` at most ``MAX_SEQS`` seqs, ``version`` >= 0, ``sig`` text.
    (What an origin means, and how the fold keeps it: ``synthesizer/state/origins.py``.)"""
    if not isinstance(o, dict):
        return "an origin must be an object"
    for key in _ORIGIN_TEXT_KEYS:
        if key not in o:
            return f"origin needs {key!r}"
        bad = _origin_text(o[key], key)
        if bad:
            return bad
    seqs = o.get("seqs", [])
    if not isinstance(seqs, list) or len(seqs) > MAX_SEQS:
        return f"origin seqs must be a list of at most {MAX_SEQS} seqs"
    if not all(type(q) is int and q >= 1 for q in seqs):
        return "origin seqs must be integers >= 1"
    version = o.get("version", 0)
    if type(version) is not int or version < 0:
        return "origin version must be an integer >= 0"
    if "sig" in o and _origin_text(o["sig"], "sig"):
        return _origin_text(o["sig"], "sig")
    return None


def check_origins(v: list[Any]) -> None:
    """Raise ValueError unless ``v`` is a list of valid origins (at most ``MAX_ORIGINS``)."""
    if len(v) > MAX_ORIGINS:
        raise ValueError(f"at most {MAX_ORIGINS} origins")
    for o in v:
        bad = origin_problem(o)
        if bad:
            raise ValueError(bad)


def _origin(v: Any) -> Errors:
    bad = origin_problem(v)
    return [("", bad)] if bad else []


def _origins_bound(v: list[Any]) -> None:
    if len(v) > MAX_ORIGINS:
        raise ValueError(f"at most {MAX_ORIGINS} origins")


ORIGINS = _list_of(_origin, _origins_bound)


def _fields(*spec: tuple[str, FieldCheck, str]) -> Callable[[dict[str, Any]], Errors]:
    """The check of a body with these fields, each ``(name, check, mode)``: mode
    ``required``, ``optional`` (has a default; None is not allowed) or ``nullable``
    (None allowed); other keys are ignored, as the models ignore them."""

    def check(body: dict[str, Any]) -> Errors:
        errs: Errors = []
        for name, field, mode in spec:
            if name not in body:
                if mode == "required":
                    errs.append((name, "Field required"))
                continue
            v = body[name]
            if v is None and mode == "nullable":
                continue
            errs.extend((name + sub, msg) for sub, msg in field(v))
        return errs

    return check


def _config(v: Any) -> Errors:
    """A whole configuration (``config.SynthConfig``: plain records, cheap to import)."""
    from synthesizer.config import SynthConfig, ValidationError

    try:
        SynthConfig.model_validate(v)
    except ValidationError as e:
        return [
            ("".join(f".{p}" for p in err["loc"]), str(err["msg"]).removeprefix("Value error, "))
            for err in e.errors()
        ]
    return []


def _mapping(v: Any) -> Errors:
    return [] if isinstance(v, dict) else [("", "Input should be a valid dictionary")]


def _some_identity(body: dict[str, Any]) -> Errors:
    if all(body.get(k) is None for k in ("agent", "session", "thread")):
        return [("", "give an agent, a session or a thread to forget")]
    return []


def _embedder_with_embedding(body: dict[str, Any]) -> Errors:
    if body.get("embedding") is not None and body.get("embedder") is None:
        return [("", "embedder is required when an embedding is given")]
    return []


_PLAIN: dict[str, tuple[Callable[[dict[str, Any]], Errors], ...]] = {
    MEMORY_SHARED: (
        _fields(
            ("content", CONTENT, "required"),
            ("category", NAME, "optional"),
            ("importance", IMPORTANCE, "optional"),
            ("thread", NAME, "nullable"),
            ("subject", SUBJECT, "nullable"),
            ("value", VALUE, "nullable"),
            ("ttl_s", _number(gt=0.0), "nullable"),
            ("embedding", VECTOR, "nullable"),
            ("embedder", NAME, "nullable"),
            ("origins", ORIGINS, "nullable"),
        ),
        _embedder_with_embedding,
    ),
    MEMORY_REINFORCED: (_fields(("target", NAME, "required")),),
    MEMORY_FEEDBACK: (
        _fields(("target", NAME, "required"), ("usefulness", _number(), "required")),
    ),
    BOARD_CONFLICT: (
        _fields(
            ("target", NAME, "required"),
            ("expected", _integer(0), "required"),
            ("actual", _integer(0), "required"),
        ),
    ),
    IDENTITY_FORGOTTEN: (
        _fields(
            ("agent", NAME, "nullable"), ("session", NAME, "nullable"), ("thread", NAME, "nullable")
        ),
        _some_identity,
    ),
    MEMORY_RECALLED: (_fields(("query", VALUE, "optional"), ("hits", _list_of(NAME), "optional")),),
    FACT_UPDATED: (
        _fields(
            ("content", CONTENT, "nullable"),
            ("value", VALUE, "nullable"),
            ("status", STATUS, "nullable"),
            ("reason", SHORT_TEXT, "nullable"),
            ("evidence", _list_of(SEQ), "nullable"),
            ("category", NAME, "nullable"),
            ("importance", IMPORTANCE, "nullable"),
            ("subject", SUBJECT, "nullable"),
            ("base", VERSION, "nullable"),
        ),
    ),
    FACT_RETRACTED: (_fields(("reason", SHORT_TEXT, "nullable"), ("base", VERSION, "nullable")),),
    POOL_TICK: (),
    SESSION_STARTED: (_fields(("session", NAME, "nullable")),),
    SESSION_ENDED: (_fields(("session", NAME, "nullable")),),
    ORIGIN_WITHDRAWN: (
        _fields(("origins", ORIGINS, "required"), ("reason", SHORT_TEXT, "nullable")),
    ),
    PROMOTION_DONE: (
        _fields(("sessions", _list_of(NAME), "required"), ("target", SHORT_TEXT, "nullable")),
    ),
    SWARM_CONFIGURED: (
        _fields(("config", _config, "required"), ("changed", _mapping, "optional")),
    ),
}
"""Plain checks per type: the field checks, then (only when they pass) the whole-body
ones, as pydantic runs field validators before model validators."""

MODELLED = (
    FACT_CREATED,
    FACT_CORROBORATED,
    FACT_REVIVED,
    FACT_CONTESTED,
    FACT_RESOLVED,
    SYNTH_PROGRESS,
    JUDGE_ASKED,
    JUDGE_ANSWERED,
)
"""Types checked by their pydantic models in ``body_models``: the synthesizer's own (its
worker is a long-running process; an agent's call never appends them)."""

PLAIN_TYPES = tuple(_PLAIN)
"""Types checked here, in plain Python."""


def plain_errors(type_name: str, body: dict[str, Any]) -> Errors:
    """Every error of ``body`` as a ``type_name`` body, in pydantic's order."""
    errs: Errors = []
    for check in _PLAIN[type_name]:
        errs = check(body)
        if errs:
            break
    return errs


def plain_check(type_name: str) -> BodyCheck:
    """The one-line check of a plain-checked type (``envelope.one_line``'s format)."""

    def check(body: dict[str, Any]) -> str | None:
        errs = plain_errors(type_name, body)
        if not errs:
            return None
        loc, msg = errs[0]
        more = f" (and {len(errs) - 1} more)" if len(errs) > 1 else ""
        return f"{loc or 'event'}: {msg}{more}"

    return check
