"""``repairs.jsonl``: the torn tails writers cut off, one JSON line each (read by verify)."""

from __future__ import annotations

import os
from typing import Any

import orjson

from swarmlog.contract import VerifyReport
from swarmlog.errors import SwarmlogError
from swarmlog.file.fsguard import open_nofollow

REPAIRS = "repairs.jsonl"


def record(root: str, note: dict[str, Any]) -> None:
    """Append one repair note (never through a symlink planted as the file)."""
    path = os.path.join(root, REPAIRS)
    fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, orjson.dumps(note) + b"\n")
    finally:
        os.close(fd)


def report(root: str, rep: VerifyReport) -> None:
    """Add the recorded repairs to ``rep``'s notes (a refused file to its problems)."""
    try:
        rep.notes.extend(notes(root))
    except SwarmlogError as e:
        rep.problems.append(str(e))


def notes(root: str) -> list[str]:
    """One verify note per recorded repair (none if the file is missing)."""
    try:
        fd = open_nofollow(os.path.join(root, REPAIRS), os.O_RDONLY, writing=False)
    except FileNotFoundError:
        return []
    with os.fdopen(fd, "rb") as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        try:
            r = orjson.loads(line)
            out.append(
                f"repaired: cut {r['bytes']} bytes of a torn tail in {r['segment']} "
                f"at byte {r['offset']} after seq {r['after_seq']} ({r['reason']})"
            )
        except (orjson.JSONDecodeError, KeyError, TypeError):
            out.append("repairs.jsonl holds an unreadable line")
    return out
