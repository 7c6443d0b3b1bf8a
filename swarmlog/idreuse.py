"""An event id reused for other content: told apart from a retry, and refused.

R3 of the contract answers an append whose id is already stored with the stored
original: that makes a retry after a lost answer safe. It also used to answer an append
that only shares the id, silently dropping what the caller meant to write. Every backend
now compares what the append asked to store with what is stored under that id and
raises ``EventIdReused`` (one line, naming the stored seq) when they differ; the same
content is still a retry and gets the original.

What counts as content: the fields a writer chooses (agent, session, thread, type, key,
body, causes; swarm when the event names one), compared as the JSON the log stores,
so a tuple equals its list and ``true`` does not equal ``1``. Not ``ts`` (the log stamps
its own), nor members a reader adds (``author``). A stored record redacted since
(erasure) no longer holds its original content and cannot be compared: the retry gets
the redacted record, as before.

Only the retry path pays for this (the check runs when an id is found stored).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import orjson

from swarmlog.envelope import Event
from swarmlog.errors import EventIdReused
from swarmlog.redaction import MEMBER

Stored = TypeVar("Stored", bound=Event)

FIELDS = ("swarm", "agent", "session", "thread", "type", "key", "body", "causes")
"""The envelope fields a writer chooses, in envelope order."""

_SORT = orjson.OPT_SORT_KEYS


def _json(v: Any) -> bytes:
    return orjson.dumps(v, option=_SORT)


def differing(asked: Mapping[str, Any], stored: Mapping[str, Any]) -> list[str]:
    """The fields in which the event ``asked`` (an Event's envelope) differs from the
    stored record ``stored`` under the same id; [] for a retry (or a redacted record)."""
    if MEMBER in stored:
        return []
    out = []
    for f in FIELDS:
        a, b = asked.get(f), stored.get(f)
        if f == "swarm" and a is None:
            continue  # the log filled it with its own name
        if f == "causes":
            a, b = a or None, b or None
        if a is b or (type(a) is type(b) is str and a == b):
            continue
        if _json(a) != _json(b):
            out.append(f)
    return out


def check(asked: Event, stored: Stored) -> Stored:
    """``stored`` when ``asked`` is a retry of it; else raise EventIdReused."""
    fields = differing(asked.envelope, stored.envelope)
    if fields:
        raise EventIdReused(asked.id, stored.seq or 0, fields)
    return stored
