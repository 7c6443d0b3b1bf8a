"""Questions to a judge and their answers, as the fold keeps them: possible duplicates.

Why: the merge rule cannot show every pair either way. When it is unsure about a new
memory and a candidate fact at or above the near-duplicate cosine, the synthesizer
creates the new fact as usual and appends ``judge.asked`` naming both facts: from then
on the two are *possible duplicates* (linked both ways, with the cosine), which recall
shows as one finding, until a judge answers. A judge worker (``synthesizer.worker.
judging``), outside the decision path, appends ``judge.answered``; the fold acts on it:

* ``same``: the younger fact's evidence joins the older (ids stay stable) and the younger
  becomes ``superseded``, ``merged`` pointing to the older;
* ``contradicts``: both become ``contested``, each naming the other (as ``fact.contested``);
* ``different``: the link goes.

A question is named by its pair (``question_id``), so the same pair is never asked twice,
and an answer to a closed or unknown question is ignored: answering is idempotent. Only
ids travel in these events, never an agent's words, so erasure has nothing to scrub.
Pure: no clock, no randomness; the state here is part of the digest and checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from synthesizer.state.facts import ACTIVE, CONTESTED, RETRACTED, SUPERSEDED, Fact
from synthesizer.state.words import of as words_of

SAME = "same"
CONTRADICTS = "contradicts"
DIFFERENT = "different"
ANSWERS = (SAME, CONTRADICTS, DIFFERENT)
SHOWN = (ACTIVE, CONTESTED)
"""Statuses of the group members a reader is shown (as recall shows facts)."""


def question_id(a: str, b: str) -> str:
    """The question about facts ``a`` and ``b``: their ids, sorted, joined by ``/`` (which no name
    holds, so the ids can be read back: ``pair_of``)."""
    x, y = sorted((a, b))
    return f"{x}/{y}"


def pair_of(qid: str) -> tuple[str, str] | None:
    """The two fact ids of question ``qid`` (None: not a question id)."""
    a, sep, b = qid.partition("/")
    return (a, b) if sep and a and b and "/" not in b else None


@dataclass(slots=True)
class Judging:
    """Open questions (possible-duplicate links), answered ones, and merges.

    * ``open``: question id -> ``[a, b, score, reason, asked seq]``;
    * ``answered``: question id -> ``[answer, seq]`` (closed: never asked again);
    * ``merged``: younger fact id -> the older fact it was merged into.
    """

    open: dict[str, list[Any]] = field(default_factory=dict)
    answered: dict[str, list[Any]] = field(default_factory=dict)
    merged: dict[str, str] = field(default_factory=dict)
    _links: dict[str, dict[str, float]] | None = field(default=None, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.open or self.answered or self.merged)

    def known(self, qid: str) -> bool:
        """Whether question ``qid`` was ever asked (open or answered)."""
        return qid in self.open or qid in self.answered

    def links(self) -> dict[str, dict[str, float]]:
        """Fact id -> {possible duplicate: cosine}, both ways (from the open questions)."""
        if self._links is None:
            out: dict[str, dict[str, float]] = {}
            for a, b, score, *_ in self.open.values():
                out.setdefault(a, {})[b] = score
                out.setdefault(b, {})[a] = score
            self._links = out
        return self._links

    def group(self, fid: str) -> list[str]:
        """``fid`` and every fact linked to it through open questions, sorted."""
        links = self.links()
        if fid not in links:
            return [fid]
        seen = {fid}
        todo = [fid]
        while todo:
            for other in links.get(todo.pop(), {}):
                if other not in seen:
                    seen.add(other)
                    todo.append(other)
        return sorted(seen)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (the state's canonical serialization)."""
        return {"open": self.open, "answered": self.answered, "merged": self.merged}

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Judging:
        """Inverse of ``to_dict`` (an absent entry: empty)."""
        if not d:
            return cls()
        return cls(dict(d["open"]), dict(d["answered"]), dict(d["merged"]))

    def _changed(self) -> None:
        self._links = None


