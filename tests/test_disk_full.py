"""Disk full (robustness work, defects 2 and 8), on a small tmpfs the test mounts.

- ``checkpoint`` says "checkpoint not written: disk full at …; the previous checkpoint
  at seq N is kept", leaves no temporary file, and the previous one still loads;
- ``synth`` that committed some batches before the disk filled says how many, up to
  which seq, and that the rest will be decided on the next run (which decides them,
  each raw memory exactly once);
- ``init`` on a full disk fails in one line and leaves no ``swarm.tmp*``.

Skipped with the reason where the test cannot mount a tmpfs (not root, no CAP_SYS_ADMIN).
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from synthesizer.replay import state_at
from tests.cli_util import run_cli


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``tmpfs("4m")`` mounts a fresh tmpfs of that size and returns its path."""
    mounted: list[Path] = []

    def mount(size: str) -> Path:
        mnt = tmp_path / f"mnt{len(mounted)}"
        mnt.mkdir()
        try:
            r = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.SubprocessError) as e:
            pytest.skip(f"cannot mount a tmpfs here: {e}")
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip() or r.returncode}")
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, timeout=30)


def fill(mnt: Path, leave: int = 0) -> Path:
    """Fill the file system with one file, then give back ``leave`` bytes."""
    path = mnt / "filler"
    chunk = b"\0" * 65536
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        while True:
            try:
                if os.write(fd, chunk) < len(chunk):
                    continue
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
        size = os.fstat(fd).st_size
        os.ftruncate(fd, max(0, size - leave))
    finally:
        os.close(fd)
    return path


def _tmp_files(d: Path) -> list[str]:
    return [n for n in os.listdir(d) if ".tmp" in n] if d.is_dir() else []


def _raws(n: int) -> list[Event]:
    return [
        Event(
            agent=f"agent-{i % 4}",
            type="memory.shared",
            body={"content": f"finding {i}: service {i % 30} fails when load reaches {i}"},
        )
        for i in range(n)
    ]


def test_checkpoint_on_a_full_disk_says_what_is_kept(tmpfs: Callable[[str], Path]) -> None:
    mnt = tmpfs("2m")
    root = str(mnt / "s")
    assert run_cli("init", "--root", root).code == 0
    with FileLog(root, notify=False) as log:
        log.append_many(_raws(300))
    assert run_cli("synth", "--root", root).code == 0
    first = run_cli("checkpoint", "--root", root, "--json")
    assert first.code == 0, first.err
    kept = int(re.search(r'"seq":\s*(\d+)', first.out).group(1))  # type: ignore[union-attr]
    with FileLog(root, notify=False) as log:
        log.append_many(_raws(20))
    fill(mnt)
    r = run_cli("checkpoint", "--root", root)
    assert r.code == 1
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert "checkpoint not written: disk full at " in lines[0]
    assert f"the previous checkpoint at seq {kept} is kept" in lines[0]
    assert _tmp_files(mnt / "s" / "checkpoints") == []
    with FileLog(root, notify=False) as log:
        ck = log.checkpoints.latest()
        assert ck is not None and ck.seq == kept


@pytest.mark.slow
def test_synth_on_a_full_disk_reports_partial_progress(
    tmpfs: Callable[[str], Path], tmp_path: Path
) -> None:
    n = 600
    # how many bytes the whole synthesis writes, measured on an ordinary disk
    probe = tmp_path / "probe"
    with FileLog(probe, notify=False) as log:
        log.append_many(_raws(n))
        before = sum(p.stat().st_size for p in (probe / "segments").iterdir())
    assert run_cli("synth", "--root", str(probe), "--batch", "40").code == 0
    after = sum(p.stat().st_size for p in (probe / "segments").iterdir())
    shutil.rmtree(probe)

    mnt = tmpfs("4m")
    root = str(mnt / "s")
    with FileLog(root, notify=False) as log:
        log.append_many(_raws(n))
    filler = fill(mnt, leave=(after - before) * 2 // 5)  # room for about 40% of it
    r = run_cli("synth", "--root", root, "--batch", "40")
    assert r.code == 1
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    m = re.search(
        r"committed (\d+) of (\d+) batches, up to seq (\d+); the rest will be decided on the "
        r"next run",
        lines[0],
    )
    assert m, lines[0]
    k, total, upto = (int(g) for g in m.groups())
    assert 1 <= k < total
    with FileLog(root, notify=False) as log:
        st = state_at(log, from_start=True)
        assert st.progress == upto
        assert len(st.pending) == n - upto  # the raws are seqs 1..n
    filler.unlink()
    assert run_cli("synth", "--root", root, "--batch", "40").code == 0
    with FileLog(root, notify=False) as log:
        st = state_at(log, from_start=True)
        assert not st.pending
        seqs = [ev.seq for f in st.facts.values() for ev in f.evidence]
        assert sorted(seqs) == list(range(1, n + 1))  # every raw decided, exactly once


def test_init_on_a_full_disk_leaves_no_tmp(tmpfs: Callable[[str], Path]) -> None:
    mnt = tmpfs("256k")
    fill(mnt)
    r = run_cli("init", "--root", str(mnt / "new"))
    assert r.code == 1
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "disk full" in lines[0], r.err
    assert [n for n in os.listdir(mnt / "new") if n.startswith("swarm.")] == []
    (mnt / "filler").unlink()
    assert run_cli("init", "--root", str(mnt / "new")).code == 0
