"""The pydantic models of the synthesizer's event bodies: the schema of record.

``events`` checks the bodies agents write per action (``memory.shared``,
``memory.reinforced``, ``fact.updated`` …) in plain Python, with the same results and
one-line errors as these models (tests/test_body_checks.py compares them), so an append
does not import pydantic; the other types (the synthesizer's own events, the
feedback, conflicts, erasures) are validated by these models, built the
first time a body of that type is appended. The seeds' facade models
(``seedvocab.py``, ``compat/models.py``) build on the field types here.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from swarmlog.names import check_name
from synthesizer.events import (
    BOARD_CONFLICT,
    FACT_CONTESTED,
    FACT_CORROBORATED,
    FACT_CREATED,
    FACT_RESOLVED,
    FACT_RETRACTED,
    FACT_REVIVED,
    FACT_UPDATED,
    IDENTITY_FORGOTTEN,
    JUDGE_ANSWERED,
    JUDGE_ASKED,
    MAX_CONTENT,
    MAX_ORIGINS,
    MAX_SHORT_TEXT,
    MEMORY_FEEDBACK,
    MEMORY_RECALLED,
    MEMORY_REINFORCED,
    MEMORY_SHARED,
    ORIGIN_WITHDRAWN,
    POOL_TICK,
    PROMOTION_DONE,
    SESSION_ENDED,
    SESSION_STARTED,
    SYNTH_PROGRESS,
    origin_problem,
)

# ---------------------------------------------------------------- field types


def _name(v: str) -> str:
    """A valid short name (see swarmlog.names)."""
    return check_name("name", v)


def _content(v: str) -> str:
    """Content must have a non-blank character."""
    if not v.strip():
        raise ValueError("content must not be blank")
    return v


def _finite_vector(v: list[float]) -> list[float]:
    """A non-empty vector of finite floats."""
    if not v:
        raise ValueError("embedding must not be empty")
    if not all(math.isfinite(x) for x in v):
        raise ValueError("embedding must hold finite numbers only")
    return v


def _subject(v: str) -> str:
    """A subject is non-blank printable text."""
    if not v.strip() or any(not ch.isprintable() for ch in v):
        raise ValueError("subject must be non-blank printable text")
    return v


def _origin(v: object) -> object:
    """One origin dict (what it means: ``synthesizer/state/origins.py``)."""
    bad = origin_problem(v)
    if bad:
        raise ValueError(bad)
    return v


def _origins_bound(v: list[object]) -> list[object]:
    if len(v) > MAX_ORIGINS:
        raise ValueError(f"at most {MAX_ORIGINS} origins")
    return v


Name = Annotated[str, AfterValidator(_name)]
Content = Annotated[str, Field(min_length=1, max_length=MAX_CONTENT), AfterValidator(_content)]
Subject = Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_subject)]
Value = Annotated[str, Field(max_length=MAX_CONTENT)]
ShortText = Annotated[str, Field(max_length=MAX_SHORT_TEXT)]
Importance = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Finite = Annotated[float, Field(allow_inf_nan=False)]
Cosine = Annotated[float, Field(ge=-1.0, le=1.0, allow_inf_nan=False)]
Seq = Annotated[int, Field(ge=1, strict=True)]
Version = Annotated[int, Field(ge=0, strict=True)]
Vector = Annotated[list[Finite], AfterValidator(_finite_vector)]
Origins = Annotated[list[Annotated[Any, AfterValidator(_origin)]], AfterValidator(_origins_bound)]
Status = Literal["active", "contested", "superseded", "retracted"]


class _Body(BaseModel):
    """Common settings: extra fields are tolerated (forward compatibility)."""

    # defer_build: a model's validator is built when a body of its type is first
    # validated, not at import (a process appending one type builds one model)
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)


# ---------------------------------------------------------------- agent events


class MemoryShared(_Body):
    """A raw memory; thread and session normally come from the envelope."""

    content: Content
    category: Name = "general"
    importance: Importance = 0.5
    thread: Name | None = None
    subject: Subject | None = None
    value: Value | None = None
    ttl_s: Annotated[float, Field(gt=0.0, allow_inf_nan=False)] | None = None
    embedding: Vector | None = None
    embedder: Name | None = None
    origins: Origins | None = None

    @model_validator(mode="after")
    def _embedder_with_embedding(self) -> MemoryShared:
        if self.embedding is not None and self.embedder is None:
            raise ValueError("embedder is required when an embedding is given")
        return self


class MemoryReinforced(_Body):
    """One agent's vote for a fact (counted once per agent per fact)."""

    target: Name


class MemoryRecalled(_Body):
    """A search and the facts it returned (an access of each hit)."""

    query: Annotated[str, Field(max_length=MAX_CONTENT)] = ""
    hits: list[Name] = Field(default_factory=list)


class MemoryFeedback(_Body):
    """Usefulness of a fact for the agent; finite, clamped to [-1, 1] by the fold."""

    target: Name
    usefulness: Finite


class FactUpdated(_Body):
    """A board write (usually CAS); creates the fact when its key is not a live fact."""

    content: Content | None = None
    value: Value | None = None
    status: Status | None = None
    reason: ShortText | None = None
    evidence: list[Seq] | None = None
    category: Name | None = None
    importance: Importance | None = None
    subject: Subject | None = None
    base: Version | None = None  # the version the board's CAS expected (authz)


