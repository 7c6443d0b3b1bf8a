"""A following synthesizer waits out a full disk and catches up (docs/faults.md, "The
writer index lost, replaced or cut; ...").

``swarmlog synth --follow`` exited 1 at the first decision batch that met ENOSPC and never
resumed, and the MCP server's embedded synthesizer reported ``stopped`` for good. Now the
follower (synthesizer/worker/follow.py) retries with backoff, reports the condition, and
decides what was shared once writes succeed. On a small tmpfs the test mounts (root).
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event, FileLog, SwarmlogError
from synthesizer.errors import SynthInterrupted
from synthesizer.replay import state_at
from synthesizer.worker.background import BackgroundSynth
from synthesizer.worker.follow import storage_error
from tests.cli_util import run_cli
from tests.test_disk_full import (
    _raws,
    fill,
    tmpfs,  # noqa: F401 (the fixture)
)

pytestmark = pytest.mark.timeout(180)


def _pending(root: Path) -> int:
    with FileLog(root, notify=False) as log:
        return len(state_at(log, from_start=True).pending)


def _wait_decided(root: Path, within: float) -> float:
    """Seconds until nothing is pending (fails after ``within``)."""
    t0 = time.monotonic()
    while _pending(root):
        assert time.monotonic() - t0 < within, f"{_pending(root)} still undecided"
        time.sleep(0.2)
    return time.monotonic() - t0


def _share(root: Path, n: int, start: int) -> None:
    with FileLog(root, notify=False) as log:
        log.append_many(
            Event(agent=f"agent-{i % 4}", type="memory.shared", body={"content": f"later {i}"})
            for i in range(start, start + n)
        )


def test_synth_follow_waits_out_a_full_disk(
    tmpfs: Callable[[str], Path],  # noqa: F811 (the fixture)
) -> None:
    mnt = tmpfs("4m")
    root = mnt / "s"
    assert run_cli("init", "--root", str(root)).code == 0
    with FileLog(root, notify=False) as log:
        log.append_many(_raws(40))
    exe = Path(sys.executable).with_name("swarmlog")
    p = subprocess.Popen(
        [str(exe), "--root", str(root), "synth", "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_decided(root, 60)
        os.kill(p.pid, signal.SIGSTOP)  # (the next raws wait for it, the disk fills)
        _share(root, 30, 0)
        filler = fill(mnt)
        os.kill(p.pid, signal.SIGCONT)
        time.sleep(3.0)  # it meets ENOSPC, retries
        assert p.poll() is None, p.communicate()[1].decode()[-2000:]
        assert _pending(root) == 30
        filler.unlink()  # room made
        _share(root, 20, 100)
        assert _wait_decided(root, 20) < 10
    finally:
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    text = err.decode()
    assert p.returncode == 0, text[-2000:]
    assert text.count("retrying until the log takes writes again") == 1, text[-2000:]
    assert "writes succeed again" in text
    with FileLog(root, notify=False) as log:
        st = state_at(log, from_start=True)
        raws = [e.seq for e in log.read() if e.type == "memory.shared"]
    seqs = sorted(ev.seq for f in st.facts.values() for ev in f.evidence)
    assert seqs == raws  # every raw decided, exactly once


def test_the_embedded_synthesizer_reports_a_full_disk_and_goes_on(tmp_path: Path) -> None:
    """The MCP server's synthesizer (BackgroundSynth), its log's writes failing as a full
    disk fails them (the log's own error wrapping ENOSPC) until room is made."""
    root = tmp_path / "s"
    assert run_cli("init", "--root", str(root)).code == 0
    bg = BackgroundSynth(root, poll=0.05, notify=False).start()
    full = [False]
    assert bg._worker is not None
    log = bg._worker.log
    real = log.append_many

    def append_many(*args: Any, **kw: Any) -> Any:
        if full[0]:
            where = root / "segments" / "x.jsonl"
            raise SwarmlogError(
                f"append failed, nothing written to {where}: [Errno 28] No space left on device"
            )
        return real(*args, **kw)

    log.append_many = append_many  # type: ignore[method-assign]
    try:
        _share(root, 10, 0)
        _wait_decided(root, 30)
        full[0] = True
        _share(root, 8, 20)
        t0 = time.monotonic()
        while bg.status().storage is None:
            assert time.monotonic() - t0 < 20, (bg.status(), _pending(root))
            time.sleep(0.05)
        time.sleep(1.0)
        st = bg.status()
        assert st.role != "stopped" and "No space left" in (st.storage or ""), st
        assert _pending(root) == 8
        full[0] = False  # room made
        _share(root, 10, 50)
        assert _wait_decided(root, 20) < 10
        st = bg.status()
        assert st.storage is None and st.role == "holding", st
    finally:
        bg.stop()


def test_storage_errors_are_told_from_others() -> None:
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    wrapped = SwarmlogError(f"append failed, nothing written to /x/s/1.jsonl: {full}")
    assert storage_error(full) and storage_error(wrapped)
    assert storage_error(SynthInterrupted(0, 1, 0, wrapped))
    assert storage_error(OSError(errno.EIO, "Input/output error"))
    assert not storage_error(SwarmlogError("seq 4: hash chain broken"))
    assert not storage_error(OSError(errno.EACCES, "Permission denied"))
