"""The synthesizer lease is the log's: fresh processes after a checkpoint decide, a second
worker stands by while the holder works, and takes over when the holder is killed.

Real processes throughout (the CLI through ``python -m dashboards``), on both backends.
No timing assertions: waits are loops under pytest-timeout's hang guard.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import orjson
import pytest

from swarmlog import Event, open_log
from tests.conftest import LogTarget

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)


def where(t: LogTarget) -> list[str]:
    return ["--url", t.target] if t.backend == "nats" else ["--root", t.target]


def cli(t: LogTarget, *args: str) -> subprocess.CompletedProcess[str]:
    """``swarmlog`` in a fresh process."""
    cmd = [sys.executable, "-m", "dashboards", *where(t), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def share(t: LogTarget, *contents: str) -> list[int]:
    log = open_log(t.target)
    try:
        evs = [Event(agent="a1", type="memory.shared", body={"content": c}) for c in contents]
        return [e.seq or 0 for e in log.append_many(evs)]
    finally:
        log.close()


def decided(t: LogTarget) -> Counter[int]:
    """How many decisions name each raw seq as evidence (exactly once: 1 each)."""
    log = open_log(t.target)
    try:
        return Counter(
            e.body["evidence"]
            for e in log.read()
            if e.type in ("fact.created", "fact.corroborated", "fact.revived")
        )
    finally:
        log.close()


def marks(t: LogTarget) -> list[dict[str, object]]:
    log = open_log(t.target)
    try:
        return [e.body for e in log.read() if e.type == "synth.progress"]
    finally:
        log.close()


@pytest.fixture
def target(log_target: LogTarget) -> LogTarget:
    r = cli(log_target, "init")
    assert r.returncode == 0, r.stderr
    return log_target


@pytest.mark.timeout(240)
def test_synth_once_after_a_checkpoint_decides_every_new_raw(target: LogTarget) -> None:
    first = share(target, *(f"finding number {i} about the cache" for i in range(5)))
    r = cli(target, "synth", "--once", "--json")
    assert r.returncode == 0, r.stderr
    assert orjson.loads(r.stdout)["decisions"] == 5
    for round_ in range(2):  # a checkpoint at (then past) the progress mark each time
        r = cli(target, "checkpoint")
        assert r.returncode == 0, r.stderr
        new = share(target, *(f"round {round_} new finding {i} on queues" for i in range(4)))
        r = cli(target, "synth", "--once", "--json")
        assert r.returncode == 0, r.stderr
        out = orjson.loads(r.stdout)
        assert out["decisions"] == 4 and not out["standing_by"], out
        first += new
    counts = decided(target)
    assert set(counts) == set(first) and set(counts.values()) == {1}


SWARM_SCRIPT = textwrap.dedent(
    """
    import sys
    from synthesizer import Swarm
    sw = Swarm.open(sys.argv[1])
    a = sw.agent("agent-" + sys.argv[2])
    for i in range(3):
        a.share(f"process {sys.argv[2]} observation {i} about retries")
    print(sw.synthesize(), flush=True)
    sw.checkpoint()
    sw.close()
    """
)


@pytest.mark.timeout(240)
def test_swarm_synthesize_in_a_fresh_process_decides_on_its_first_call(
    target: LogTarget,
) -> None:
    for run in ("one", "two", "three"):
        p = subprocess.run(
            [sys.executable, "-c", SWARM_SCRIPT, target.target, run],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert p.returncode == 0, p.stderr
        assert p.stdout.split() == ["3"], (run, p.stdout, p.stderr)
    counts = decided(target)
    assert len(counts) == 9 and set(counts.values()) == {1}


def _wait_line(proc: subprocess.Popen[str], needle: str) -> str:
    """Read the process's stderr until a line contains ``needle`` (hang guard: timeout)."""
    assert proc.stderr is not None
    seen = []
    while True:
        line = proc.stderr.readline()
        if not line:
            raise AssertionError(f"stderr ended before {needle!r}: {seen}")
        seen.append(line)
        if needle in line:
            return line


def _wait_decided(t: LogTarget, seqs: list[int]) -> None:
    while not set(seqs) <= set(decided(t)):
        time.sleep(0.05)


def _follow(t: LogTarget, name: str, timeout: str) -> subprocess.Popen[str]:
    cmd = [
        sys.executable,
        "-m",
        "dashboards",
        *where(t),
        "synth",
        "--follow",
        "--name",
        name,
        "--lease-timeout",
        timeout,
    ]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stop_all(*procs: subprocess.Popen[str] | None) -> None:
    for p in procs:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait(timeout=60)


