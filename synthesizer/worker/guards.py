"""Near-miss guards: the merge rule as the synthesizer's candidate filter.

Embeddings place "the cache TTL is five minutes" next to "... five hours" and "the build
is green" next to "... red", so cosine alone cannot decide a merge. Before the
synthesizer merges a memory into a near-duplicate fact it asks the merge rule
(``synthesizer.merge.rule.compare``): only a ``same`` verdict merges; ``contradicts`` makes the two
rival facts, ``different`` and ``unsure`` keep them apart. ``conflict`` is the short form
kept for callers that only ask whether a pair must stay apart.
"""

from __future__ import annotations

from collections.abc import Callable

from synthesizer.merge.rule import CONTRADICTS, DIFFERENT, SAME, SpanSim, Verdict, compare

__all__ = ["Candidate", "conflict", "first_unguarded", "verdicts"]

Candidate = tuple[str, float, Verdict]
"""A candidate fact id, its cosine, and the rule's verdict on the pair."""


def conflict(a: str, b: str, span_sim: SpanSim | None = None) -> str | None:
    """Why statements ``a`` and ``b`` must stay separate facts (the rule's reason for a
    ``contradicts`` or ``different`` verdict), or None when the rule does not say so
    (``same``, or ``unsure``: a judge may settle it). Symmetric, deterministic."""
    v = compare(a, b, span_sim)
    return v.reason if v.kind in (CONTRADICTS, DIFFERENT) else None


def verdicts(
    candidates: list[tuple[str, float]],
    content: str,
    near: float,
    content_of: Callable[[str], str | None],
    span_sim: SpanSim | None = None,
) -> list[Candidate]:
    """The rule's verdict on each candidate (id, cosine) at or above ``near``, best first,
    up to and including the first ``same`` one."""
    out: list[Candidate] = []
    for fid, sim in candidates:
        if sim < near:
            break
        other = content_of(fid)
        if other is None:
            continue
        v = compare(content, other, span_sim)
        out.append((fid, sim, v))
        if v.kind == SAME:
            break
    return out


def first_unguarded(
    candidates: list[tuple[str, float]],
    content: str,
    near: float,
    content_of: Callable[[str], str | None],
    span_sim: SpanSim | None = None,
) -> tuple[str, float] | None:
    """The first (best) candidate (id, cosine) at or above ``near`` that the rule calls
    the same statement as ``content``; None if there is none. Candidates come best first."""
    for fid, sim, v in verdicts(candidates, content, near, content_of, span_sim):
        if v.kind == SAME:
            return fid, sim
    return None
