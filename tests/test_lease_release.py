"""The merge-rule work item 6: a one-off synthesizer pass releases the lease when it ends.

On main a process that ran ``Swarm.synthesize()`` (or ``synth --once``) kept the lease
while it lived, so a ``synth --follow`` started afterwards stood by for the lease
timeout while agents' memories waited. Here the timeout is set to 120 s and the
follower must decide a new memory while the first process is still alive, well before
the holder's lease could have timed out (the bound is generous; no timing is measured).

Real processes: the holder is a Python process that keeps its Swarm open; the follower
is ``python -m dashboards synth --follow``.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from swarmlog import Event, open_log

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

TIMEOUT_S = 120.0
BOUND_S = 60.0  # far below the lease timeout; a follower that stands by misses it

HOLDER = textwrap.dedent(
    """
    import sys
    from synthesizer import Swarm
    swarm = Swarm.open(sys.argv[1])
    swarm.agent("a1").share("The first finding: the cache is cold after deploys")
    print(swarm.synthesize(), flush=True)
    sys.stdin.read()  # alive, Swarm open, until the test closes stdin
    swarm.close()
    """
)


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "dashboards", "--root", str(root), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def decided_by(root: Path, raw_seq: int) -> str | None:
    """The worker whose batch decided the raw at ``raw_seq`` (None: not decided yet)."""
    log = open_log(str(root))
    try:
        found = False
        for e in log.read():
            if e.type in ("fact.created", "fact.corroborated", "fact.revived"):
                found = found or e.body.get("evidence") == raw_seq
            elif e.type == "synth.progress" and found:
                return str(e.body.get("worker"))
        return None
    finally:
        log.close()


@pytest.mark.parametrize("one_off", ["Swarm.synthesize", "synth --once"])
def test_follow_takes_over_from_a_live_process_after_a_one_off_pass(
    tmp_path: Path, one_off: str
) -> None:
    root = tmp_path / "s"
    assert cli(root, "init").returncode == 0
    r = cli(root, "config", "set", f"synthesizer.lease_timeout_s={TIMEOUT_S:g}")
    assert r.returncode == 0, r.stderr
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    follower = None
    try:
        assert holder.stdout is not None
        assert int(holder.stdout.readline()) == 1  # its pass decided (and took the lease)
        if one_off == "synth --once":  # the CLI's one-off pass, on top of the live holder
            log = open_log(str(root))
            log.append(Event(agent="a2", type="memory.shared", body={"content": "x is 1"}))
            log.close()
            r = cli(root, "synth", "--once")
            assert r.returncode == 0 and r.stdout.startswith("1 decision"), r.stdout + r.stderr
            log = open_log(str(root))
            last = [e.body for e in log.read() if e.type == "synth.progress"][-1]
            log.close()
            assert last.get("released") is True  # its pass ended by giving the lease up
        follower = subprocess.Popen(
            [sys.executable, "-m", "dashboards", "--root", str(root), "synth", "--follow"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        log = open_log(str(root))
        new = log.append(
            Event(agent="a3", type="memory.shared", body={"content": "Queue lag is 40 s"})
        )
        log.close()
        started = time.monotonic()
        worker = None
        while worker is None and time.monotonic() - started < BOUND_S:
            time.sleep(0.2)
            worker = decided_by(root, new.seq or 0)
        assert holder.poll() is None  # the holder is still alive
        assert worker is not None, f"not decided in {BOUND_S:g} s (lease timeout {TIMEOUT_S:g} s)"
        assert worker.endswith(f":{follower.pid}"), worker  # by the follower
    finally:
        if follower is not None:
            follower.send_signal(signal.SIGTERM)
            follower.wait(60)
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(60)
