"""Three agent processes share one memory through a swarm directory (no server).

Run:  .venv/bin/python examples/multiprocess_team.py [ROOT]

Each worker is a separate OS process that opens the same swarm, shares what it finds
(two of them find the same thing in different words), then looks up what its peers
found. A synthesizer worker running in this process folds the memories into facts,
deduplicated and linked to every agent that backs them. The script ends by printing
the facts and checking that the swarm agrees on them.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
import tempfile
import time
from pathlib import Path

from synthesizer import Swarm
from synthesizer.worker.background import BackgroundSynth

FINDINGS = {
    "researcher-1": [
        ("The login test fails when the cache TTL is under one minute", "bug"),
        ("The staging database is reset every night at 02:00 UTC", "discovery"),
    ],
    "researcher-2": [
        ("The login test fails when the cache TTL is under one minute.", "bug"),  # same finding
        ("Deploys to production need two approvals", "process"),
    ],
    "researcher-3": [("The API rate limit is 100 requests per minute per token", "discovery")],
}


def worker(root: str, name: str) -> None:
    """One agent process: share its findings, then recall a peer's."""
    with Swarm.open(root) as swarm:
        agent = swarm.agent(name, session="run-1")
        for content, category in FINDINGS[name]:
            agent.share(content, category=category, importance=0.7)
        # wait (a few seconds at most) until the synthesizer has decided everyone's memories
        deadline = time.monotonic() + 30
        while swarm.refresh().pending and time.monotonic() < deadline:
            time.sleep(0.05)
        hits = agent.recall("why does the login test fail", limit=1)
        if hits:
            print(f"{name} recalls: {hits[0].fact.content} (from {', '.join(hits[0].fact.agents)})")


def main(root: str) -> int:
    Swarm.open(root).close()  # create the swarm directory
    synth = BackgroundSynth(root, poll=0.05).start()  # or: swarmlog --root ROOT synth --follow
    try:
        procs = [mp.Process(target=worker, args=(root, name)) for name in FINDINGS]
        for p in procs:
            p.start()
        for p in procs:
            p.join(60)
        deadline = time.monotonic() + 30
        with Swarm.open(root) as swarm:
            while swarm.refresh().pending and time.monotonic() < deadline:
                time.sleep(0.05)
    finally:
        synth.stop()
    with Swarm.open(root) as swarm:
        facts = sorted(swarm.state().facts.values(), key=lambda f: f.created_seq)
        print(f"{len(facts)} facts from {sum(len(v) for v in FINDINGS.values())} memories:")
        for f in facts:
            print(f"  {f.id:<5} support {f.support}  {f.content}  [{', '.join(f.agents)}]")
        login = [f for f in facts if "login test" in f.content]
        ok = len(facts) == 4 and len(login) == 1 and login[0].support == 2
        ok = ok and all(p.exitcode == 0 for p in procs)
    print("ok" if ok else "UNEXPECTED RESULT")
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) > 1:
        sys.exit(main(sys.argv[1]))
    with tempfile.TemporaryDirectory() as tmp:
        sys.exit(main(str(Path(tmp) / "swarm")))
