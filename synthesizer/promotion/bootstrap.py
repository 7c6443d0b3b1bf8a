"""Bootstrap: seed a new task swarm with a global memory's facts (docs/design.md §12).

The other half of seed 002's loop: knowledge harvested from earlier tasks is injected
before the next. Each chosen global fact is appended to the new swarm as a
``memory.shared`` carrying its provenance: first the global fact itself (the global
swarm's id and name, the global fact id, its raw seqs and version), then the origins the
global fact lists. The new swarm's synthesizer makes facts of them as of any memory, so
``Fact.origins`` of the result leads back to the global fact and to the task swarms it
came from. Event ids derive from (global swarm id, global fact id, version) and a global
fact the new swarm already holds is not sent again: bootstrapping twice adds nothing.
"""

from __future__ import annotations

import hashlib
import heapq
import os
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from synthesizer.promotion.promote import (
    PromotionError,
    Swarm,
    check_target,
    memory_event,
    received,
)
from synthesizer.state import origins as O
from synthesizer.state.facts import ACTIVE, CONTESTED, Fact

if TYPE_CHECKING:
    from synthesizer.state import SwarmState

_LIVE = (ACTIVE, CONTESTED)


@dataclass
class BootstrapReport:
    """What a bootstrap seeded: ``seeded`` new memories, ``unchanged`` already held."""

    source: str
    seeded: int = 0
    unchanged: int = 0
    facts: list[str] = field(default_factory=list)
    """The global fact ids sent."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bootstrap_id(swarm_id: str, fact_id: str, version: int) -> str:
    """The event id of seeding global fact ``fact_id`` at ``version`` from ``swarm_id``."""
    h = hashlib.blake2b(f"bootstrap:{swarm_id}:{fact_id}:{version}".encode(), digest_size=16)
    return "b" + h.hexdigest()


def choose(g: Swarm, query: str | None, limit: int) -> list[Fact]:
    """The global facts to seed: the ``limit`` most relevant to ``query`` (a search that
    logs nothing in the global memory), or without a query the ``limit`` strongest live
    ones (then most supported, then oldest)."""
    if query:
        return [h.fact for h in g.search(query, limit=limit)]
    return strongest(g.refresh(), limit)


def strongest(state: SwarmState, limit: int) -> list[Fact]:
    """The ``limit`` strongest active or contested facts of ``state`` (ties: support, then
    the oldest). From the checkpoint's columns when it has them: no fact is parsed but
    the ones returned."""
    from synthesizer.metrics import frame

    fr = frame(state)
    if fr is None:
        live = (f for f in state.facts.values() if f.status in _LIVE)
        return heapq.nsmallest(limit, live, key=lambda f: (-f.strength, -f.support, f.created_seq))
    from swarmlog.numpyload import np

    a = fr.arrays
    codes = [i for i, name in enumerate(fr.codes["status"].names) if name in _LIVE]
    rows = np.flatnonzero(np.isin(a["status"], codes))
    keys = (a["created_seq"][rows], -a["support"][rows], -a["strength"][rows])
    best = rows[np.lexsort(keys)][:limit]
    ids = list(state.facts)
    return [state.facts[ids[i]] for i in best.tolist()]


def bootstrap(
    swarm: Swarm,
    source: str | os.PathLike[str],
    query: str | None = None,
    limit: int = 200,
    *,
    synthesize: bool = False,
) -> BootstrapReport:
    """Seed ``swarm`` with facts of the global memory at ``source`` (see the module)."""
    if limit < 1:
        raise PromotionError("bootstrap limit must be at least 1")
    src = check_target(source)

    report = BootstrapReport(source=src)
    with swarm.open_sibling(src, create=False) as g:
        gid = g.log.swarm_id
        if gid == swarm.log.swarm_id:
            raise PromotionError(f"cannot bootstrap a swarm from itself ({src})")
        held, waiting = received(swarm.refresh(), gid)
        events = []
        for gf in choose(g, query, limit):
            if gf.id in held or gf.id in waiting or gf.agent is None:
                report.unchanged += 1
                continue
            own = {
                "swarm": gid,
                "name": g.name,
                "fact": gf.id,
                "seqs": O.evidence_seqs(gf),
                "version": gf.version,
            }
            carried = [own] + [
                {k: o[k] for k in ("swarm", "name", "fact", "seqs", "version")}
                for o in gf.origins[: O.MAX_ORIGINS - 1]
            ]
            events.append(memory_event(gf, bootstrap_id(gid, gf.id, gf.version), carried))
            report.facts.append(gf.id)
    for i in range(0, len(events), 512):
        swarm.log.append_many(events[i : i + 512])
    report.seeded = len(events)
    if synthesize and events:
        swarm.synthesize()
    return report
