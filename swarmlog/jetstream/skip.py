"""Messages of a JetStream stream that are not records of the swarm: skipped, never fatal.

On JetStream every publisher with write permission on a subject can store any bytes there:
``not a record``, a record whose crc fails, or a valid keyed record on a subject that is
not its key's (``swarmlog.S.a.<agent>.e`` carrying ``"key":"k"`` would change the fold's
version of ``k`` without moving the log's CAS index of it). Such a message is not damage
of the log (the server stored exactly what was sent) but a bad write, and the subject
proves who sent it (per-agent subjects, subjects.py; the server's per-user permissions
guard them). So readers never halt on it: each reader hands out a *stand-in* at its seq
(R1: seqs stay gapless) and logs one note naming the subject's author; ``verify`` lists
it among its notes.

The stand-in is a record of type ``swarmlog.skipped`` by the subject's author (``?`` on
a stream with the shared layout, which proves no author), keyed by the subject's key if
the subject is a key subject (the log's ``version`` counts every message on a key's
subject, and the fold's versions must agree), body ``{"reason", "subject"}``, the
server's time of the message. It is built from the message alone (seq, subject, stored
time, bytes), so every reader and every replay folds the same thing; the fold does not
know the type and only counts it. Erasing the author's records (``redact``) replaces the
bytes with a tombstone of the stand-in (redact.py).
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swarmlog.jetstream.client import Raw
    from swarmlog.jetstream.subjects import Subjects

SKIPPED = "swarmlog.skipped"
"""The type of a stand-in."""
UNKNOWN = "?"
"""The agent of a stand-in whose subject names none (shared layout, or outside it)."""


def stand_in(raw: Raw, swarm: str, subjects: Subjects, reason: str) -> dict[str, Any]:
    """The stored mapping a reader hands out for message ``raw`` (see the module docstring)."""
    who = subjects.author(raw.subject) or UNKNOWN
    d: dict[str, Any] = {
        "seq": raw.seq,
        "id": hashlib.blake2b(b"%d:%s" % (raw.seq, raw.data), digest_size=16).hexdigest(),
        "ts": raw.ts,
        "swarm": swarm,
        "agent": who,
        "type": SKIPPED,
    }
    key = subjects.key_of(raw.subject)
    if key is not None:
        d["key"] = key
    d["body"] = {"reason": reason, "subject": raw.subject}
    return d


def note(stream: str, d: dict[str, Any], seen: set[int]) -> None:
    """Log, once per reader handle and seq, that the message at ``d``'s seq is skipped."""
    seq = int(d["seq"])
    if seq in seen:
        return
    seen.add(seq)
    logging.getLogger("swarmlog.jetstream").warning(
        "swarmlog: skipping seq %d of stream %s: %s (published by agent %r on %s)",
        seq,
        stream,
        d["body"]["reason"],
        d["agent"],
        d["body"]["subject"],
    )


def why_skipped(subjects: Subjects, raw: Raw, d: dict[str, Any]) -> str | None:
    """Why decoded record ``d`` of ``raw`` is skipped (its subject does not fit it), else None."""
    if not raw.subject or subjects.fits(raw.subject, d):
        return None
    key = d.get("key")
    if key is not None and subjects.key_of(raw.subject) is None:
        return f"a record keyed {key!r} on an unkeyed subject"
    return f"a record (key {key!r}) on the wrong subject"


__all__ = ["SKIPPED", "UNKNOWN", "note", "stand_in", "why_skipped"]
