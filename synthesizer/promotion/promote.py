"""Promotion: a task swarm's facts into a global memory (docs/design.md §12; seed 002's harvest).

A global memory is an ordinary swarm. Promoting appends to its log, for each qualifying
fact, a ``memory.shared`` that carries the fact's origin (``synthesizer.state.origins``); the
global synthesizer then merges, contests and resolves these memories by the rules any
memory meets, so two swarms promoting one statement make one global fact that lists both
origins.

* **Idempotent**: a promotion's event id is derived from (origin swarm id, fact id,
  version), so running it again appends nothing, and two promoters racing on the same
  fact store one event (the log's idempotent append).
* **Never stale**: what is already in the global memory is read from its state (the
  origins of its facts and of its undecided memories). A fact whose version moved is
  promoted again (``updated``); one that became another statement, or was retracted or
  superseded, has its old origin withdrawn (``origin.withdrawn``, a CAS write on the
  global fact: the fact loses that evidence and is retracted when none is left).
* **Qualifying facts**: active or contested, tier at or above ``tier``, at least
  ``min_support`` distinct backers, not only what was bootstrapped from the target itself.
  Backers are distinct clients (``synthesizer.promotion.clients``): the names one MCP
  connection minted from a team pattern count once.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from swarmlog import Event, SwarmlogError, VersionConflict
from synthesizer import events as T
from synthesizer.config import TIER_NAMES
from synthesizer.promotion.clients import backers
from synthesizer.state import origins as O
from synthesizer.state.facts import ACTIVE, CONTESTED, RETRACTED, SUPERSEDED, Fact
from synthesizer.worker.signature import signature

if TYPE_CHECKING:
    from swarmlog import Log
    from synthesizer.state import SwarmState


class Swarm(Protocol):
    """What promotion needs of a ``synthesizer.Swarm`` (structural: the swarm module
    imports this one, so it cannot be imported back)."""

    log: Log
    appends: Any

    @property
    def name(self) -> str: ...

    def refresh(self) -> SwarmState: ...

    def synthesize(self) -> int: ...

    def checkpoint(self, pinned: bool = False) -> int: ...

    def _reload(self) -> None: ...

    def search(self, query: str, limit: int = 10, category: str | None = None) -> list[Any]: ...

    def open_sibling(self, target: str, **log_options: Any) -> Swarm: ...

    def fork(self) -> Swarm: ...

    def close(self) -> None: ...

    def __enter__(self) -> Swarm: ...

    def __exit__(self, *exc: object) -> None: ...


PROMOTER = "promoter"
"""Agent name of promotion events that no fact's own agent can sign (withdrawals)."""

_LIVE = (ACTIVE, CONTESTED)
_GONE = (RETRACTED, SUPERSEDED)
_CHUNK = 512


class PromotionError(SwarmlogError, ValueError):
    """A promotion that cannot run (bad target, the target is this swarm): one line."""


@dataclass
class PromotionReport:
    """What a promotion did (or, with ``dry_run``, would do)."""

    target: str
    promoted: int = 0
    """Facts the global memory had never received from this swarm."""
    updated: int = 0
    """Facts received before whose version, statement or status changed since."""
    unchanged: int = 0
    """Facts the global memory already holds at their current version."""
    skipped: int = 0
    """Facts that do not qualify (tier, support, status, or bootstrapped from the target)."""
    withdrawn: int = 0
    """Origins taken back off global facts (a retraction, a new statement)."""
    dry_run: bool = False
    support_counts: str = "clients"
    """What ``min_support`` counted: distinct clients (``synthesizer.promotion.clients``)."""
    facts: list[str] = field(default_factory=list)
    """The ids of the facts promoted or updated."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def statement_sig(f: Fact) -> str:
    """The signature of what ``f`` says: its normalised content and its value."""
    return signature(f.content if f.value is None else f"{f.content}\x00{f.value}")


def promotion_id(swarm_id: str, fact_id: str, version: int, sig: str = "", by: str = "") -> str:
    """The event id of promoting ``fact_id`` at ``version`` (saying ``sig``, signed by
    agent ``by``) from swarm ``swarm_id``: the same promotion always has the same id, and
    one re-signed after an erasure (its discoverer forgotten) gets a new one."""
    key = f"promote:{swarm_id}:{fact_id}:{version}:{sig}:{by}"
    return "p" + hashlib.blake2b(key.encode(), digest_size=16).hexdigest()


def _tier_at_least(f: Fact, tier: str) -> bool:
    return TIER_NAMES.index(f.tier) >= TIER_NAMES.index(tier)


def _only_from(f: Fact, swarm_id: str) -> bool:
    """Whether every piece of ``f``'s evidence was carried from swarm ``swarm_id``."""
    carriers = {q for o in f.origins if o["swarm"] == swarm_id for q in o["at"]}
    return bool(carriers) and all(e.seq in carriers for e in f.evidence)


