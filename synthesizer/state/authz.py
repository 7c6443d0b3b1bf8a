"""Who may write what: the fold's write rules (docs/design.md §10), read from stored events.

The log stores anything a writer with file access appends; these rules decide what the
fold *honours*. A refused event stays in the log (it is history), its handler does not
run, and it is counted under ``metrics.ignored["refused:<type>"]`` (the dashboard's
"refused writes"). Its key still moves that key's version, because the log's CAS index
counts every keyed record and the fold's versions must agree with the log's.

* **Synthesizer events** (``fact.created``, ``fact.corroborated``, ``fact.contested``,
  ``fact.resolved``, ``fact.revived``, ``synth.progress``): honoured only when written by
  agent ``synthesizer`` and the body's ``lease`` equals the version of the
  ``synthesizer`` key at that point in the log (the seq of the last earlier record keyed
  ``synthesizer``, 0 if none). The worker appends each batch with
  ``expect={"synthesizer": lease}`` and stamps that same ``lease`` in every event of
  the batch, so a batch the log's CAS accepted always passes; one written without the
  CAS, or by a stale worker, names an old version and is refused.
* **A judge's answers** (``judge.answered``): honoured only from the synthesizer, an
  operator, or an agent the configuration names in ``synthesizer.judges``.
  (``judge.asked`` is a synthesizer event, under the lease like the others.)
* **Board writes** (``fact.updated``, ``fact.retracted``, ``origin.withdrawn``): the
  body's ``base`` is the version the writer expected (the board's CAS expectation).
  On a live fact it must equal the fact's version; on a key that is not a live fact
  it must be present (0 creates). A raw append without ``base`` or with a stale one is refused.
* **Authorship** (any type): an event whose envelope names an agent other than the
  ``author`` its reader vouches for (JetStream with per-agent subjects: the agent in the
  message's subject, which the server's per-user permissions guard) is refused.
* **Erasure** (``identity.forgotten``): an agent may forget its own identity (body
  agent = the writer, and/or a body session the writer *opened*: the session's first
  event in the log is the writer's, ``state.owners``; or a thread it opened, alone);
  anything else only an agent listed in the configuration's ``operators``. A store identity
  (``memstore.forgotten``) only the MemoryStore facade's writer (``memstore``) or an
  operator may forget.
* **Reserved names** (reserved.py): an agent's memory events (shared, recalled,
  reinforced, feedback) written as ``synthesizer``, ``operator`` or ``memstore`` are
  refused: what nobody may forget never enters the facts.

These rules stop agents that name another, race without the CAS or mistype; they do not
stop a writer who forges all the fields: on one machine the OS user who can write the
log's directory is the trust boundary (docs/trust.md). On JetStream with per-agent
users the server enforces who publishes as whom (``swarmlog.jetstream.auth``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from synthesizer import events as T
from synthesizer import seedvocab as FE

SwarmState = Any
"""The fold's state (``swarmstate.SwarmState``; not imported: handlers.py imports this module)."""

Handler = Callable[[SwarmState, dict[str, Any]], None]

SYNTH_TYPES = frozenset(
    (
        T.FACT_CREATED,
        T.FACT_CORROBORATED,
        T.FACT_CONTESTED,
        T.FACT_RESOLVED,
        T.FACT_REVIVED,
        T.SYNTH_PROGRESS,
        T.JUDGE_ASKED,
    )
)
"""Event types only the synthesizer (the lease holder) may write."""

BOARD_TYPES = frozenset((T.FACT_UPDATED, T.FACT_RETRACTED, T.ORIGIN_WITHDRAWN))
"""Agent writes that go through the board's CAS on the fact."""

REFUSED = "refused:"
"""Prefix of the ``metrics.ignored`` counters of refused writes."""

FORGED = "~forged"
"""Handler-table entry the fold uses for an event whose ``author`` (the writer the
transport vouches for: JetStream's per-agent subjects) differs from its ``agent``."""


def refuse(s: SwarmState, d: dict[str, Any]) -> None:
    """Count a refused write by type (the handler does not run)."""
    ign = s.metrics.ignored
    k = REFUSED + d["type"]
    ign[k] = ign.get(k, 0) + 1


