"""``forget … --propagate TARGET``: an erasure that follows promoted knowledge (docs/design.md §12).

What a task swarm promoted carries its identities into the global memory: the agent
name (a promoted memory is signed by the fact's discoverer) and the words; sessions and
threads travel as opaque names (``promote.scoped``). After the local erasure, this
erases the same identity in the global memory (an agent by name, a session or thread by
its scoped name), then sends again the facts the global memory holds from this swarm
whose words changed with the erasure (the local fact now speaks in a surviving agent's
words). Run again, it finishes what an interruption left.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from synthesizer.forget.erase import ForgetError, Identity, Result, forget, plan
from synthesizer.promotion.promote import (
    PromotionReport,
    Swarm,
    check_target,
    promote,
    received,
    scoped,
)


@dataclass
class Propagated:
    """The global memory's side of a propagated erasure."""

    target: str
    forgot: Result | None
    """The erasure in the global memory (None: it held nothing of the identity)."""
    updated: PromotionReport

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "forgot": None if self.forgot is None else self.forgot.to_dict(),
            "updated": self.updated.to_dict(),
        }


def global_identity(ident: Identity, swarm_id: str) -> Identity:
    """The identity's name in a global memory this swarm promotes into."""
    if ident.ns is not None:
        raise ForgetError("a store identity is not promoted: nothing to propagate")
    if ident.agent is not None:
        return Identity(agent=ident.agent)
    if ident.session is not None:
        return Identity(session=scoped("s", swarm_id, ident.session))
    return Identity(thread=scoped("t", swarm_id, ident.thread))


def propagate(swarm: Swarm, ident: Identity, target: str | os.PathLike[str]) -> Propagated:
    """Erase ``ident`` (already forgotten in ``swarm``) in the global memory at
    ``target`` and update what it holds from this swarm (see the module docstring)."""

    t = check_target(target)
    gident = global_identity(ident, swarm.log.swarm_id)
    with swarm.open_sibling(t, create=False) as g:
        operator = (g.refresh().config.operators or ("operator",))[0]
        held = set(received(g.refresh(), swarm.log.swarm_id)[0])
        p = plan(g.log, gident, writer=operator)
        done = forget(g, gident, operator) if (p.matched or p.intent) else None
    report = promote(swarm, t, tier="working", only=held)
    return Propagated(t, done, report)
