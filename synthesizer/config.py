"""Configuration of the fold: pool, tiers and synthesizer constants, with the seeds' defaults.

A state is only comparable with another folded under the same configuration, so the
config has a stable ``digest()`` that checkpoints carry. The records are
``configmodel.Record``s (validated like pydantic models, without pydantic: every fold
builds one, including an agent's one ``board`` call).
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

from swarmlog.names import check_name
from synthesizer.configmodel import Record, ValidationError, nested, setting

EMBEDDERS = ("hash", "minilm")
"""Embedder names a configuration may choose (``search.embed.embedder_for`` makes them)."""
RETENTION_MODES = ("archive", "delete")
PROMOTION_WHEN = ("manual", "session_end")
TIER_NAMES = ("working", "short_term", "long_term")


def _auto(v: Any) -> Any:
    """``auto`` (or empty, ``none``, ``null``) from a command line means the embedder's."""
    if isinstance(v, str) and v.strip().lower() in ("", "auto", "none", "null"):
        return None
    return v


def _known_mode(v: str) -> str:
    if v not in RETENTION_MODES:
        raise ValueError(f"mode must be one of {', '.join(RETENTION_MODES)}, not {v!r}")
    return v


def _one_of(what: str, allowed: tuple[str, ...]) -> Any:
    def check(v: str) -> str:
        if v not in allowed:
            raise ValueError(f"{what} must be one of {', '.join(allowed)}, not {v!r}")
        return v

    return check


def _target(v: str) -> str:
    if len(v) > 1024 or any(not ch.isprintable() for ch in v):
        raise ValueError("target must be a printable path or nats:// URL")
    return v


def _known_embedder(v: str) -> str:
    if v not in EMBEDDERS:
        raise ValueError(f"embedder must be one of {', '.join(EMBEDDERS)}, not {v!r}")
    return v


def _operator_names(v: Any) -> Any:
    """Operators as a list of agent names (``a,b`` from the command line too)."""
    if isinstance(v, str):
        v = [x.strip() for x in v.split(",") if x.strip()]
    if isinstance(v, (list, tuple)):
        for name in v:
            check_name("operator", name)
    return v


def _judge_names(v: Any) -> Any:
    """Judges as a list of agent names (``a,b`` from the command line too)."""
    if isinstance(v, str):
        v = [x.strip() for x in v.split(",") if x.strip()]
    if isinstance(v, (list, tuple)):
        for name in v:
            check_name("judge", name)
    return v


class PoolConfig(Record):
    """The seed pool (000): strength decay per tick, eviction, capacity, reinforcement."""

    decay_rate: float = setting(0.05, ge=0.0, lt=1.0)
    eviction_threshold: float = setting(0.1, ge=0.0)
    capacity: int = setting(1000, ge=1)
    boost: float = setting(0.2, ge=0.0)
    max_strength: float = setting(1.0, gt=0.0)
    revivable: int = setting(10_000, ge=0)
    """Evicted facts kept so a rediscovery revives them (oldest dropped first; 0: none)."""


class TierConfig(Record):
    """Three-tier consolidation (seed 003): energy decay per hour, promotion, clusters."""

    working_decay: float = setting(0.5, ge=0.0)
    short_decay: float = setting(0.05, ge=0.0)
    long_decay: float = setting(0.001, ge=0.0)
    promote_short: float = setting(2.0)
    promote_long: float = setting(5.0)
    session_end_promote: float = setting(1.5)
    working_expire: float = setting(0.1)
    access_energy: float = setting(1.0)
    coactivation_threshold: int = setting(3, ge=0)
    retro_similarity: float = setting(0.7)
    retro_factor: float = setting(0.5)


class SynthSettings(Record):
    """The synthesizer worker's decisions: near-duplicate cosine, checkpoint cadence, how
    many of the newest checkpoints are kept, and ``lease_timeout_s``: how long a lease
    holder's batches may stop before another worker takes the lease over (see
    ``synthesizer.worker.lease``).

    ``near_duplicate`` None (the default; ``auto`` on a command line) means the embedder's
    own threshold (0.9 for the hashing embedder, lower for a real one); a number overrides
    it.
    """

    near_duplicate: float | None = setting(None, kind="float?", ge=-1.0, le=1.0, before=_auto)
    checkpoint_every: int = setting(1000, ge=1)
    """Events between the worker's periodic checkpoints (a state of more than 20x as many
    facts waits facts/20 events: a checkpoint costs O(facts), see ``Synthesizer``)."""
    checkpoint_keep: int = setting(3, ge=1)
    """Newest checkpoints kept (pinned ones come on top); older ones are deleted."""
    lease_timeout_s: float = setting(30.0, gt=0.0, finite=True)
    contest_floor: float | None = setting(None, kind="float?", ge=-1.0, le=1.0, before=_auto)
    """Cosine from which a candidate is compared for a contradiction (None: the lower of
    the near-duplicate cosine and ``CONTEST_FLOOR``); merging still needs ``near_duplicate``."""
    judge: str = setting("")
    """A judge for the pairs the merge rule cannot settle (``synthesizer.judge``): empty
    (off), a registered name, ``module:callable``, or the URL of an OpenAI-compatible
    chat-completions endpoint; ``judge_model`` is the model it names."""
    judge_model: str = setting("")
    judges: tuple[str, ...] = setting((), kind="names", before=_judge_names)
    """Agents whose ``judge.answered`` the fold honours besides the synthesizer and the
    operators (an MCP server's agent that answers through sampling, a judge process)."""


