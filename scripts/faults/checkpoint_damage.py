"""Fault: damaged, foreign, stale and half-written checkpoints (robustness work, defect 2).

Builds a swarm (600 memories, two checkpoints), then for each damage runs the real CLI
(a new interpreter per command) and checks that ``replay`` gives the digest of a replay
from seq 1, that the damaged file is named in ONE warning line, and that nothing fails:

- a checkpoint copied from another swarm; one past the log's end (log restored from an
  older backup); a relabelled header (seq edited); a flipped payload byte; a truncated
  file; a checksum-valid payload this version cannot decode; a 0.9 MB ``.tmp`` leftover;
- a process saving 8 MB checkpoints back to back (retention 3) SIGKILLed at 30 random
  points: a loadable checkpoint at least as new as before always remains, at most K+1
  files, no ``.tmp`` after the next open.

Run: .venv/bin/python scripts/faults/checkpoint_damage.py   (about 2 minutes)
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from _common import FAILED, REPO, check, cli_at  # (puts the repository on sys.path)

from swarmlog import Event, FileLog
from synthesizer.replay import CHECKPOINT_FORMAT


def build(root: Path, n: int = 300, tag: str = "a") -> None:
    with FileLog(root, notify=False) as log:
        log.append_many(
            Event(agent=f"agent-{i % 5}", type="memory.shared", body={"content": f"{tag} {i}"})
            for i in range(n)
        )
    cli_at(root, "synth")


def digest(root: Path, *extra: str) -> str:
    r = cli_at(root, "replay", "--json", *extra)
    return str(orjson.loads(r.stdout)["digest"]) if r.returncode == 0 else f"exit {r.returncode}"


def newest(root: Path) -> Path:
    return sorted((root / "checkpoints").glob("ckpt-*.bin"))[-1]


def judge(name: str, root: Path, file: str, *extra: str) -> None:
    """replay (from checkpoints) == replay from seq 1; one warning line naming ``file``."""
    r = cli_at(root, "replay", "--json", *extra)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    got = str(orjson.loads(r.stdout)["digest"]) if r.returncode == 0 else "failed"
    want = digest(root, "--from-start", *extra)
    ok = r.returncode == 0 and got == want and len(lines) == 1 and file in lines[0]
    check(name, ok, lines[0] if lines else r.stderr.strip() or "no warning")


def fresh(base: Path, name: str) -> Path:
    root = base / name
    build(root, tag="first")
    cli_at(root, "checkpoint")
    build(root, tag="second")
    cli_at(root, "checkpoint")
    return root


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="swarmlog-fault-ckpt-"))
    t0 = time.monotonic()
    try:
        # another swarm's checkpoint, newer than this log's own, at a seq this log has
        root, other = base / "foreign", base / "other"
        build(root, tag="first")
        cli_at(root, "checkpoint")
        build(root, tag="second")
        build(other, n=400, tag="other")
        cli_at(other, "checkpoint")
        src = newest(other)
        shutil.copy(src, root / "checkpoints" / src.name)
        judge("foreign checkpoint copied in", root, src.name)

        # a log restored from an older backup keeps its newer checkpoint
        root = base / "restored"
        build(root, tag="first")
        cli_at(root, "checkpoint")
        shutil.copytree(root, base / "backup")
        build(root, tag="second")
        cli_at(root, "checkpoint")
        src = shutil.copy(newest(root), base / newest(root).name)
        shutil.rmtree(root)
        shutil.copytree(base / "backup", root)
        shutil.copy(src, root / "checkpoints" / Path(src).name)
        judge("checkpoint past the log's end (restored backup)", root, Path(src).name)

        # header relabelled to an earlier seq (checksum not recomputed)
        root = fresh(base, "edited")
        ck = newest(root)
        head, _, payload = ck.read_bytes().partition(b"\n")
        h = orjson.loads(head)
        early = h["seq"] - 100
        h["seq"] = early
        with FileLog(root, notify=False) as log:
            h["event"] = next(log.read(early, early)).id
        ck.write_bytes(orjson.dumps(h) + b"\n" + payload)
        judge("header seq edited", root, ck.name, "--at", str(early))

        root = fresh(base, "bitflip")
        ck = newest(root)
        raw = bytearray(ck.read_bytes())
        raw[len(raw) // 2] ^= 0x01
        ck.write_bytes(bytes(raw))
        judge("payload byte flipped", root, ck.name)

        root = fresh(base, "truncated")
        ck = newest(root)
        ck.write_bytes(ck.read_bytes()[: ck.stat().st_size // 2])
        judge("checkpoint truncated", root, ck.name)

        root = fresh(base, "undecodable")
        with FileLog(root, notify=False) as log:
            cfg = orjson.loads(newest(root).read_bytes().partition(b"\n")[0])["config"]
            info = log.checkpoints.save(log.last_seq, b'{"format": 99}', CHECKPOINT_FORMAT, cfg)
        judge("checksum-valid payload that does not decode", root, info.name)
        for cmd in ("stats", "synth"):
            r = cli_at(root, cmd, "--json")
            check(f"  ... and {cmd} still works", r.returncode == 0, r.stderr.strip()[:120])

        root = fresh(base, "tmp")
        tmp = root / "checkpoints" / ".ckpt-00000000000000000999.bin.99999.tmp"
        tmp.write_bytes(os.urandom(900_000))
        cli_at(root, "stats")
        check("0.9 MB .tmp of a dead writer removed on the next open", not tmp.exists())

        kills(base / "kills")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{len(FAILED)} failed; {time.monotonic() - t0:.0f}s")
    return 1 if FAILED else 0


SAVER = (
    "import os, sys\n"
    "from swarmlog import Event, open_log\n"
    "log = open_log(sys.argv[1], notify=False)\n"
    "data = os.urandom(8 << 20)\n"
    "while True:\n"
    "    ev = log.append(Event(agent='w', type='note', body={}))\n"
    "    log.checkpoints.save(ev.seq, data, 'blob/1', keep=3)\n"
)


def kills(root: Path, rounds: int = 30, keep: int = 3) -> None:
    """SIGKILL a process saving 8 MB checkpoints back to back (keep=3) at random points:
    a loadable checkpoint at least as new as before always remains."""
    with FileLog(root, notify=False) as log:
        ev = log.append(Event(agent="w", type="note", body={}))
        log.checkpoints.save(ev.seq, os.urandom(8 << 20), "blob/1", keep=keep)
    rng = random.Random(5)
    best, mid_write, bad = 0, 0, []
    for k in range(rounds):
        p = subprocess.Popen([sys.executable, "-c", SAVER, str(root)], cwd=REPO)
        time.sleep(rng.uniform(0.3, 2.0))
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
        ckdir = root / "checkpoints"
        mid_write += any(n.endswith(".tmp") for n in os.listdir(ckdir))
        with FileLog(root, notify=False) as log:  # the next open cleans a dead saver's tmp
            ck = log.checkpoints.latest(format="blob/1")
            files = len(log.checkpoints.list())
            leftover = [n for n in os.listdir(ckdir) if n.endswith(".tmp")]
        if ck is None or ck.seq < best or files > keep + 1 or leftover:
            bad.append(f"kill {k}: newest {ck and ck.seq}, {files} files, tmp {leftover}")
        best = ck.seq if ck is not None else best
    check(
        f"{rounds} SIGKILLs of a checkpoint saver ({mid_write} mid-write)",
        not bad,
        "; ".join(bad[:3]) or f"newest loadable checkpoint at seq {best}",
    )


if __name__ == "__main__":
    sys.exit(main())
