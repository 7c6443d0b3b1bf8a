"""Who backs a fact when it is promoted: distinct clients, not distinct names.

A team MCP server (``swarmlog mcp --agents 'worker-*'``) lets its one client mint any
number of member names; each memory shared under a minted name carries the server's
connection in its body's ``client`` field. ``backers`` counts one identity per memory:
that ``client`` when present, else the memory's agent. So ten names minted by one
connection back a fact once, while agents named by whoever started a server (``--agent``,
a listed team name, the library) count as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from synthesizer.state.facts import Fact

if TYPE_CHECKING:
    from swarmlog import Log

COUNTS = "distinct clients (the names one MCP connection minted from a pattern count once)"
"""What ``--min-support`` counts, as the CLI and the docs say it."""


def identity(agent: str, body: dict[str, object]) -> str:
    """The identity one memory counts as: its ``client`` if a string, else its agent."""
    client = body.get("client")
    return client if isinstance(client, str) and client else agent


def backers(log: Log, f: Fact, need: int) -> int:
    """Distinct identities among ``f``'s evidence, counted up to ``need`` (reading stops
    there: a fact with many memories costs only as many reads as it takes to qualify).

    Evidence whose raw event is gone (compacted away) counts as its agent."""
    if need <= 1 or f.support < need:
        return min(f.support, need)
    seen: set[str] = set()
    for e in f.evidence:
        raw = next(iter(log.read(e.seq, e.seq)), None)
        seen.add(identity(e.agent, raw.body) if raw is not None else e.agent)
        if len(seen) >= need:
            break
    return len(seen)


__all__ = ["COUNTS", "backers", "identity"]
