"""A forget's plan in the log: which seqs (and types) a request redacts.

``verify`` must tell a redaction ``forget`` made from one made by anyone else with write
access (redactions.py). Judging a scrubbed record by its form is weak: the words that
matched are gone, so a record edited to mimic the scrub passes. So ``forget`` appends,
after its request and *before* rewriting anything, the plan it is about to carry out:
one ``forget.planned`` event (several for a very large plan) naming the request's seq
and every seq it redacts with that record's type, as runs of consecutive seqs of one
type. No names and no words: seqs and type names only. A re-run finds the plan of its
request and does not append it again (the plan up to the request does not change: the
log before it is only ever rewritten by the plan itself).

``verify`` then accepts a redacted record only if a plan lists its seq with its type;
records a request made without a plan (an earlier version, or a plan killed before it
was appended: nothing was rewritten yet) are judged by form as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from swarmlog import Event, Log

PLANNED = "forget.planned"
"""The type of a plan event. The fold does not know it (it only counts it)."""

RUNS_PER_EVENT = 20_000
"""Runs in one plan event (~25 bytes each: well under the 1 MiB event limit)."""


def runs(types: Mapping[int, str]) -> tuple[list[str], list[list[int]]]:
    """``{seq: type}`` as (type names, ``[first seq, count, type index]`` runs)."""
    names: dict[str, int] = {}
    out: list[list[int]] = []
    for seq in sorted(types):
        ti = names.setdefault(types[seq], len(names))
        last = out[-1] if out else None
        if last is not None and last[2] == ti and last[0] + last[1] == seq:
            last[1] += 1
        else:
            out.append([seq, 1, ti])
    return list(names), out


def events(request: int, agent: str, types: Mapping[int, str]) -> list[Event]:
    """The plan events of request ``request`` written as ``agent``."""
    names, rs = runs(types)
    chunks = [rs[i : i + RUNS_PER_EVENT] for i in range(0, len(rs), RUNS_PER_EVENT)] or [[]]
    return [
        Event(
            agent=agent,
            type=PLANNED,
            body={"request": request, "part": k, "parts": len(chunks), "types": names, "runs": c},
        )
        for k, c in enumerate(chunks)
    ]


def append(log: Log, request: int, agent: str, types: Mapping[int, str]) -> None:
    """Append the plan (one atomic batch)."""
    log.append_many(events(request, agent, types))


def listed(body: Any) -> tuple[int, dict[int, str]] | None:
    """(request seq, ``{seq: type}``) of a plan event's body; None when malformed."""
    if not isinstance(body, dict):
        return None
    req, names, rs = body.get("request"), body.get("types"), body.get("runs")
    if not (isinstance(req, int) and isinstance(names, list) and isinstance(rs, list)):
        return None
    out: dict[int, str] = {}
    for r in rs:
        if not (isinstance(r, list) and len(r) == 3 and all(isinstance(x, int) for x in r)):
            return None
        first, count, ti = r
        if not (0 <= ti < len(names)) or count < 1 or count > 10_000_000:
            return None
        for q in range(first, first + count):
            out[q] = str(names[ti])
    return req, out


def planned_for(dicts: Iterable[dict[str, Any]], request: int) -> bool:
    """Whether the stored events ``dicts`` hold a plan for ``request``."""
    return any(
        d["type"] == PLANNED and isinstance(d["body"], dict) and d["body"].get("request") == request
        for d in dicts
    )


__all__ = ["PLANNED", "append", "events", "listed", "planned_for", "runs"]
