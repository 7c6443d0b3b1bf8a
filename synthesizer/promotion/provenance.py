"""Following a global fact's origins back to the raw events of the swarms they came from.

``Fact.origins`` names an origin by swarm id (and name), fact id and raw seqs, not by
where that swarm lives: a global memory outlives the paths and servers of the task
swarms that fed it. ``resolve`` takes the places to look (directories, or
``nats://host:port/STREAM`` URLs) and reads the raw events of each origin from the one
whose swarm id matches; an origin whose swarm is not among them is reported unreachable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swarmlog import Event, SwarmlogError, open_log


@dataclass
class Resolved:
    """One origin with its raw events (``events`` empty and ``where`` None: unreachable)."""

    origin: dict[str, Any]
    where: str | None = None
    events: list[Event] = field(default_factory=list)


def sibling_places(root: str | os.PathLike[str]) -> list[str]:
    """The directories beside ``root`` that hold a swarm (a file-backend convention: task
    swarms and their global memory under one parent)."""
    parent = Path(root).resolve().parent
    try:
        kids = sorted(p for p in parent.iterdir() if (p / "swarm.json").is_file())
    except OSError:
        return []
    return [str(p) for p in kids]


def resolve(origins: list[dict[str, Any]], places: Iterable[str]) -> list[Resolved]:
    """Each origin with the raw events at its seqs, read from the place whose swarm id is
    the origin's (places that cannot be opened are passed over)."""
    want = {o["swarm"] for o in origins}
    found: dict[str, str] = {}
    for place in dict.fromkeys(places):
        if want <= set(found):
            break
        try:
            with open_log(place, create=False) as log:
                sid = log.swarm_id
        except (SwarmlogError, OSError, ValueError):
            continue
        if sid in want:
            found.setdefault(sid, place)
    out = []
    for o in origins:
        where = found.get(o["swarm"])
        r = Resolved(origin=o, where=where)
        if where is not None:
            with open_log(where, create=False) as log:
                for q in o.get("seqs", []):
                    r.events.extend(log.read(q, q))
        out.append(r)
    return out
