"""Fault: symlinks planted inside a log root, pointing at a file the attacker wants hit.

Plants a segment with a torn tail as a symlink (the torn-tail repair used to truncate
its target), a symlink where the next segment will be created, a symlinked
``repairs.jsonl``, and ``segments/`` / ``checkpoints/`` as symlinks to outside
directories; runs appends, reads and verify; checks every outside file is unchanged and
every error names the planted path. Run: python scripts/faults/symlinks.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from _common import Report, cli, one_line_error, workdir

TORN = b'{"seq":9,"id":"torn'


def fresh(base: Path, name: str) -> Path:
    root = base / name
    cli("--root", str(root), "init")
    for i in range(3):
        cli("--root", str(root), "append", "-a", "a", f"memory {i}")
    return root


def attempt(rep: Report, root: Path, planted: Path, outside: Path, what: str) -> None:
    before = (
        outside.read_bytes() if outside.is_file() else sorted(p.name for p in outside.iterdir())
    )
    for cmd in (["append", "-a", "x", "hello"], ["tail"], ["verify"]):
        r = cli("--root", str(root), *cmd)
        if cmd[0] == "verify" and r.code == 1 and "symlink" in r.out:
            rep.check(True, f"{what}: verify reports it ({r.out.strip().splitlines()[1][:90]}…)")
            continue
        ok = one_line_error(r) and "symlink" in r.err and str(planted) in r.err
        if cmd[0] == "tail" and r.code == 0:
            ok = True  # reading past a file that is never opened is fine
        rep.check(ok, f"{what}: {' '.join(cmd)} -> {(r.err or r.out).strip()[:110]}", r.err)
    after = outside.read_bytes() if outside.is_file() else sorted(p.name for p in outside.iterdir())
    rep.check(after == before, f"{what}: the outside target is unchanged")


def main() -> int:
    rep = Report("symlinks")
    base = workdir("sym")
    try:
        # a segment with a torn tail, planted as a symlink
        root = fresh(base, "seg")
        seg = next((root / "segments").iterdir())
        victim = base / "victim-seg"
        victim.write_bytes(seg.read_bytes() + TORN)
        seg.unlink()
        seg.symlink_to(victim)
        attempt(rep, root, seg, victim, "segment symlink")
        # repairs.jsonl as a symlink, with a torn tail to repair
        root = fresh(base, "rep")
        seg = next((root / "segments").iterdir())
        seg.write_bytes(seg.read_bytes() + TORN)
        victim = base / "victim-repairs"
        victim.write_bytes(b"precious\n")
        (root / "repairs.jsonl").symlink_to(victim)
        attempt(rep, root, root / "repairs.jsonl", victim, "repairs.jsonl symlink")
        # the next segment's name planted (tiny segments: the second append rotates)
        root = base / "next"
        from swarmlog import Event, FileLog  # the library, to pick a 4 KiB segment size

        with FileLog(root, segment_bytes=4096, notify=False) as log:
            log.append(Event(agent="a", type="test.event", body={"pad": "x" * 5000}))
        victim = base / "victim-next"
        victim.write_bytes(b"precious\n")
        planted = root / "segments" / f"{2:020d}.jsonl"
        planted.symlink_to(victim)
        r = cli("--root", str(root), "append", "-a", "x", "hello")
        rep.check(
            one_line_error(r) and str(planted) in r.err,
            f"next-segment symlink: {r.err.strip()[:110]}",
            r.err,
        )
        rep.check(victim.read_bytes() == b"precious\n", "next-segment symlink: target unchanged")
        # segments/ and checkpoints/ as symlinks
        for sub in ("segments", "checkpoints"):
            root = fresh(base, sub)
            cli("--root", str(root), "synth")
            cli("--root", str(root), "checkpoint")
            real, outside = root / sub, base / f"outside-{sub}"
            real.rename(outside)
            real.symlink_to(outside, target_is_directory=True)
            attempt(rep, root, real, outside, f"{sub}/ symlink")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rep.done()


if __name__ == "__main__":
    sys.exit(main())
