"""Fault: the disk fills up under checkpoint, synth and init (robustness work, defects 2 and 8).

Mounts small tmpfs file systems (needs root: ``mount -t tmpfs``), fills them, and runs
the real CLI (a new interpreter per command):

- ``checkpoint`` on a full disk: one line "checkpoint not written: disk full at …; the
  previous checkpoint at seq N is kept", no ``.tmp`` left, the previous one still loads;
- ``synth`` with room for about a third of its batches: one line "committed K of N
  batches, up to seq S; the rest will be decided on the next run"; after space is freed
  the next run decides the rest, every raw memory exactly once;
- ``init`` on a full disk: one line, no ``swarm.tmp*``; init works once there is room.

Run (as root): .venv/bin/python scripts/faults/disk_full.py   (under a minute)
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import FAILED, check, cli_at  # (puts the repository on sys.path)

from swarmlog import Event, FileLog
from synthesizer.replay import state_at


def mount(base: Path, name: str, size: str) -> Path:
    mnt = base / name
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], check=True)
    return mnt


def fill(mnt: Path, leave: int = 0) -> Path:
    """Fill the file system with one file, then give back ``leave`` bytes."""
    path = mnt / "filler"
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
    size = path.stat().st_size
    os.truncate(path, max(0, size - leave))
    return path


def raws(root: Path, n: int) -> None:
    with FileLog(root, notify=False) as log:
        log.append_many(
            Event(agent=f"a{i % 4}", type="memory.shared", body={"content": f"finding {i}"})
            for i in range(n)
        )


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    return lines[0] if r.returncode == 1 and len(lines) == 1 else f"exit {r.returncode}: {r.stderr}"


def main() -> int:
    if os.geteuid() != 0:
        print("skipped: mounting a tmpfs needs root")
        return 0
    base = Path(tempfile.mkdtemp(prefix="swarmlog-fault-disk-"))
    mounts: list[Path] = []
    t0 = time.monotonic()
    try:
        # checkpoint on a full disk
        mnt = mount(base, "ckpt", "2m")
        mounts.append(mnt)
        root = mnt / "s"
        raws(root, 300)
        cli_at(root, "synth")
        kept = cli_at(root, "checkpoint", "--json").stdout
        raws(root, 20)
        fill(mnt)
        line = one_line(cli_at(root, "checkpoint"))
        seq = re.search(r'"seq":\s*(\d+)', kept)
        want = f"the previous checkpoint at seq {seq and seq.group(1)} is kept"
        check("checkpoint, disk full", "checkpoint not written: disk full at" in line, line)
        check("  ... names the checkpoint kept", want in line)
        tmp = [n for n in os.listdir(root / "checkpoints") if n.endswith(".tmp")]
        check("  ... leaves no .tmp", not tmp, str(tmp))
        with FileLog(root, notify=False) as log:
            check("  ... the previous one loads", log.checkpoints.latest() is not None)

        # synth with room for part of its batches
        probe = base / "probe"
        raws(probe, 1200)
        size0 = sum(p.stat().st_size for p in (probe / "segments").iterdir())
        cli_at(probe, "synth", "--batch", "50")
        need = sum(p.stat().st_size for p in (probe / "segments").iterdir()) - size0
        mnt = mount(base, "synth", "6m")
        mounts.append(mnt)
        root = mnt / "s"
        raws(root, 1200)
        filler = fill(mnt, leave=need // 3)
        line = one_line(cli_at(root, "synth", "--batch", "50"))
        m = re.search(r"committed (\d+) of (\d+) batches, up to seq (\d+); the rest", line)
        check("synth, disk full after some batches", bool(m and int(m.group(1)) > 0), line)
        filler.unlink()
        r = cli_at(root, "synth", "--batch", "50")
        with FileLog(root, notify=False) as log:
            st = state_at(log, from_start=True)
            # evicted facts too: 1,200 distinct raws overflow the default capacity of 1,000
            kept = [*st.facts.values(), *st.evicted.values()]
            seqs = sorted(e.seq for f in kept for e in f.evidence)
        check(
            "  ... the next run decides the rest, each raw once",
            r.returncode == 0 and not st.pending and seqs == list(range(1, 1201)),
            f"{len(seqs)} evidence entries for 1200 raws, {len(st.pending)} pending",
        )

        # init on a full disk
        mnt = mount(base, "init", "256k")
        mounts.append(mnt)
        fill(mnt)
        line = one_line(cli_at(mnt / "new", "init"))
        left = [n for n in os.listdir(mnt / "new") if n.startswith("swarm.")]
        check("init, disk full", "disk full" in line, line)
        check("  ... leaves no swarm.tmp*", not left, str(left))
        (mnt / "filler").unlink()
        check("  ... init works once there is room", cli_at(mnt / "new", "init").returncode == 0)
    finally:
        for mnt in mounts:
            subprocess.run(["umount", "-l", str(mnt)], check=False)
        shutil.rmtree(base, ignore_errors=True)
    print(f"{len(FAILED)} failed; {time.monotonic() - t0:.0f}s")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
