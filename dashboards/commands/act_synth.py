"""``search`` and ``reinforce``: the synthesizer commands an agent runs per action (no
typer here; ``synth.py`` registers them, ``fastpath`` runs their plain command lines)."""

from __future__ import annotations

from typing import Any

from dashboards import safe
from dashboards.common import echo, emit_json, fail, open_swarm
from dashboards.spec import REQUIRED, WHERE, Command, Opt


def search(
    ctx: Any,
    query: str,
    limit: int,
    category: str | None,
    tier: str | None,
    thread: str | None,
    min_score: float | None,
    root: str | None,
    url: str | None,
    json: bool,
) -> None:
    """Rank facts for a query: its words and identifiers with the cosine, × strength ×
    importance (does not log a recall)."""
    if limit < 1:
        fail(f"--limit must be >= 1, got {limit}")
    sw = open_swarm(ctx, root, url)
    try:
        hits = sw.search(
            query, limit=limit, category=category, tier=tier, thread=thread, min_score=min_score
        )
    finally:
        sw.close()
    if json:
        emit_json(
            [
                {
                    "id": h.fact.id,
                    "content": h.fact.content,
                    "similarity": h.similarity,
                    "relevance": h.relevance,
                    "strength": h.strength,
                    "support": h.fact.support,
                    "status": h.fact.status,
                    "tier": h.fact.tier,
                    "contested_with": h.fact.contested_with,
                    "also": [{"id": fid, "agents": list(agents)} for fid, agents in h.also],
                }
                for h in hits
            ]
        )
        return
    if not hits:
        echo("no matching facts")
    for h in hits:
        echo(
            f"{safe.text(h.fact.id):>8}  rel {h.relevance:.3f}  sim {h.similarity:.3f}  "
            f"str {h.strength:.2f}  x{h.fact.support}  {safe.text(h.fact.content)}"
            + (
                f"  [contested with {', '.join(h.fact.contested_with)}]"
                if h.fact.contested_with
                else ""
            )
            + (
                f"  [also reported as {', '.join(safe.text(fid) for fid, _ in h.also)}]"
                if h.also
                else ""
            )
        )


SEARCH = Command(
    "search",
    search.__doc__ or "",
    (
        Opt("query", str, REQUIRED, help="What to look for"),
        Opt("limit", int, 10, ("--limit", "-n"), "How many facts to show at most"),
        Opt("category", str, None, ("--category", "-c"), "Only facts of this category"),
        Opt("tier", str, None, ("--tier",), "Only this tier: working | short_term | long_term"),
        Opt("thread", str, None, ("--thread",), "Only facts filed under this thread"),
        Opt("min_score", float, None, ("--min-score",), "Only hits with relevance >= this"),
        *WHERE,
    ),
    search,
)


def reinforce(
    ctx: Any, fact_id: str, agent: str, root: str | None, url: str | None, json: bool
) -> None:
    """Reinforce a fact as an agent (counted once per agent per fact)."""
    sw = open_swarm(ctx, root, url, write=True)
    try:
        counted = sw.agent(agent).reinforce(fact_id)
    finally:
        sw.close()
    if json:
        emit_json({"fact": fact_id, "agent": agent, "counted": counted})
    elif counted:
        echo(f"reinforced {fact_id} as {agent}")
    else:
        echo(f"{agent} already reinforced {fact_id}: not counted again (nothing appended)")


REINFORCE = Command(
    "reinforce",
    reinforce.__doc__ or "",
    (
        Opt("fact_id", str, REQUIRED, help="Fact to reinforce"),
        Opt("agent", str, REQUIRED, ("--agent", "-a"), "Agent name the vote is counted for"),
        *WHERE,
    ),
    reinforce,
)