def synth_ok(s: SwarmState, d: dict[str, Any]) -> bool:
    """A synthesizer event from the lease holder: agent and lease version check."""
    return d["agent"] == T.SYNTH_AGENT and d["body"].get("lease") == s.synth_version


def board_ok(s: SwarmState, d: dict[str, Any]) -> bool:
    """A board write whose stated base is the fact's version (any base for a new key)."""
    base = d["body"].get("base")
    if type(base) is not int:
        return False
    key = d.get("key")
    f = s.facts.get(key) if key is not None else None
    return f is None or base == f.version


def judge_ok(s: SwarmState, d: dict[str, Any]) -> bool:
    """A judge's answer from the synthesizer, an operator or a configured judge."""
    who = d["agent"]
    return who == T.SYNTH_AGENT or who in s.config.operators or who in s.config.synthesizer.judges


def forget_ok(s: SwarmState, d: dict[str, Any]) -> bool:
    """An erasure of the writer's own identity (its name, a session it opened), or any
    erasure by an operator."""
    b = d["body"]
    who = d["agent"]
    agent, session, thread = b.get("agent"), b.get("session"), b.get("thread")
    if thread is not None:
        own = agent is None and session is None and s.owners.get(THREAD_KEY + thread) == who
    else:
        own = (
            (agent is not None or session is not None)
            and agent in (None, who)
            and (session is None or s.owners.get(session) == who)
        )
    return own or who in s.config.operators


THREAD_KEY = " "
"""Prefix of a thread's entry in ``state.owners`` (names hold no whitespace, so it cannot
clash with a session's)."""


STORE_WRITER = "memstore"
"""The MemoryStore facade's writer (compat/store.py: STORE_AGENT)."""


def store_forget_ok(s: SwarmState, d: dict[str, Any]) -> bool:
    """A store identity's erasure by the store facade's writer or an operator."""
    who = d["agent"]
    return who == STORE_WRITER or who in s.config.operators


AGENT_TYPES = frozenset(
    (T.MEMORY_SHARED, T.MEMORY_RECALLED, T.MEMORY_REINFORCED, T.MEMORY_FEEDBACK)
)
"""An agent's own memory events: refused under a reserved name."""


NOT_AN_AGENT = frozenset((T.SYNTH_AGENT, "operator", STORE_WRITER))
"""Reserved names that never write an agent's memory events (the facades' own writers,
``system`` for the pool, ``langgraph``, do)."""


def agent_ok(s: SwarmState, d: dict[str, Any]) -> bool:
    """An agent's memory event written under the synthesizer's, the operator's or the
    store's name is refused: what nobody could forget never enters the facts."""
    return d["agent"] not in NOT_AN_AGENT


def _guard(check: Callable[[SwarmState, dict[str, Any]], bool], h: Handler) -> Handler:
    """``h`` behind ``check``: a refused event is counted and otherwise skipped."""

    def guarded(s: SwarmState, d: dict[str, Any]) -> None:
        if check(s, d):
            h(s, d)
        else:
            refuse(s, d)

    guarded.__doc__ = h.__doc__
    return guarded


def guarded(handlers: dict[str, Handler]) -> dict[str, Handler]:
    """The fold's handler table with the write rules in front of the guarded types.

    Only the guarded types pay for a check; every other handler is unchanged.
    """
    out = dict(handlers)
    for t, h in handlers.items():
        if t in SYNTH_TYPES:
            out[t] = _guard(synth_ok, h)
        elif t in BOARD_TYPES:
            out[t] = _guard(board_ok, h)
        elif t == T.IDENTITY_FORGOTTEN:
            out[t] = _guard(forget_ok, h)
        elif t == T.JUDGE_ANSWERED:
            out[t] = _guard(judge_ok, h)
        elif t == FE.STORE_FORGOTTEN:
            out[t] = _guard(store_forget_ok, h)
        elif t in AGENT_TYPES:
            out[t] = _guard(agent_ok, h)
    out[FORGED] = refuse
    return out


def refused_by_type(ignored: dict[str, int]) -> dict[str, int]:
    """Refused writes by event type."""
    return {k[len(REFUSED) :]: n for k, n in sorted(ignored.items()) if k.startswith(REFUSED)}
