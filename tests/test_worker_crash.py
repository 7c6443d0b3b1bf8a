"""Exactly-once synthesis: a worker SIGKILLed at random points, and two workers at once."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from swarmlog import Event, open_log
from synthesizer.state import SwarmState
from synthesizer.worker.synth import Synthesizer, facts_digest

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

WORKER = (
    "import sys\n"
    "from swarmlog import open_log\n"
    "from synthesizer.worker.synth import Synthesizer\n"
    # a killed worker never releases the lease: its successor takes it over at once (the
    # holder's process is gone) or after the (short) lease timeout
    "w = Synthesizer(open_log(sys.argv[1]), batch_size=int(sys.argv[2]), lease_timeout_s=0.05)\n"
    "w.run(idle_exit=0.3, poll=0.05)\n"
)
TOPICS = [
    "The login page crashes on Safari 17",
    "Uploads over 2 GB time out at the proxy",
    "The nightly export skips archived projects",
    "Search results ignore the locale setting",
    "Webhook retries are not idempotent",
    "The settings page leaks the API token in logs",
]


def _raw_log(path: Path, n: int = 900, seed: int = 7) -> None:
    rng = random.Random(seed)
    log = open_log(path)
    batch = []
    for i in range(n):
        agent = f"agent-{rng.randrange(6)}"
        r = rng.random()
        if r < 0.4:
            content = rng.choice(TOPICS)
        elif r < 0.55:
            content = rng.choice(TOPICS).lower() + " again"
        elif r < 0.7:
            value = rng.choice(["8080", "3000"])
            batch.append(
                Event(
                    agent=agent,
                    type="memory.shared",
                    body={"content": f"api port is {value}", "subject": "api.port", "value": value},
                )
            )
            continue
        else:
            content = f"Finding {i}: component {rng.randrange(50)} fails under load {i % 7}"
        batch.append(Event(agent=agent, type="memory.shared", body={"content": content}))
    log.append_many(batch)
    log.close()


def _decisions(path: Path) -> Counter[int]:
    log = open_log(path)
    c: Counter[int] = Counter()
    for ev in log.read():
        if ev.type in ("fact.created", "fact.corroborated"):
            c[ev.body["evidence"]] += 1
    log.close()
    return c


def _final(path: Path) -> SwarmState:
    log = open_log(path)
    w = Synthesizer(log)
    w.catch_up()
    log.close()
    return w.state


def _spawn(path: Path, batch: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WORKER, str(path), str(batch)])


def test_killed_worker_restarts_to_the_same_facts(tmp_path: Path) -> None:
    base = tmp_path / "base"
    _raw_log(base)
    clean, crashy, duo = tmp_path / "clean", tmp_path / "crashy", tmp_path / "duo"
    for p in (clean, crashy, duo):
        shutil.copytree(base, p)
    ref_log = open_log(clean)
    Synthesizer(ref_log, batch_size=5).run_once()
    ref_log.close()
    ref = _final(clean)
    raws = {e.seq for e in open_log(base).read()}

    # Kill points are chosen in the worker's own progress, not in wall-clock time (a fast
    # worker would finish before a timed kill): wait until it has appended a random number
    # of events (0 = while it is still starting or catching up), then a random sliver of a
    # batch, then SIGKILL. Every kill lands in a live worker with work left to do.
    rng = random.Random(11)
    kills = int(os.environ.get("SWARMLOG_SYNTH_KILLS", "50"))
    watch = open_log(crashy)
    done = 0
    while done < kills:
        target = watch.last_seq + rng.choice((0, 1, 3, 6, 12))
        p = _spawn(crashy, 5)
        while p.poll() is None and watch.last_seq < target:
            time.sleep(0.001)
        time.sleep(rng.uniform(0, 0.004))
        if p.poll() is not None:
            break  # it finished everything before the kill point
        p.send_signal(signal.SIGKILL)
        p.wait()
        done += 1
    watch.close()
    # a loaded machine lets a worker run further between kills: 50 are aimed at, and the
    # work (900 raw memories) lasts for them on a quiet machine; 30 is the floor checked
    least = min(kills, 30)
    assert done >= least, f"only {done} kills landed before the work ran out"
    p = _spawn(crashy, 5)
    assert p.wait(timeout=120) == 0

    got = _final(crashy)
    assert facts_digest(got) == facts_digest(ref)
    counts = _decisions(crashy)
    assert set(counts) == raws and set(counts.values()) == {1}
    assert open_log(crashy).verify().ok

    # two workers started together: one lease, no duplicate decisions
    procs = [_spawn(duo, 5), _spawn(duo, 5)]
    for p in procs:
        assert p.wait(timeout=120) == 0
    counts = _decisions(duo)
    assert set(counts) == raws and set(counts.values()) == {1}
    assert facts_digest(_final(duo)) == facts_digest(ref)
