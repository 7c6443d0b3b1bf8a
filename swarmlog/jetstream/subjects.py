"""Subject layouts of a swarm's JetStream stream: who published an event, from its subject.

Two layouts, told apart by the stream's metadata ``swarmlog.subjects``:

* **per agent** (``agent``; every stream created by this version)::

      swarmlog.S.a.<agent>.e              agent's events without a key
      swarmlog.S.a.<agent>.k.<key>        agent's events with a key

  A key's version is the last seq on ``swarmlog.S.a.*.k.<key>`` (any agent): the
  server answers ``last_by_subj`` and checks ``Nats-Expected-Last-Subject-Sequence``
  against that wildcard filter, named in ``…-Subject``, so CAS spans all writers.
  Because the agent is a subject token, nats-server's per-user publish permissions
  decide who may write as whom (``auth.py`` builds them), and the reader takes the
  author from the subject: an event whose envelope names another agent keeps its
  bytes, and the reader marks it with ``author`` = the subject's agent (the fold
  refuses it). An event whose agent is its subject's carries no mark, so its mapping
  stays exactly the stored record (``Log.read_batches`` == ``Event.to_dict()``).

* **shared** (no metadata; streams created before per-agent subjects)::

      swarmlog.S.e  /  swarmlog.S.k.<key>

  Still read and written as before; the server cannot tell writers apart, so events
  carry no ``author``. To get per-agent users, create a new stream and copy the events
  into it (their seqs then start again from 1).

Agent names and keys become one subject token through ``proto.escape_key``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from swarmlog.jetstream.proto import escape_key, key_subject, unescape_key

META_SUBJECTS = "swarmlog.subjects"
"""Stream metadata naming the subject layout."""
PER_AGENT = "agent"
AUTHOR = "author"
"""The envelope member a reader sets to the agent the transport vouches for, when that
is not the event's ``agent`` (a write the fold refuses)."""
NO_AGENT = ""
"""``author`` of a message on a subject that names no agent (the fold refuses it)."""

_PLAIN = re.compile(r"[A-Za-z0-9_-]+").fullmatch


def token(name: str) -> str:
    """A name as one subject token (plain names unchanged)."""
    return name if _PLAIN(name) else escape_key(name)


@dataclass(frozen=True)
class Subjects:
    """The subjects of one stream's events (``prefix`` = ``swarmlog.<STREAM>``)."""

    prefix: str
    per_agent: bool = True
    _head: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_head", f"{self.prefix}.a.")

    def of(self, agent: str, key: str | None) -> str:
        """The subject an event by ``agent`` with ``key`` is published on."""
        if not self.per_agent:
            return key_subject(self.prefix, key)
        head = self._head + token(agent)
        return f"{head}.e" if key is None else f"{head}.k.{token(key)}"

    def key(self, key: str) -> str:
        """The subject filter whose last seq is ``key``'s version (CAS)."""
        if not self.per_agent:
            return key_subject(self.prefix, key)
        return f"{self._head}*.k.{token(key)}"

    def agent(self, agent: str) -> str:
        """Every subject ``agent`` publishes on (a permission pattern)."""
        return f"{self._head}{token(agent)}.>"

    def author(self, subject: str) -> str | None:
        """The agent a stored message's subject names; None in the shared layout,
        ``NO_AGENT`` for a subject outside the layout."""
        if not self.per_agent:
            return None
        if not subject.startswith(self._head):
            return NO_AGENT
        rest = subject[len(self._head) :]
        i = rest.find(".")
        if i <= 0 or not (rest[i:] == ".e" or rest.startswith(".k.", i)):
            return NO_AGENT
        tok = rest[:i]
        if "%" not in tok:
            return tok
        try:
            return unescape_key(tok)
        except UnicodeDecodeError:
            return NO_AGENT

    def key_of(self, subject: str) -> str | None:
        """The key a key subject names (``….k.<key>``), None for any other subject."""
        if self.per_agent:
            if not subject.startswith(self._head):
                return None
            _, dot, rest = subject[len(self._head) :].partition(".")
        else:
            dot, rest = ".", subject[len(self.prefix) + 1 :]
            if not subject.startswith(self.prefix + "."):
                return None
        if not dot or not rest.startswith("k.") or "." in rest[2:] or len(rest) == 2:
            return None
        try:
            return unescape_key(rest[2:])
        except UnicodeDecodeError:
            return None

    def fits(self, subject: str, d: dict[str, Any]) -> bool:
        """Whether stored record ``d`` may sit on ``subject``: its key's subject (or the
        unkeyed one) of the agent the subject names (any agent: ``stamp`` marks a
        claimed one). A record that does not fit is skipped by readers (skip.py)."""
        key = d.get("key")
        if not self.per_agent:
            return subject == key_subject(self.prefix, key)
        who = self.author(subject)
        return bool(who) and subject == self.of(who, key)  # type: ignore[arg-type]

    def stamp(self, d: dict[str, Any], subject: str) -> dict[str, Any]:
        """``d`` (a decoded stored event), marked with ``author`` if its subject names
        another agent than its envelope does (per-agent layout only)."""
        if self.per_agent:
            who = self.author(subject)
            if who != d.get("agent"):
                d[AUTHOR] = who
        return d

    def misplaced(self, subject: str, d: dict[str, Any]) -> str | None:
        """Why a stored event's subject does not fit it (for ``verify``), else None.

        An author other than the envelope's agent starts with ``claims`` (a refused
        write, not damage); anything else is a record on the wrong subject."""
        if self.per_agent:
            who = self.author(subject)
            if who and who != d.get("agent"):
                if subject == self.of(who, d.get("key")):
                    return f"claims agent {d.get('agent')!r} but was published by {who!r}"
            elif subject == self.of(str(d.get("agent")), d.get("key")):
                return None
        elif subject == key_subject(self.prefix, d.get("key")):
            return None
        return f"stored on subject {subject}"


def layout(prefix: str, config: dict[str, Any]) -> Subjects:
    """The layout of a stream, from its configuration's metadata."""
    meta = config.get("metadata") or {}
    return Subjects(prefix, meta.get(META_SUBJECTS) == PER_AGENT)


def keep_layout(new: dict[str, Any], cur: dict[str, Any]) -> dict[str, Any]:
    """``new`` (a stream update) with ``cur``'s layout: an update never changes it (the
    stored messages stay on the subjects they were published on)."""
    meta = dict(new.get("metadata") or {})
    old = (cur.get("metadata") or {}).get(META_SUBJECTS)
    if old is None:
        meta.pop(META_SUBJECTS, None)
    else:
        meta[META_SUBJECTS] = old
    new["metadata"] = meta
    return new