class RetentionConfig(Record):
    """Bounded growth (docs/retention.md): how much raw history the log keeps in its segments.

    0 turns a rule off; with every rule off (the default) nothing is ever compacted.
    With several on, history goes once any rule lets it go (each bounds growth), but
    never past a checkpoint, so the state stays reconstructible. ``mode`` says whether
    compacted segments are archived (compressed, still readable) or deleted (ids kept).
    """

    keep_checkpoints: int = setting(0, ge=0)
    """Keep raw history after the K-th newest checkpoint (0: no such rule)."""
    max_age_days: float = setting(0.0, ge=0.0)
    """Keep raw history younger than this many days (0: no such rule)."""
    max_bytes: int = setting(0, ge=0)
    """Keep at most about this many bytes of segments (0: no such rule)."""
    mode: str = setting("archive", after=_known_mode, shown=" | ".join(RETENTION_MODES))

    @property
    def active(self) -> bool:
        """True when any rule is set (else compaction never removes anything)."""
        return bool(self.keep_checkpoints or self.max_age_days or self.max_bytes)


class PromotionConfig(Record):
    """Knowledge that compounds (docs/design.md §12): where this swarm's facts are promoted.

    ``target`` names the global memory (a directory or ``nats://…/STREAM``; empty: none);
    ``when`` is ``manual`` (``swarmlog promote``) or ``session_end`` (each ended
    session's qualifying facts are harvested, retried until they reach the target).
    ``tier`` and ``min_support`` say which facts qualify for the automatic harvest.
    """

    target: str = setting("", after=_target, shown="path | nats://host:port/STREAM")
    when: str = setting(
        "manual", after=_one_of("when", PROMOTION_WHEN), shown=" | ".join(PROMOTION_WHEN)
    )
    tier: str = setting(
        "short_term", after=_one_of("tier", TIER_NAMES), shown=" | ".join(TIER_NAMES)
    )
    min_support: int = setting(1, ge=1)


class SynthConfig(Record):
    """Everything the fold and the synthesizer are parameterised by.

    ``importance_weight`` (w in [0, 1]) sets how much importance counts in search
    relevance: the factor is ``1 - w + w * importance`` (w = 1: plain importance, as in
    the seed pool; w = 0: importance ignored). ``embedder`` names the local embedder of
    the swarm (``hash``: the deterministic hashing embedder; ``minilm``: the extra).
    ``operators`` are the agents that may forget an identity other than their own
    (``identity.forgotten``; see ``authz``).
    """

    pool: PoolConfig = nested(PoolConfig)
    tiers: TierConfig = nested(TierConfig)
    synthesizer: SynthSettings = nested(SynthSettings)
    retention: RetentionConfig = nested(RetentionConfig)
    promotion: PromotionConfig = nested(PromotionConfig)
    importance_weight: float = setting(1.0, ge=0.0, le=1.0)
    embedder: str = setting("hash", after=_known_embedder, shown=" | ".join(EMBEDDERS))
    operators: tuple[str, ...] = setting(("operator",), kind="names", before=_operator_names)

    def canonical_json(self) -> bytes:
        """The config as canonical JSON (sorted keys), the input of ``digest()``. Settings
        added later are left out while at their defaults, so older digests still hold."""
        d = self.model_dump(mode="json")
        synth = d["synthesizer"]
        for name, default in _LATER_DEFAULTS.items():
            if synth.get(name) == default:
                synth.pop(name, None)
        return orjson.dumps(d, option=orjson.OPT_SORT_KEYS)

    def digest(self) -> str:
        """A stable hex hash of the configuration (blake2b-128 of its canonical JSON)."""
        return hashlib.blake2b(self.canonical_json(), digest_size=16).hexdigest()


_LATER_DEFAULTS: dict[str, object] = {
    "contest_floor": None,
    "judge": "",
    "judge_model": "",
    "judges": [],
}
DEFAULT_CONFIG = SynthConfig()
CONTEST_FLOOR = 0.55
"""Default cosine from which candidates are checked for contradictions."""

__all__ = [
    "CONTEST_FLOOR",
    "DEFAULT_CONFIG",
    "EMBEDDERS",
    "RETENTION_MODES",
    "PoolConfig",
    "PromotionConfig",
    "RetentionConfig",
    "SynthConfig",
    "SynthSettings",
    "TierConfig",
    "ValidationError",
]
