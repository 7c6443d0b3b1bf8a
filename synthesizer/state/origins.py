"""Provenance across swarms: the ``origins`` of a promoted or bootstrapped fact.

(docs/design.md §12, global memory.)

A task swarm promotes a fact into a global memory as a ``memory.shared`` whose body
carries ``origins``: one dict per fact it stands for, ``{"swarm": origin swarm id,
"name": origin swarm name, "fact": origin fact id, "seqs": [origin raw seqs],
"version": origin version}``. When the global synthesizer turns that memory into a fact
or evidence for one, the fold copies each origin onto the fact (``Fact.origins``), with
``at``: the seqs of this log's memories that carried it, and ``sig``: the signature of
the statement it carried (content and value), by which a promoter tells a reworded or
changed origin from an unchanged one. One origin fact is listed once:
a newer version replaces the older entry's fields and adds its carrier to ``at``.

An ``origin.withdrawn`` event (keyed by the fact that holds the origins) takes origins
back when their fact was retracted, superseded or erased in its swarm, or changed into
another statement: their entries go, and so does the evidence they brought; a fact left
with no evidence is retracted. These are fold rules: no clock, no randomness.
"""

from __future__ import annotations

from typing import Any

from synthesizer.events import MAX_ORIGINS, MAX_SEQS
from synthesizer.events import check_origins as check_list
from synthesizer.events import origin_problem as problem
from synthesizer.state.facts import RETRACTED, Fact, RawMemory

WITHDRAWN_REASON = "origin withdrawn"
"""The ``history`` reason of a fact retracted because its last origin was withdrawn."""


def entry(o: dict[str, Any], carrier: int) -> dict[str, Any]:
    """The fact's record of origin ``o`` brought by raw memory ``carrier`` (known keys
    only, in a fixed order: the state's bytes must not depend on a writer's key order)."""
    return {
        "swarm": o["swarm"],
        "name": o["name"],
        "fact": o["fact"],
        "seqs": list(o.get("seqs", [])),
        "version": int(o.get("version", 0)),
        "sig": o.get("sig"),
        "at": [carrier],
    }


def same_origin(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two origin dicts name the same fact of the same swarm."""
    return bool(a["swarm"] == b["swarm"] and a["fact"] == b["fact"])


Index = dict[str, dict[str, str]]
"""The state's ``origin_index``: origin swarm id -> origin fact id -> the fact holding it
(so a promoter finds what a global memory holds of its swarm without reading every fact;
an entry may outlive its fact's eviction: readers check the fact)."""


def add(index: Index, f: Fact, raw: RawMemory) -> None:
    """Record the origins ``raw`` carries on fact ``f`` (the fold, when ``raw`` is consumed
    into ``f``). Malformed origins (a body the checks would have refused) are skipped."""
    for o in raw.origins or ():
        if problem(o) is not None:
            continue
        new = entry(o, raw.seq)
        index.setdefault(new["swarm"], {})[new["fact"]] = f.id
        for old in f.origins:
            if same_origin(old, new):
                if new["version"] >= old["version"]:
                    old.update({k: new[k] for k in ("name", "seqs", "version", "sig")})
                if raw.seq not in old["at"]:
                    old["at"].append(raw.seq)
                break
        else:
            f.origins.append(new)


def withdraw(
    index: Index, f: Fact, taken: list[dict[str, Any]], seq: int, reason: str | None
) -> bool:
    """Take origins ``taken`` (each ``swarm``, ``fact`` and the ``version`` up to which it
    is withdrawn) off fact ``f``, with the evidence they brought. Returns whether ``f``
    changed. A fact left with no evidence is retracted at ``seq``."""
    gone: set[int] = set()
    keep: list[dict[str, Any]] = []
    for old in f.origins:
        hit = any(
            isinstance(t, dict)
            and t.get("swarm") == old["swarm"]
            and t.get("fact") == old["fact"]
            and _version(t) >= old["version"]
            for t in taken
        )
        if hit:
            gone.update(old["at"])
            held = index.get(old["swarm"])
            if held is not None and held.get(old["fact"]) == f.id:
                del held[old["fact"]]
                if not held:
                    del index[old["swarm"]]
        else:
            keep.append(old)
    if len(keep) == len(f.origins):
        return False
    f.origins = keep
    still = {q for o in keep for q in o["at"]}
    gone -= still
    f.evidence = [e for e in f.evidence if e.seq not in gone]
    if not f.evidence:
        f.set_status(RETRACTED, seq, reason or WITHDRAWN_REASON)
    return True


def _version(t: dict[str, Any]) -> int:
    v = t.get("version", 0)
    return v if type(v) is int else 0


def carried_by(f: Fact, swarm: str) -> dict[str, dict[str, Any]]:
    """The origins of ``f`` from swarm ``swarm``, by origin fact id."""
    return {o["fact"]: o for o in f.origins if o["swarm"] == swarm}


def evidence_seqs(f: Fact) -> list[int]:
    """The raw seqs of a fact's evidence (what an origin dict lists as ``seqs``)."""
    return [e.seq for e in f.evidence][:MAX_SEQS]


__all__ = [
    "MAX_ORIGINS",
    "WITHDRAWN_REASON",
    "add",
    "carried_by",
    "check_list",
    "entry",
    "evidence_seqs",
    "problem",
    "same_origin",
    "withdraw",
]