class FactRetracted(_Body):
    """A board retraction; retracted status sticks against later corroboration."""

    reason: ShortText | None = None
    base: Version | None = None


class OriginWithdrawn(_Body):
    """Origins taken back off a global fact (keyed by it; see synthesizer.state.origins)."""

    origins: Origins
    reason: ShortText | None = None


class PromotionDone(_Body):
    """A task swarm's ended sessions whose facts were promoted (synthesizer.promotion.promote)."""

    sessions: list[Name]
    target: ShortText | None = None


class _SynthBody(_Body):
    """A synthesizer event: ``lease`` is the ``synthesizer`` key version its batch expected."""

    lease: Version | None = None


class PoolTick(_Body):
    """One decay step of the pool; no fields."""


class SessionBound(_Body):
    """session.started / session.ended; the session defaults to the envelope's."""

    session: Name | None = None


class IdentityForgotten(_Body):
    """An erasure request for an agent, a session or a thread (at least one)."""

    agent: Name | None = None
    session: Name | None = None
    thread: Name | None = None

    @model_validator(mode="after")
    def _one_identity(self) -> IdentityForgotten:
        if self.agent is None and self.session is None and self.thread is None:
            raise ValueError("give an agent, a session or a thread to forget")
        return self


class BoardConflict(_Body):
    """A CAS attempt that lost (recorded for metrics only)."""

    target: Name
    expected: Annotated[int, Field(ge=0)]
    actual: Annotated[int, Field(ge=0)]


# ---------------------------------------------------------------- synthesizer events


class FactCreated(_SynthBody):
    """A new fact from raw memory ``evidence``; ``related`` feeds retro strengthening."""

    evidence: Seq
    signature: Annotated[str, Field(min_length=1, max_length=256)]
    related: list[tuple[Name, Cosine]] = Field(default_factory=list)
    judged: list[tuple[Name, ShortText]] = Field(default_factory=list)
    """Candidates a judge called another statement ([fact, answer]), with who judged."""
    judge: ShortText | None = None
    model: ShortText | None = None


class FactCorroborated(_SynthBody):
    """Raw memory ``evidence`` is a duplicate (exact or near) of the keyed fact (also the
    body of ``fact.revived``: the duplicate brings the evicted fact back)."""

    evidence: Seq
    kind: Literal["exact", "near"]
    similarity: Cosine = 1.0
    judge: ShortText | None = None
    model: ShortText | None = None


class FactContested(_SynthBody):
    """Facts with the same subject and different values, or (``subject`` None) free-text
    statements the merge rule or a judge found contradictory (``reason``; ``judge`` and
    ``model`` when a judge decided)."""

    subject: Subject | None = None
    rivals: list[Name] = Field(default_factory=list)
    reason: ShortText = ""
    judge: ShortText | None = None
    model: ShortText | None = None


class FactResolved(_SynthBody):
    """A contest's outcome: winner active, losers superseded (may flip later)."""

    subject: Subject | None = None
    winner: Name
    losers: list[Name] = Field(default_factory=list)
    reason: ShortText = ""


class SynthProgress(_SynthBody):
    """The highest raw seq the synthesizer has decided, and who holds the lease (see lease)."""

    upto: Annotated[int, Field(ge=0, strict=True)]
    worker: ShortText | None = None
    host: ShortText | None = None
    pid: Annotated[int, Field(ge=0)] | None = None
    since: Annotated[float, Field(ge=0.0, allow_inf_nan=False)] | None = None
    released: bool = False
    lexicon: ShortText | None = None  # the merge rule's lexicon (merge.lexicon_identity)


class JudgeAsked(_SynthBody):
    """Facts ``a`` and ``b`` may be the same statement (the merge rule was unsure at
    cosine ``score``): linked as possible duplicates until question ``question`` is
    answered. Ids only, never the statements: erasure has nothing to scrub here."""

    question: Annotated[str, Field(min_length=1, max_length=256)]
    a: Name
    b: Name
    score: Cosine
    reason: ShortText = ""


class JudgeAnswered(_Body):
    """A judge's ``answer`` to an open question, with the judge's name and model."""

    question: Annotated[str, Field(min_length=1, max_length=256)]
    answer: Literal["same", "contradicts", "different"]
    judge: ShortText = ""
    model: ShortText = ""


BODY_MODELS: dict[str, type[BaseModel]] = {
    MEMORY_SHARED: MemoryShared,
    MEMORY_REINFORCED: MemoryReinforced,
    MEMORY_RECALLED: MemoryRecalled,
    MEMORY_FEEDBACK: MemoryFeedback,
    FACT_CREATED: FactCreated,
    FACT_CORROBORATED: FactCorroborated,
    FACT_REVIVED: FactCorroborated,
    FACT_CONTESTED: FactContested,
    FACT_RESOLVED: FactResolved,
    FACT_UPDATED: FactUpdated,
    FACT_RETRACTED: FactRetracted,
    POOL_TICK: PoolTick,
    SESSION_STARTED: SessionBound,
    SESSION_ENDED: SessionBound,
    IDENTITY_FORGOTTEN: IdentityForgotten,
    SYNTH_PROGRESS: SynthProgress,
    BOARD_CONFLICT: BoardConflict,
    ORIGIN_WITHDRAWN: OriginWithdrawn,
    PROMOTION_DONE: PromotionDone,
    JUDGE_ASKED: JudgeAsked,
    JUDGE_ANSWERED: JudgeAnswered,
}
