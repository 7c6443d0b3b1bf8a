"""Commands that can take seconds say what they are doing on a terminal (polish work): a
spinner on stderr when it is a terminal (a real pty here), nothing when it is a pipe,
and stdout the same either way."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synthesizer.swarm import Swarm

pytestmark = pytest.mark.slow  # every test here takes seconds (scripts/test --all)

ROOT = Path(__file__).resolve().parent.parent


def _run(root: Path, args: list[str], tty: bool) -> tuple[bytes, bytes]:
    cmd = [sys.executable, "-m", "dashboards", "--root", str(root), *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if not tty:
        r = subprocess.run(cmd, capture_output=True, timeout=120, env=env)
        return r.stdout, r.stderr
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err = b""
    deadline = time.monotonic() + 120  # a guard only: the loop ends when the child does
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if not ready:
            if p.poll() is not None:
                break  # exited, and nothing more to read
            continue  # still starting (a loaded machine): silence is not the end
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the child closed the pty
            break
        if not chunk:
            break
        err += chunk
    assert p.stdout is not None
    out = p.stdout.read()
    p.wait(timeout=60)
    os.close(master)
    return out, err


def test_spinner_on_a_terminal_only(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        sw.agent("a").share("something worth replaying")
        sw.synthesize()
    for args, says in (
        (["replay", "--from-start"], b"replaying the log from seq 1"),
        (["diff", "--from", "0"], b"folding the log at --from"),
        (["verify"], b"verifying checksums"),
    ):
        out_tty, err_tty = _run(root, args, tty=True)
        out_pipe, err_pipe = _run(root, args, tty=False)
        assert says in err_tty, (args, err_tty)
        assert err_pipe == b"", (args, err_pipe)
        if args[0] != "verify":
            assert out_tty.split(b"(")[0] == out_pipe.split(b"(")[0]  # same result


def test_spinner_on_the_commands_that_write(tmp_path: Path) -> None:
    """synth --once, compact and forget: the spinner on a terminal, none when piped."""
    for args, says in (
        (["synth", "--once"], b"deciding raw memories"),
        (["compact"], b"compacting"),
        (["forget", "--agent", "a", "--as", "operator"], b"forgetting agent 'a'"),
    ):
        for tty in (True, False):
            root = tmp_path / f"{args[0]}-{tty}"
            with Swarm.open(root) as sw:
                sw.agent("a").share("something worth deciding")
            _, err = _run(root, args, tty=tty)
            assert (says in err) if tty else err == b"", (args, tty, err)
