"""Names the project gives meaning to, refused for agents (docs/design.md §10).

Why: the fold trusts some writer names: ``synthesizer`` writes the derived events (and
cannot be forgotten: its events are derived), ``memstore`` writes the MemoryStore
facade's events and may forget a store identity, ``operator`` is the default erasure
operator, ``swarm`` writes configuration, ticks and session bounds, ``system`` the pool
facade's ticks, ``langgraph`` the LangGraph store's writes, ``board`` board writes. An
agent that could call itself one of them could share what nobody can forget, or erase
others' data. Every place an agent names itself (``Swarm.agent``, so the CLI, the MCP
server, the facades and LangGraph; the CLI's ``--as``) refuses these names, and the fold
refuses an agent's memory events written under one (authz.py).
"""

from __future__ import annotations

from swarmlog.errors import InvalidEvent

RESERVED = frozenset(
    ("synthesizer", "operator", "memstore", "swarm", "system", "langgraph", "board")
)
"""Writer names the project uses itself; no agent may take one."""

RESERVED_PREFIXES = ("mcp:",)
"""Prefixes of writer names the project makes itself (the MCP server's synthesizer is
``mcp:<agent|team|client>:<pid>`` in the lease); no agent name may start with one,
whoever chose it (``--agent``, a team member, the MCP client's own name)."""


def is_reserved(name: str) -> bool:
    """Whether ``name`` is reserved: one of ``RESERVED`` or starting with a reserved prefix."""
    return name in RESERVED or name.startswith(RESERVED_PREFIXES)


class ReservedName(InvalidEvent):
    """An agent named itself with a reserved name."""


def check_agent(name: str) -> str:
    """``name`` unless it is reserved (ReservedName, one line)."""
    if is_reserved(name):
        raise ReservedName(
            f"agent name {name!r} is reserved (the project writes as it); choose another"
        )
    return name


__all__ = ["RESERVED", "RESERVED_PREFIXES", "ReservedName", "check_agent", "is_reserved"]
