"""Strings a forgotten identity chose that are not words: event ids and keys.

Besides its words and names, an identity leaves strings it picked in the envelope: the
**event ids** of its records (an idempotency id such as ``req-SECRET-1``) and the
**keys** it created (a board key such as ``door-code-SECRET-4711``). A key is the
identity's when the first record in the log that carries it is one of its own; from
then on the key is a fact id, and others name it too: their later writes on the key
(``key`` in the envelope, a CAS by another agent) and their references to the fact in
bodies (``REFS``: a recall's hits, a reinforcement's or feedback's target, a conflict's
target, a contest's rivals, the synthesizer's related facts).

A forget replaces each by a stable keyed pseudonym (``pseudonym``: the same key gives
the same pseudonym, so every reference to one key moves in step and the rewritten log
folds to the same facts under the new name). Erasure requests and plans keep their ids
(forget made them; the request's id keys the pseudonyms), and the configuration key is
never renamed. Indexes built from ids and keys (a FileLog's shared writer index, its view
snapshot, an archive's ids file) are rebuilt by the redaction (swarmlog/file/redact.py).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from synthesizer import events as T
from synthesizer.state.judging import pair_of, question_id

PSEUDONYM = "~erased-"
"""Prefix of every pseudonym a forget writes (never renamed again)."""

REFS: dict[str, tuple[str, ...]] = {
    T.MEMORY_RECALLED: ("hits",),
    T.MEMORY_REINFORCED: ("target",),
    T.MEMORY_FEEDBACK: ("target",),
    T.BOARD_CONFLICT: ("target",),
    T.FACT_CONTESTED: ("rivals",),
    T.FACT_CREATED: ("related",),
    T.JUDGE_ASKED: ("a", "b"),
    T.JUDGE_ANSWERED: (),
}
"""Body fields that name facts (by key): a string, a list of strings, or (``related``)
a list of ``[fact id, score]`` pairs. A judge's question (``QUESTION``) names its two
facts in its id, renamed with them (``_question``)."""

QUESTION = frozenset((T.JUDGE_ASKED, T.JUDGE_ANSWERED))
"""Types whose body's ``question`` is a pair of fact ids (``state.judging.question_id``)."""


def _question(v: Any, keys: set[str], key: str) -> Any:
    """A question id with its fact ids in ``keys`` renamed (re-sorted, as the fold
    names a question by its pair); anything else unchanged."""
    pair = pair_of(v) if isinstance(v, str) else None
    if pair is None or not any(x in keys for x in pair):
        return v
    a, b = (pseudonym(x, key) if x in keys else x for x in pair)
    return question_id(a, b)


def pseudonym(name: str, key: str) -> str:
    """The stable pseudonym of ``name``: a hash keyed by ``key`` (the forget request's
    event id; the same on a re-run, different for each request)."""
    h = hashlib.blake2b(name.encode(), key=key.encode()[:64], digest_size=8).hexdigest()
    return PSEUDONYM + h


def _names(v: Any) -> list[str]:
    """The fact ids a ``REFS`` field value holds."""
    if isinstance(v, str):
        return [v]
    if not isinstance(v, list):
        return []
    out: list[str] = []
    for x in v:
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, list) and x and isinstance(x[0], str):
            out.append(x[0])
    return out


def _renamed(v: Any, keys: set[str], key: str) -> Any:
    """``v`` (a ``REFS`` field value) with each fact id in ``keys`` replaced."""
    if isinstance(v, str):
        return pseudonym(v, key) if v in keys else v
    if not isinstance(v, list):
        return v
    out: list[Any] = []
    for x in v:
        if isinstance(x, str) and x in keys:
            out.append(pseudonym(x, key))
        elif isinstance(x, list) and x and isinstance(x[0], str) and x[0] in keys:
            out.append([pseudonym(x[0], key), *x[1:]])
        else:
            out.append(x)
    return out


@dataclass
class Chosen:
    """The ids and keys an identity chose, found in one pass over the log (``see``)."""

    keys: set[str] = field(default_factory=set)
    """Keys the identity created (their first record is its own)."""
    seen: set[str] = field(default_factory=set)
    """Every key met so far."""
    ids: dict[int, str] = field(default_factory=dict)
    """seq -> the event id of an own record (renamed)."""
    refs: dict[int, dict[str, Any]] = field(default_factory=dict)
    """seq -> a stored record whose key or body names one of ``keys``."""

    def see(self, d: dict[str, Any], own: bool, keep_id: bool = False) -> bool:
        """Note stored record ``d`` (``own``: the identity's; ``keep_id``: a request or
        plan, whose id stays); True when it needs a rewrite for an id or a key."""
        k = d.get("key")
        if isinstance(k, str) and k not in self.seen:
            self.seen.add(k)
            if own and k != T.CONFIG_KEY and not k.startswith(PSEUDONYM):
                self.keys.add(k)
        hit = False
        if own and not keep_id and not d["id"].startswith(PSEUDONYM):
            self.ids[d["seq"]] = d["id"]
            hit = True
        if self.keys and (k in self.keys or self._names_key(d)):
            self.refs[d["seq"]] = d
            hit = True
        return hit

    def _names_key(self, d: dict[str, Any]) -> bool:
        fields = REFS.get(d["type"])
        if fields is None or not isinstance(d["body"], dict):
            return False
        if d["type"] in QUESTION:
            q = d["body"].get("question")
            pair = pair_of(q) if isinstance(q, str) else None
            if pair is not None and any(x in self.keys for x in pair):
                return True
        return any(x in self.keys for f in fields for x in _names(d["body"].get(f)))

    def seqs(self) -> set[int]:
        """Every seq this rewrites."""
        return set(self.ids) | set(self.refs)

    def envelope(self, seq: int, key: str) -> dict[str, str]:
        """The envelope renames of ``seq`` (id and key), pseudonyms keyed by ``key``."""
        out: dict[str, str] = {}
        if seq in self.ids:
            out["id"] = pseudonym(self.ids[seq], key)
        d = self.refs.get(seq)
        if d is not None and d.get("key") in self.keys:
            out["key"] = pseudonym(d["key"], key)
        return out

    def body(self, seq: int, body: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
        """``body`` (what ``seq``'s record ends with; None: a tombstone) with its fact
        references to the identity's keys renamed."""
        d = self.refs.get(seq)
        if body is None or d is None:
            return body
        fields = REFS.get(d["type"], ())
        out = dict(body)
        for f in fields:
            if f in out:
                out[f] = _renamed(out[f], self.keys, key)
        if d["type"] in QUESTION and "question" in out:
            out["question"] = _question(out["question"], self.keys, key)
        return out


__all__ = ["PSEUDONYM", "REFS", "Chosen", "pseudonym"]