def qualifies(f: Fact, tier: str, min_support: int, target_id: str) -> bool:
    """Whether fact ``f`` is promoted (see the module docstring)."""
    return (
        f.status in _LIVE
        and _tier_at_least(f, tier)
        and f.support >= min_support
        and f.agent is not None
        and not _only_from(f, target_id)
    )


def _origin(swarm: Swarm, f: Fact) -> dict[str, Any]:
    return {
        "swarm": swarm.log.swarm_id,
        "name": swarm.name,
        "fact": f.id,
        "seqs": O.evidence_seqs(f),
        "version": f.version,
        "sig": statement_sig(f),
    }


def _carried(f: Fact, own: dict[str, Any], target_id: str) -> list[dict[str, Any]]:
    """The origins a promotion of ``f`` carries: its own, then those ``f`` came with
    (not the target's own: a bootstrapped fact promoted back names only this swarm)."""
    out = [own]
    for o in f.origins:
        if o["swarm"] != target_id and len(out) < O.MAX_ORIGINS:
            out.append({k: o[k] for k in ("swarm", "name", "fact", "seqs", "version")})
    return out


def scoped(kind: str, swarm_id: str, name: str | None) -> str | None:
    """The opaque name a session or thread of swarm ``swarm_id`` has in the global memory
    (a hash: the global never holds the name itself, and ``forget --propagate`` can still
    find what came from it)."""
    if name is None:
        return None
    h = hashlib.blake2b(f"{kind}:{swarm_id}:{name}".encode(), digest_size=12)
    return f"{kind}-{h.hexdigest()}"


def memory_event(
    f: Fact,
    event_id: str,
    origins: list[dict[str, Any]],
    agent: str | None = None,
    scope_of: str | None = None,
) -> Event:
    """The ``memory.shared`` that stands for fact ``f`` in another swarm; with
    ``scope_of`` (the origin swarm id) its session and thread are those of ``f``'s first
    evidence and of ``f``, as ``scoped`` names."""
    body: dict[str, Any] = {
        "content": f.content,
        "category": f.category,
        "importance": f.importance,
        "origins": origins,
    }
    if f.subject is not None:
        body["subject"] = f.subject
        body["value"] = f.value
    session = thread = None
    if scope_of is not None:
        session = scoped("s", scope_of, f.evidence[0].session if f.evidence else None)
        thread = scoped("t", scope_of, f.thread)
    return Event(
        id=event_id,
        agent=agent or f.agent or PROMOTER,
        session=session,
        thread=thread,
        type=T.MEMORY_SHARED,
        body=body,
    )


def received(
    gs: SwarmState, swarm_id: str
) -> tuple[dict[str, tuple[Fact, dict[str, Any]]], dict[str, tuple[int, str | None]]]:
    """What the global state ``gs`` holds from swarm ``swarm_id``: origin fact id ->
    (global fact, its origin entry), and origin fact id -> (version, statement signature)
    of memories not yet decided."""
    held: dict[str, tuple[Fact, dict[str, Any]]] = {}
    for fid, gfid in gs.origin_index.get(swarm_id, {}).items():
        g = gs.facts.get(gfid)
        o = O.carried_by(g, swarm_id).get(fid) if g is not None else None
        if g is not None and o is not None:
            held[fid] = (g, o)
    waiting: dict[str, tuple[int, str | None]] = {}
    for raw in gs.pending.values():
        for o in raw.origins or ():
            if isinstance(o, dict) and o.get("swarm") == swarm_id:
                ofid, v = o.get("fact"), o.get("version")
                if isinstance(ofid, str) and type(v) is int:
                    waiting[ofid] = max((v, o.get("sig")), waiting.get(ofid, (0, None)), key=_first)
    return held, waiting


def _first(t: tuple[int, str | None]) -> int:
    return t[0]


def check_target(target: str | os.PathLike[str]) -> str:
    """The target as a string (one-line error when empty)."""
    t = os.fspath(target)
    if not t:
        raise PromotionError("promotion needs a target: a directory or nats://host:port/STREAM")
    return t