def finding_groups(s: Any) -> list[list[str]]:
    """The possible-duplicate groups of shown live facts (two members or more), each
    sorted, in order of their first member: one finding each (recall, metrics)."""
    facts = s.facts
    j: Judging = s.judging
    seen: set[str] = set()
    out: list[list[str]] = []
    for fid in sorted(j.links()):
        if fid in seen:
            continue
        members = j.group(fid)
        seen.update(members)
        live = [m for m in members if (f := facts.get(m)) is not None and f.status in SHOWN]
        if len(live) > 1:
            out.append(live)
    return out


def on_asked(s: Any, d: dict[str, Any]) -> bool:
    """judge.asked: open the question and link its two live facts; False when ignored
    (a question already asked, one not named by its pair, a fact that is not live)."""
    b = d["body"]
    qid, a, other = b["question"], b["a"], b["b"]
    j: Judging = s.judging
    if qid != question_id(a, other) or a == other or j.known(qid):
        return False
    if a not in s.facts or other not in s.facts:
        return False
    j.open[qid] = [a, other, float(b["score"]), b.get("reason") or "", d["seq"]]
    j._changed()
    return True


def on_answered(s: Any, d: dict[str, Any]) -> bool:
    """judge.answered: close an open question and act on the answer (module docstring);
    False when ignored (no such open question)."""
    b = d["body"]
    qid, answer = b["question"], b["answer"]
    j: Judging = s.judging
    if answer not in ANSWERS or qid not in j.open:
        return False
    a, other, *_ = j.open.pop(qid)
    j.answered[qid] = [answer, d["seq"]]
    j._changed()
    fa, fb = s.facts.get(a), s.facts.get(other)
    if fa is None or fb is None:  # evicted or erased meanwhile: nothing to act on
        return True
    seq = d["seq"]
    if answer == SAME:
        older, younger = sorted((fa, fb), key=lambda f: (f.created_seq, f.id))
        merge(s, older, younger, seq)
    elif answer == CONTRADICTS:
        for f, rival in ((fa, fb), (fb, fa)):
            if f.status != RETRACTED:
                f.set_status(CONTESTED, seq, None)
            if rival.id not in f.contested_with:
                f.contested_with = sorted({*f.contested_with, rival.id})
    return True


def merge(s: Any, older: Fact, younger: Fact, seq: int) -> None:
    """``younger``'s evidence joins ``older`` (with its words, so that erasure can reword
    the older fact from them; counted as ``judged`` duplicates); ``younger`` becomes
    superseded, merged into ``older``."""
    moved = 0
    for i, e in enumerate(younger.evidence):
        if older.has_evidence(e.seq):
            continue
        moved += 1
        pair = (e.agent, e.session)
        if all((x.agent, x.session) != pair for x in older.evidence):
            words = (
                [
                    e.seq,
                    younger.content,
                    younger.category,
                    younger.importance,
                    younger.subject,
                    younger.value,
                    None,
                    younger.thread,
                ]
                if i == 0
                else words_of(s, younger.id, e)
            )
            if words is not None:
                s.words.setdefault(older.id, []).append(list(words))
        older.evidence.append(e)
    older.evidence.sort(key=lambda e: e.seq)
    if moved:  # raw memories found to be duplicates: the duplication rate counts them
        dups = s.metrics.duplicates
        dups["judged"] = dups.get("judged", 0) + moved
    older.strength = max(older.strength, younger.strength)
    if younger.status != RETRACTED:
        younger.set_status(SUPERSEDED, seq, f"merged into {older.id}")
    s.judging.merged[younger.id] = older.id


__all__ = [
    "ANSWERS",
    "CONTRADICTS",
    "DIFFERENT",
    "SAME",
    "SHOWN",
    "Judging",
    "finding_groups",
    "merge",
    "on_answered",
    "on_asked",
    "pair_of",
    "question_id",
]