def _stop_outside_the_lock(p: subprocess.Popen[str], t: LogTarget) -> None:
    """SIGSTOP ``p`` at a moment it holds no FileLog append lock. A writer stopped inside
    an append holds the flock and every writer waits for it: another fault than the hung
    lease holder these tests are about (and one no lease can end)."""
    for _ in range(200):
        os.kill(p.pid, signal.SIGSTOP)
        while _proc_state(p.pid) not in ("T", "t"):  # stopped, not merely signalled
            time.sleep(0.01)
        if t.backend != "file" or _lock_is_free(os.path.join(t.target, "lock")):
            return
        os.kill(p.pid, signal.SIGCONT)
        time.sleep(0.05)
    raise AssertionError("the holder kept the append lock through 200 tries")


def _proc_state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _lock_is_free(path: str) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def _hung_holder_and_standby(
    t: LogTarget, standby_timeout: str
) -> tuple[subprocess.Popen[str], subprocess.Popen[str], list[int]]:
    """worker-A holds the lease and then hangs (SIGSTOP: alive, no batches) with a raw
    pending; worker-B has said it stands by, naming A."""
    a = _follow(t, "worker-A", "5")
    _wait_line(a, "following")
    raws = share(t, "the first finding, decided by A")
    _wait_decided(t, raws)
    b = _follow(t, "worker-B", standby_timeout)
    _wait_line(b, "following")
    raws += share(t, "A refreshes its lease with this one")  # A's last batch: just now
    _wait_decided(t, raws)
    _stop_outside_the_lock(a, t)
    raws += share(t, "pending while A hangs")
    line = _wait_line(b, "standing by")
    assert "worker-A holds the lease since" in line
    return a, b, raws


def _check_exactly_once(t: LogTarget, raws: list[int]) -> list[object]:
    _wait_decided(t, raws)
    counts = decided(t)
    assert set(counts) == set(raws) and set(counts.values()) == {1}
    return [m.get("worker") for m in marks(t)]


@pytest.mark.timeout(240)
def test_second_worker_stands_by_then_takes_over_from_a_killed_holder(
    target: LogTarget,
) -> None:
    a = b = None
    try:
        # a long timeout: the takeover below comes from A's process being gone
        a, b, raws = _hung_holder_and_standby(target, "3600")
        os.kill(a.pid, signal.SIGKILL)
        a.wait(timeout=60)
        line = _wait_line(b, "taking the lease over")
        assert "worker-A" in line and "is gone" in line
        raws += share(target, "appended after A died")
        workers = _check_exactly_once(target, raws)
        assert workers[0] == "worker-A" and workers[-1] == "worker-B"
    finally:
        _stop_all(a, b)


@pytest.mark.timeout(240)
def test_standby_takes_over_a_hung_holder_after_the_lease_timeout(target: LogTarget) -> None:
    a = b = None
    try:
        # 20 s: B must first see A's lease as fresh (A's last batch is seconds old when B
        # looks, longer on a loaded machine or a JetStream log) and only then see it go
        # stale; with 8 s B sometimes found it stale at once and never said "standing by"
        a, b, raws = _hung_holder_and_standby(target, "20")
        line = _wait_line(b, "taking the lease over")  # A is alive, its batches stopped
        assert "worker-A" in line and "no batch for" in line
        _wait_decided(target, raws)
        os.kill(a.pid, signal.SIGCONT)  # A wakes up: B's lease is fresh, A must not write
        raws += share(target, "after A woke up")
        workers = _check_exactly_once(target, raws)
        assert workers[-1] == "worker-B"
        assert workers.index("worker-B") > max(i for i, w in enumerate(workers) if w == "worker-A")
    finally:
        _stop_all(a, b)


@pytest.mark.timeout(240)
def test_standing_by_once_names_the_holder_and_writes_nothing(target: LogTarget) -> None:
    from synthesizer.worker.synth import Synthesizer

    share(target, "held by an in-process worker")
    log = open_log(target.target)
    try:
        w = Synthesizer(log, name="keeper")
        assert w.run_once() == 1  # keeper holds the lease (and does not release it)
        share(target, "a new raw the keeper has not decided yet")
        before = log.last_seq
        r = cli(target, "synth", "--once", "--json")
        assert r.returncode == 0, r.stderr
        out = orjson.loads(r.stdout)
        assert out["decisions"] == 0 and out["standing_by"]
        assert out["lease"]["worker"] == "keeper" and out["lease"]["retake_in_s"] > 0
        r = cli(target, "synth", "--once")
        assert "keeper holds the lease since" in r.stdout and "standing by" in r.stdout
        assert log.last_seq == before  # standing by writes nothing
        assert w.run_once() == 1  # the holder goes on
        assert w.release()
        r = cli(target, "synth", "--once", "--json")
        assert orjson.loads(r.stdout)["standing_by"] is False
    finally:
        log.close()


def test_lease_timeout_is_a_setting_and_validated() -> None:
    from synthesizer.config import SynthConfig, ValidationError

    assert SynthConfig().synthesizer.lease_timeout_s == 30.0
    cfg = SynthConfig.model_validate({"synthesizer": {"lease_timeout_s": 2.5}})
    assert cfg.synthesizer.lease_timeout_s == 2.5
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValidationError):
            SynthConfig.model_validate({"synthesizer": {"lease_timeout_s": bad}})
