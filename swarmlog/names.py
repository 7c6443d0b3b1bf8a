"""Validation of the short names an event carries (swarm, agent, session, thread, key, type)."""

from __future__ import annotations

import os
import re
import uuid

from swarmlog.errors import InvalidEvent


def new_swarm_id() -> str:
    """A fresh log identity (every backend names a new log with one)."""
    return uuid.uuid4().hex

MAX_NAME = 128
_TYPE_RE = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$")
# printable ASCII without space, "/" and "\\": the common case, checked in one call
_ASCII_NAME = re.compile(r"[!-.0-\[\]-~]{1," + str(MAX_NAME) + "}").fullmatch


def check_name(field: str, value: str) -> str:
    """Return ``value`` if it is a valid name, else raise InvalidEvent.

    Names are 1..128 printable characters with no whitespace and no path
    separators, and are not ``.`` or ``..``: they end up in file names,
    NATS subjects and terminal output.
    """
    if type(value) is str and _ASCII_NAME(value) and value != "." and value != "..":
        return value
    if not isinstance(value, str):
        raise InvalidEvent(f"{field} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidEvent(f"{field} must not be empty")
    if len(value) > MAX_NAME:
        raise InvalidEvent(f"{field} is {len(value)} characters long (max {MAX_NAME})")
    if value in (".", ".."):
        raise InvalidEvent(f"{field} must not be {value!r}")
    for ch in value:
        if ch in "/\\" or ch.isspace() or not ch.isprintable():
            raise InvalidEvent(f"{field} {value!r} contains a forbidden character {ch!r}")
    return value


def check_type(value: str) -> str:
    """Return ``value`` if it is a dotted lowercase event type name such as ``memory.shared``."""
    if not isinstance(value, str) or not _TYPE_RE.match(value) or len(value) > MAX_NAME:
        raise InvalidEvent(f"type {value!r} is not a dotted lowercase name like 'memory.shared'")
    return value


def default_swarm_name(root: os.PathLike[str] | str) -> str:
    """A swarm name from a log directory's name (what ``init`` uses without --name)."""
    base = os.path.basename(os.path.realpath(root)).lstrip(".") or "swarm"
    clean = "".join(c if c.isalnum() or c in "-_" else "-" for c in base)
    return clean[:64] or "swarm"
