"""A fact's whole history for ``board FACT``: the events keyed on it (``Board.history``)
plus the ones that name it in their body: a resolution it lost (``fact.resolved`` keys
the winner and lists the losers), a contest naming it as a rival, and the agents'
reinforcements and feedback (``target``). So both sides of a contest show how it ended,
and every vote shows up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthesizer import events as T

if TYPE_CHECKING:
    from swarmlog import Event, Log
    from synthesizer.board import HistoryEntry


def names(ev: Event, fact_id: str) -> bool:
    """Whether ``ev``'s body is about ``fact_id`` without being keyed on it."""
    b: dict[str, Any] = ev.body
    t = ev.type
    if t in (T.MEMORY_REINFORCED, T.MEMORY_FEEDBACK):
        return b.get("target") == fact_id
    if t == T.FACT_RESOLVED:
        return fact_id in (b.get("losers") or ()) or b.get("winner") == fact_id
    if t == T.FACT_CONTESTED:
        return fact_id in (b.get("rivals") or ())
    return False


def full_history(
    log: Log, fact_id: str, keyed: list[HistoryEntry], since: int
) -> list[HistoryEntry]:
    """``keyed`` (the board's history) with the events from seq ``since`` on that name
    the fact in their body, in seq order, each once."""
    from synthesizer.board import HistoryEntry

    seen = {h.seq for h in keyed}
    extra = [
        HistoryEntry(ev.seq or 0, ev.agent, ev.type, ev.body, ev.ts)
        for ev in log.read(max(1, since))
        if ev.key != fact_id and (ev.seq or 0) not in seen and names(ev, fact_id)
    ]
    return sorted([*keyed, *extra], key=lambda h: h.seq)


__all__ = ["full_history", "names"]