def promote(
    swarm: Swarm,
    target: str | os.PathLike[str],
    tier: str = "long_term",
    min_support: int = 1,
    dry_run: bool = False,
    *,
    sessions: Collection[str] | None = None,
    synthesize: bool = True,
    only: Collection[str] | None = None,
) -> PromotionReport:
    """Promote ``swarm``'s qualifying facts into the global memory at ``target``.

    ``sessions`` limits it to facts with evidence from those sessions (the harvest at
    session end). With ``synthesize`` a one-off synthesizer pass on the global memory
    decides what was appended (it stands by if a worker holds the global's lease).
    ``only`` limits it to these fact ids (the ones held before an erasure, to update).
    """
    if tier not in TIER_NAMES:
        raise PromotionError(f"tier must be one of {', '.join(TIER_NAMES)}, not {tier!r}")
    if min_support < 1:
        raise PromotionError("min_support must be at least 1")
    t = check_target(target)

    state = swarm.refresh()
    report = PromotionReport(target=t, dry_run=dry_run)
    with swarm.open_sibling(t) as g:
        if g.log.swarm_id == swarm.log.swarm_id:
            raise PromotionError(f"cannot promote a swarm into itself ({t})")
        gs = g.refresh()
        held, waiting = received(gs, swarm.log.swarm_id)
        shares: list[Event] = []
        withdrawals: list[tuple[Fact, dict[str, Any], str]] = []
        for f in state.facts.values():
            if sessions is not None and not any(e.session in sessions for e in f.evidence):
                continue
            prev = held.get(f.id)
            if only is not None and f.id not in only:
                continue
            if not qualifies(f, tier, min_support, g.log.swarm_id) or (
                backers(swarm.log, f, min_support) < min_support
            ):
                if prev is not None and f.status in _GONE:
                    withdrawals.append((prev[0], prev[1], f"origin {f.status}"))
                    report.updated += 1
                    report.facts.append(f.id)
                else:
                    report.skipped += 1
                continue
            own = _origin(swarm, f)
            sig = own["sig"]
            same = prev is not None and prev[1].get("sig") == sig
            if (same and prev is not None and prev[1]["version"] >= f.version) or (
                waiting.get(f.id) == (f.version, sig)
            ):
                report.unchanged += 1
                continue
            shares.append(
                memory_event(
                    f,
                    promotion_id(own["swarm"], f.id, f.version, sig, f.agent or ""),
                    _carried(f, own, g.log.swarm_id),
                    scope_of=own["swarm"],
                )
            )
            report.facts.append(f.id)
            if prev is None:
                report.promoted += 1
            else:
                report.updated += 1
                if not same:
                    withdrawals.append((prev[0], prev[1], "origin changed"))
        report.withdrawn = len(withdrawals)
        if not dry_run:
            _write(g, shares, withdrawals, synthesize)
    return report


def _write(
    g: Swarm,
    shares: list[Event],
    withdrawals: list[tuple[Fact, dict[str, Any], str]],
    synthesize: bool,
) -> None:
    """The promotion written to the global memory ``g``: the shares in atomic chunks, then
    the withdrawals, then (``synthesize``) one synthesizer pass over what was shared."""
    for i in range(0, len(shares), _CHUNK):
        g.log.append_many(shares[i : i + _CHUNK])
    for gf, entry, reason in withdrawals:
        _withdraw(g, gf.id, entry, reason)
    if synthesize and shares:
        g.synthesize()


def _withdraw(g: Swarm, gfid: str, entry: dict[str, Any], reason: str, tries: int = 8) -> None:
    """Take origin ``entry`` off global fact ``gfid`` (a CAS write; retried on conflict
    while the global synthesizer adds evidence meanwhile)."""
    o = {k: entry[k] for k in ("swarm", "name", "fact", "seqs", "version")}
    for _ in range(tries):
        gf = g.refresh().facts.get(gfid)
        if gf is None or not any(O.same_origin(x, o) for x in gf.origins):
            return
        ev = Event(
            agent=PROMOTER,
            type=T.ORIGIN_WITHDRAWN,
            key=gfid,
            body={"origins": [o], "reason": reason, "base": gf.version},
        )
        try:
            g.log.append(ev, expect={gfid: gf.version})
            return
        except VersionConflict:
            continue
    raise PromotionError(f"global fact {gfid} kept changing: withdrawal not written; run again")
