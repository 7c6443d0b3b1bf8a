"""What changed in the swarm's facts between two points of its log (``swarmlog diff``).

Plain functions over two folded states: no typer, no printing of its own beyond the
text lines ``lines`` builds, so tests and other faces can use it. A fact is *added* when
it exists at B and not at A, *removed* when it existed at A and not at B (evicted,
forgotten), *changed* when a watched field differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dashboards import safe

if TYPE_CHECKING:
    from synthesizer.state.facts import Fact
    from synthesizer.state.swarmstate import SwarmState

WATCHED = ("status", "value", "strength", "tier", "content", "version")
"""The fact fields a diff reports changes of."""

_EPS = 5e-4  # strengths are shown to 3 decimals: smaller moves are not a change


def _brief(f: Fact) -> dict[str, Any]:
    return {
        "id": f.id,
        "content": f.content,
        "status": f.status,
        "value": f.value,
        "subject": f.subject,
        "strength": round(f.strength, 4),
        "tier": f.tier,
        "version": f.version,
        "support": f.support,
    }


def _changed(a: Fact, b: Fact) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name in WATCHED:
        x, y = getattr(a, name), getattr(b, name)
        if name == "strength":
            if abs(x - y) > _EPS:
                out[name] = [round(x, 4), round(y, 4)]
        elif x != y:
            out[name] = [x, y]
    return out


def diff_states(a: SwarmState, b: SwarmState) -> dict[str, Any]:
    """The facts added, removed and changed from state ``a`` to state ``b`` (by id)."""
    fa, fb = a.facts, b.facts
    def order(facts: Mapping[str, Fact]) -> list[str]:  # creation order, then id
        return sorted(facts, key=lambda k: (facts[k].created_seq, k))

    added = [_brief(fb[k]) for k in order(fb) if k not in fa]
    removed = [_brief(fa[k]) for k in order(fa) if k not in fb]
    changed = []
    for k in order(fa):
        if k in fb:
            delta = _changed(fa[k], fb[k])
            if delta:
                changed.append({"id": k, "content": fb[k].content, "changes": delta})
    return {
        "from_seq": a.last_seq,
        "to_seq": b.last_seq,
        "added": added,
        "removed": removed,
        "changed": changed,
    }


def _gist(text: object, width: int) -> str:
    t = safe.text(text)
    return t if len(t) <= width else t[: width - 3] + "..."


def lines(d: dict[str, Any], width: int = 100) -> list[str]:
    """The diff as text lines: ``+`` added, ``-`` removed, ``~`` changed (field: a -> b)."""
    out = [
        f"facts from seq {d['from_seq']} to seq {d['to_seq']}: {len(d['added'])} added, "
        f"{len(d['removed'])} removed, {len(d['changed'])} changed"
    ]
    for f in d["added"]:
        val = f" [{_gist(f['subject'], 20)}={_gist(f['value'], 20)}]" if f["subject"] else ""
        out.append(f"+ {safe.text(f['id']):<8} {f['status']:<10}{val} {_gist(f['content'], 60)}")
    for f in d["removed"]:
        out.append(f"- {safe.text(f['id']):<8} {f['status']:<10} {_gist(f['content'], 60)}")
    for c in d["changed"]:
        what = ", ".join(
            f"{k} {_gist(v[0], 16)} -> {_gist(v[1], 16)}" for k, v in c["changes"].items()
        )
        out.append(f"~ {safe.text(c['id']):<8} {what}  ({_gist(c['content'], 40)})")
    return [ln[:width] if len(ln) > width else ln for ln in out]


__all__ = ["WATCHED", "diff_states", "lines"]
