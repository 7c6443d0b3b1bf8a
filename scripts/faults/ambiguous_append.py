"""Fault: JetStream appends that time out but land (robustness work, defect 7).

Starts a real nats-server, and while an agent shares distinct memories one every 50 ms
(retrying a failed ``share`` with the same arguments, as the error tells it to), pauses
the server with SIGSTOP 8 times for 0.5-10 s (client timeout 0.5 s; the API's own
retries give up after about 8 s), so that publishes sit in the paused server's socket
and are stored after the client gave up. Checks that every memory is stored exactly once
and counts the ambiguous failures the agent saw.

Run: .venv/bin/python scripts/faults/ambiguous_append.py   (about a minute)
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from swarmlog import LogUnavailable  # noqa: E402
from synthesizer import Swarm  # noqa: E402
from tests.natsserver import NatsServer  # noqa: E402

PAUSES = 8


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="swarmlog-fault-js-"))
    srv = NatsServer(base / "nats")
    srv.start()
    assert srv.proc is not None
    pid = srv.proc.pid
    ambiguous = 0
    t0 = time.monotonic()
    try:
        with Swarm.open(f"{srv.url}/faults", timeout=0.5) as sw:
            agent = sw.agent("a1")
            done = threading.Event()

            def pauser() -> None:
                rng = random.Random(3)
                for _ in range(PAUSES):
                    if done.wait(rng.uniform(0.3, 1.5)):
                        return
                    os.kill(pid, signal.SIGSTOP)
                    time.sleep(rng.uniform(0.5, 10.0))
                    os.kill(pid, signal.SIGCONT)

            t = threading.Thread(target=pauser)
            t.start()
            n = 0
            while t.is_alive():
                i, n = n, n + 1
                time.sleep(0.05)
                while True:
                    try:
                        agent.share(f"memory {i}: service {i % 9} is slow at peak")
                        break
                    except LogUnavailable as e:
                        ambiguous += getattr(e, "maybe_stored", True)
                        time.sleep(0.2)  # and call it again, as the error says is safe
            done.set()
            t.join()
            os.kill(pid, signal.SIGCONT)
            counts = Counter(
                ev.body["content"] for ev in sw.log.read(1) if ev.type == "memory.shared"
            )
    finally:
        os.kill(pid, signal.SIGCONT)
        srv.stop()
        shutil.rmtree(base, ignore_errors=True)
    dups = sum(c - 1 for c in counts.values())
    ok = len(counts) == n and dups == 0
    print(
        f"{'held  ' if ok else 'FAILED'}  {n} shares under {PAUSES} server pauses: "
        f"{len(counts)} distinct stored, {dups} duplicates; {ambiguous} ambiguous failures "
        f"retried by the caller; {time.monotonic() - t0:.0f}s"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
