"""Erasure in the fold: ``identity.forgotten`` (docs/design.md §9).

Drops the identity's pending raw memories and its evidence in facts (live ones and the
evicted ones kept for revival), facts left without evidence (or of the forgotten
thread) with their signatures, and the identity's per-agent counters. A fact that
survives on others' evidence but was *discovered* by the identity keeps nothing of the
identity's words: it takes the words of its earliest surviving evidence (kept by the
fold for that purpose, words.py) and what came with them (category, importance,
subject, value, TTL); its embedding and signature are dropped. No fact is ever left
with a placeholder: one whose survivor's words are unknown is dropped.

After ``swarmlog forget`` rewrote the log (synthesizer/forget/erase.py) the identity's memories
are redaction tombstones; ``on_tombstone`` is what the fold does with one instead of the
type's handler: a shared memory becomes a placeholder raw memory (content ``REDACTED``),
so a fact it started still exists for the others' evidence until the
``identity.forgotten`` rewords it; from there on the rewritten log and the original
fold to the same facts.
Kept out of ``state`` so the fold's module stays small; it needs only the state's shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping
from typing import Any, Protocol

from synthesizer import seedvocab as FE
from synthesizer.events import MEMORY_SHARED
from synthesizer.state.facts import Fact, RawMemory
from synthesizer.state.words import Entry as WordsEntry
from synthesizer.state.words import drop as drop_words
from synthesizer.state.words import keep_only as keep_only_words
from synthesizer.state.words import of as words_of

STORE_KEYED = frozenset((FE.STORE_PUT, FE.STORE_DELETED))
STORE_TYPES = frozenset(t for t, f in FE.FACADE_OF.items() if f == "store")

FORGOTTEN = "forgotten"
"""The eviction reason of a fact erased with its identity."""

REDACTED = "[redacted]"
"""The content of a fact (or raw memory) whose words were erased."""


class ErasableState(Protocol):
    """What erasure needs of ``SwarmState`` (structural: no import of the fold)."""

    facts: MutableMapping[str, Fact]
    evicted: MutableMapping[str, Fact]
    signatures: dict[str, str]
    pending: dict[int, RawMemory]
    recalled: dict[str, set[int]]
    accessed: dict[str, dict[str, list[str]]]
    words: dict[str, list[WordsEntry]]
    owners: dict[str, str]
    metrics: Any
    ext: Any

    def _evict(self, fid: str, reason: str) -> None: ...

    def _unindex_subject(self, f: Fact) -> None: ...

    def _index_subject(self, f: Fact) -> None: ...


def _scrub(
    facts: Iterable[Fact],
    hit: Callable[[str, str | None], bool],
    thread: str | None,
    agent: str | None,
    reword: list[Fact],
    changed: list[Fact],
) -> list[str]:
    """Remove the identity's evidence and reinforcements; return the facts to drop (and
    add to ``reword`` the surviving ones the identity discovered, to ``changed`` every
    surviving one that lost evidence)."""
    drop: list[str] = []
    for f in facts:
        if thread is not None and f.thread == thread:
            drop.append(f.id)
            continue
        kept = [e for e in f.evidence if not hit(e.agent, e.session)]
        if len(kept) != len(f.evidence):
            first = f.evidence[0]
            f.evidence = kept
            if not kept:
                drop.append(f.id)
            else:
                changed.append(f)
                if hit(first.agent, first.session):
                    reword.append(f)
        if agent is not None and agent in f.reinforced_by:
            f.reinforced_by.remove(agent)
    return drop


def _unsign(s: ErasableState, f: Fact) -> None:
    sig = f.signature
    if sig is not None and s.signatures.get(sig) == f.id:
        del s.signatures[sig]


def _reword(s: ErasableState, f: Fact, w: WordsEntry) -> None:
    """A surviving fact the forgotten identity discovered takes the words (and what came
    with them: category, importance, subject, value, TTL, thread, session) of its
    earliest surviving evidence ``w``; its embedding and signature, derived from the
    erased words, are dropped (the vector index embeds the new words)."""
    live = s.facts.get(f.id) is f
    _unsign(s, f)
    if f.subject is not None and live:
        s._unindex_subject(f)
    ev = f.evidence[0]
    _, content, category, importance, subject, value, ttl, thread = w
    f.content = content
    f.category = category
    f.importance = importance
    f.subject = subject
    f.value = value
    f.expires_at = None if ttl is None else ev.ts + ttl
    f.thread = thread
    f.session = ev.session
    f.signature = None
    f.embedding = None
    f.embedder = None
    if subject is not None and live:
        s._index_subject(f)


def on_tombstone(s: ErasableState, d: dict[str, Any]) -> None:
    """What the fold does with a redaction tombstone instead of its type's handler.

    A ``memory.shared`` leaves a placeholder raw memory (content ``REDACTED``, default
    category and importance; counted as the original was), so the synthesizer's decision
    on it still applies; store writes still move the store's key versions. Anything else
    erased changes nothing.
    """
    t = d["type"]
    if t == MEMORY_SHARED:
        m = s.metrics
        m.raw_total += 1
        agent = d["agent"]
        m.shared[agent] = m.shared.get(agent, 0) + 1
        seq = d["seq"]
        s.pending[seq] = RawMemory(
            seq=seq,
            agent=agent,
            session=d.get("session"),
            thread=d.get("thread"),
            ts=d["ts"],
            content=REDACTED,
            category="general",
            importance=0.5,
        )
    elif t in STORE_KEYED:
        x = s.ext
        x.counts["store"] = x.counts.get("store", 0) + 1
        key = d.get("key")
        if key is not None:
            x.keyver[key] = d["seq"]
    elif t in STORE_TYPES:
        x = s.ext
        x.counts["store"] = x.counts.get("store", 0) + 1


def on_forgotten(s: ErasableState, d: dict[str, Any]) -> None:
    """identity.forgotten: erase an agent, a session or a thread from the state."""
    b = d["body"]
    agent, session, thread = b.get("agent"), b.get("session"), b.get("thread")

    def hit(e_agent: str, e_session: str | None) -> bool:
        return (agent is not None and e_agent == agent) or (
            session is not None and e_session == session
        )

    for q in [
        q
        for q, r in s.pending.items()
        if hit(r.agent, r.session)
        or (thread is not None and r.thread == thread)
        or r.content == REDACTED  # a tombstone's placeholder (see on_tombstone)
    ]:
        del s.pending[q]
    reword: list[Fact] = []
    changed: list[Fact] = []
    for fid in _scrub(s.facts.values(), hit, thread, agent, reword, changed):
        _unsign(s, s.facts[fid])
        s._evict(fid, FORGOTTEN)
    for fid in _scrub(s.evicted.values(), hit, thread, agent, reword, changed):
        _unsign(s, s.evicted.pop(fid))
        drop_words(s, fid)
    for f in reword:
        w = words_of(s, f.id, f.evidence[0])
        if w is not None:
            _reword(s, f, w)
            continue
        # the survivor's words are unknown (a state from before they were kept): the
        # fact goes rather than keep the identity's words or a placeholder
        _unsign(s, f)
        if s.facts.get(f.id) is f:
            s._evict(f.id, FORGOTTEN)
        else:
            s.evicted.pop(f.id, None)
        drop_words(s, f.id)
    for f in changed:
        keep_only_words(s, f)
    owners = s.owners
    if session is not None:
        owners.pop(session, None)
    if thread is not None:
        owners.pop(" " + thread, None)  # (authz.THREAD_KEY)
    if agent is not None:
        for name in [k for k, v in owners.items() if v == agent]:
            del owners[name]  # (session names the identity chose)
    if session is not None:  # its name is the identity's: no trace of it stays
        for a in [a for a, m in s.accessed.items() if session in m]:
            del s.accessed[a][session]
            if not s.accessed[a]:
                del s.accessed[a]
    if agent is not None:
        s.accessed.pop(agent, None)
        s.recalled.pop(agent, None)
        m = s.metrics
        for counts in (m.by_agent, m.recalls, m.shared, m.causes, m.cas):
            counts.pop(agent, None)


__all__ = ["FORGOTTEN", "REDACTED", "ErasableState", "on_forgotten", "on_tombstone"]
