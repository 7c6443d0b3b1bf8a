"""The automatic harvest: ended sessions' facts promoted to the global memory (docs/design.md §12).

With ``promotion.when=session_end`` and a ``promotion.target`` in the configuration, the
fold lists every ended session under ``state.promotion_waiting`` until a
``promotion.done`` event names it. ``harvest`` promotes the waiting sessions' qualifying
facts and appends that event; ``Swarm.end_session`` runs it in a daemon thread, so an
agent never waits for the global memory. If the target cannot be reached the sessions
stay waiting (the dashboard shows them) and the next harvest — the next session's end,
or ``swarmlog promote --pending`` — tries again. Promotion is idempotent, so a harvest
that died half-way is simply run again.
"""

from __future__ import annotations

import logging
import threading
import time

from swarmlog import Event
from synthesizer import events as T
from synthesizer.promotion.promote import PROMOTER, PromotionReport, Swarm, promote

LOG = logging.getLogger("synthesizer.harvest")

DECIDED_WAIT_S = 10.0
"""How long a harvest waits for the synthesizer to decide the sessions' last memories."""


def _decided(swarm: Swarm, upto: int, wait_s: float) -> None:
    """Wait (at most ``wait_s``) until no memory at or before seq ``upto`` is undecided."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not any(q <= upto for q in swarm.refresh().pending):
            return
        time.sleep(0.2)


def harvest(swarm: Swarm, wait_s: float = DECIDED_WAIT_S) -> PromotionReport | None:
    """Promote the facts of the sessions waiting for promotion and mark them done.

    Returns None when nothing waits (or no target is configured); raises what the
    promotion raised (the sessions then stay waiting)."""
    state = swarm.refresh()
    waiting = dict(state.promotion_waiting)
    cfg = state.config.promotion
    if not waiting or not cfg.target:
        return None
    _decided(swarm, max(waiting.values()), wait_s)
    report = promote(swarm, cfg.target, cfg.tier, cfg.min_support, sessions=set(waiting))
    swarm.appends.append(
        Event(
            agent=PROMOTER,
            type=T.PROMOTION_DONE,
            body={"sessions": sorted(waiting), "target": cfg.target[:1024]},
        )
    )
    return report


_running = threading.Lock()


def harvest_in_background(swarm: Swarm) -> threading.Thread | None:
    """Run ``harvest`` in a daemon thread (one at a time per process) over its own
    ``Swarm`` of the same log (a swarm's live state is not shared between threads);
    failures are logged and left waiting for the next harvest. Returns the thread, or
    None when one is already running."""
    if not _running.acquire(blocking=False):
        return None

    fork = swarm.fork

    def run() -> None:
        try:
            harvest(fork())
        except Exception as e:  # the global memory unreachable, a conflict: retried later
            LOG.warning("promotion to the global memory failed, will retry: %s", e)
        finally:
            _running.release()

    t = threading.Thread(target=run, name="swarmlog-harvest", daemon=True)
    t.start()
    return t
