"""What the MCP server checks before a tool runs, and how it advertises its tools compactly.

* ``Team``: the agents one server may write as (``swarmlog mcp --agents a1,a2`` or a
  pattern such as ``'worker-*'``), so one server entry serves a parent agent and its
  subagents; each tool call names its agent, checked here. A name matched by a pattern
  is *minted* by the client (``Team.minted``): its memories carry the connection, so ten
  minted names back a fact as one client when it is promoted. Names the swarm itself writes
  as (``synthesizer``, ``operator``, the LangGraph store's ``langgraph``) are refused.
* ``check_call``: unknown arguments and oversized inputs are refused in one line before
  any validation or lock (a 10 MB query once held the tool lock for seconds).
* ``compact_schema``: an input schema without pydantic's titles and ``anyOf [X, null]``
  wrappers (the whole tool list is read by the model on every turn).
"""

from __future__ import annotations

import fnmatch
from typing import Any

from swarmlog import DEFAULT_LIMITS
from swarmlog.names import check_name
from synthesizer.reserved import is_reserved

RESERVED = frozenset({"synthesizer", "operator", "langgraph"})
"""Agent names the swarm writes as itself: no MCP caller may take them."""

MAX_STRING = DEFAULT_LIMITS.max_content
"""Longest string argument (the log's content limit, in characters here)."""

MAX_QUERY = 2000
"""Longest search query (characters): a query is a question, not a document."""

MAX_ARGUMENTS = 4 * MAX_STRING
"""Largest arguments object as a whole (characters of its string values)."""


class GuardError(ValueError):
    """A call refused before it ran: the one-line message the model gets."""


def check_agent_name(name: str) -> str:
    """A valid agent name that is not reserved (else GuardError)."""
    try:
        check_name("agent", name)
    except ValueError as e:
        raise GuardError(str(e)) from None
    if is_reserved(name):
        raise GuardError(f"agent name {name!r} is reserved for the swarm itself; pick another")
    return name


class Team:
    """The agents a team server may write as: a list of names, or ``*``/``?`` patterns."""

    def __init__(self, spec: str) -> None:
        parts = [p.strip() for p in spec.split(",") if p.strip()]
        if not parts:
            raise GuardError("--agents needs at least one name or pattern (e.g. lead,worker-*)")
        self.patterns = [p for p in parts if any(c in p for c in "*?[")]
        self.names = [check_agent_name(p) for p in parts if p not in self.patterns]
        for p in self.patterns:
            check_name("agent pattern", p.replace("*", "x").replace("?", "x"))

    def check(self, agent: str | None) -> str:
        """``agent`` if this team may write as it (else GuardError)."""
        if not agent:
            raise GuardError(f"agent is required: your agent name ({self.describe()})")
        check_agent_name(agent)
        if agent in self.names or any(fnmatch.fnmatchcase(agent, p) for p in self.patterns):
            return agent
        raise GuardError(f"agent {agent!r} is not one of this server's agents ({self.describe()})")

    def minted(self, agent: str) -> bool:
        """Whether ``agent`` is a name the client made up from a pattern (not one listed
        by whoever started the server): such names share one client's support."""
        return agent not in self.names

    def describe(self) -> str:
        """The allowed names for a message or a parameter description."""
        allowed = [*self.names, *(f"matching {p}" for p in self.patterns)]
        return "one of: " + ", ".join(allowed) if self.names else ", ".join(allowed)


def _size(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(str(k)) + _size(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_size(v) for v in value)
    return 8


def check_call(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    """Refuse unknown arguments and oversized strings, in one line (GuardError)."""
    props = schema.get("properties", {})
    unknown = sorted(set(arguments) - set(props))
    if unknown:
        raise GuardError(
            f"unknown argument {unknown[0]!r}; {tool} takes: {', '.join(props) or 'nothing'}"
        )
    for name, value in arguments.items():
        if not isinstance(value, str):
            continue
        limit = MAX_QUERY if name == "query" else MAX_STRING
        if len(value) > limit:
            raise GuardError(f"{name} is {len(value)} characters (max {limit})")
    total = _size(arguments)
    if total > MAX_ARGUMENTS:
        raise GuardError(f"arguments are {total} characters (max {MAX_ARGUMENTS})")


def _simplify(node: Any) -> Any:
    if isinstance(node, list):
        return [_simplify(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _simplify(v) for k, v in node.items() if k != "title"}
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and len(any_of) == 2 and {"type": "null"} in any_of:
        (kept,) = [s for s in any_of if s != {"type": "null"}]
        del out["anyOf"]
        out = {**kept, **out}
    if out.get("default", 0) is None:
        del out["default"]
    return out


def compact_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without titles, ``anyOf [X, null]`` (an optional X is just X, not
    required) and null defaults; what it accepts is unchanged for a caller that omits
    optional arguments or sends null."""
    out: dict[str, Any] = _simplify(schema)
    return out


__all__ = [
    "MAX_ARGUMENTS",
    "MAX_QUERY",
    "MAX_STRING",
    "RESERVED",
    "GuardError",
    "Team",
    "check_agent_name",
    "check_call",
    "compact_schema",
]
