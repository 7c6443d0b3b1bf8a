"""The words behind a fact's later evidence, kept so that erasure can reword the fact.

Why: a fact takes the words of the memory that created it. When the identity that wrote
that memory is forgotten and others still support the fact, the fact must keep *their*
words, not become a placeholder: its content becomes the earliest
surviving evidence's own words. The fold cannot read the log, so it keeps those words
itself: ``state.words`` maps a fact id to one entry per (agent, session) pair among its
evidence other than the first evidence's pair, the pair's earliest memory only (a later
memory of the same pair can never be the earliest survivor: forgetting an agent or a
session removes both). A fact corroborated only by its discoverer's pair costs nothing.

Entries are ``[seq, content, category, importance, subject, value, ttl_s, thread]`` (plain JSON,
serialized with the state; absent when empty so older digests are unchanged). An entry
goes when its evidence is erased or its fact is dropped (``drop``).
"""

from __future__ import annotations

from typing import Any, Protocol

from synthesizer.state.facts import Evidence, Fact, RawMemory

Entry = list[Any]
"""[seq, content, category, importance, subject, value, ttl_s, thread]"""


class WordState(Protocol):
    """What this module needs of ``SwarmState`` (structural)."""

    words: dict[str, list[Entry]]


def note(s: WordState, f: Fact, raw: RawMemory) -> None:
    """Remember ``raw``'s words for ``f`` before ``raw`` joins its evidence, unless a memory
    of the same (agent, session) already did (or ``raw`` already is evidence)."""
    pair = (raw.agent, raw.session)
    for e in f.evidence:
        if e.seq == raw.seq or (e.agent, e.session) == pair:
            return
    entry = [
        raw.seq,
        raw.content,
        raw.category,
        raw.importance,
        raw.subject,
        raw.value,
        raw.ttl_s,
        raw.thread,
    ]
    s.words.setdefault(f.id, []).append(entry)


def drop(s: WordState, fid: str) -> None:
    """Forget what was kept for fact ``fid`` (it left the state)."""
    s.words.pop(fid, None)


def keep_only(s: WordState, f: Fact) -> None:
    """Drop the entries of ``f`` whose evidence is gone or is now its first evidence."""
    have = s.words.get(f.id)
    if have is None:
        return
    alive = {e.seq for e in f.evidence[1:]}
    kept = [w for w in have if w[0] in alive]
    if kept:
        s.words[f.id] = kept
    else:
        del s.words[f.id]


def of(s: WordState, fid: str, ev: Evidence) -> Entry | None:
    """The words kept for evidence ``ev`` of fact ``fid`` (None: not kept)."""
    for w in s.words.get(fid, ()):
        if w[0] == ev.seq:
            return w
    return None


__all__ = ["Entry", "WordState", "drop", "keep_only", "note", "of"]
