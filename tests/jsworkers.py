"""Writer processes of the JetStream sealing tests (test_js_sealer.py).

    python -m tests.jsworkers steady TARGET AGENT      # append every 20 ms until killed
    python -m tests.jsworkers burst TARGET AGENT N     # append N events, close, exit

``steady`` prints one line when it has appended its first event: its seal-lease token.
"""

from __future__ import annotations

import sys
import time

from swarmlog import Event
from swarmlog.jetstream import JetStreamLog


def _ev(agent: str, i: int) -> Event:
    return Event(agent=agent, type="test.event", body={"i": i})


def steady(target: str, agent: str) -> None:
    with JetStreamLog(target) as log:
        log.append(_ev(agent, 0))
        print(log._seals.lease.me, flush=True)
        i = 1
        while True:
            log.append(_ev(agent, i))
            i += 1
            time.sleep(0.02)


def burst(target: str, agent: str, n: int) -> None:
    with JetStreamLog(target) as log:
        for i in range(n):
            log.append(_ev(agent, i))


if __name__ == "__main__":
    what, target, agent = sys.argv[1:4]
    if what == "steady":
        steady(target, agent)
    else:
        burst(target, agent, int(sys.argv[4]))
