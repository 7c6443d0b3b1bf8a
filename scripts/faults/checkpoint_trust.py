"""Fault: checkpoints and side files that do not hold what was written (faults work items 2-4).

Each damage is done to real files, then the real CLI runs (a new interpreter per command):

- retention (delete mode, keep the history after the newest checkpoint): one payload
  byte of the newest checkpoint flipped; another swarm's checkpoint copied in as the
  newest; every checkpoint rotted. ``swarmlog compact`` must never delete history that
  no loadable checkpoint holds: afterwards replay, stats, search and synth work and the
  state is the one before; with nothing loadable it exits 1 in one line, deleting nothing;
- vector side files zeroed, permuted, or holding another swarm's rows (same size):
  ``verify`` exits 1 naming the file, ``search`` answers exactly as from the intact
  file (the file is deleted with one warning line and the facts embedded);
- ``MemoryStore.put_if_version`` counter: 4 processes x 150 increments, each retried
  until acknowledged: the counter equals the acknowledged count.

Run: .venv/bin/python scripts/faults/checkpoint_trust.py   (about 1 minute)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
from _common import FAILED, REPO, check, cli_at  # (puts the repository on sys.path)

from swarmlog import FileLog
from synthesizer import Swarm
from synthesizer.configlog import change_config
from synthesizer.replay import save_checkpoint, state_at

QUERIES = [f"{t} note {i * 7} tuning" for i, t in enumerate(["cache", "database", "network"] * 4)]


def swarm_log(root: Path, tag: str = "finding", n: int = 240) -> None:
    """Memories over small segments, a checkpoint every 60; retention: delete, keep 1."""
    log = FileLog(root, segment_bytes=4096)
    change_config(log, {"retention.keep_checkpoints": "1", "retention.mode": "delete"})
    sw = Swarm(log)
    for i in range(n):
        sw.agent(f"a{i % 4}").share(f"{tag} {i % 37} about the cache and port {8000 + i % 11}")
        if i % 60 == 59:
            sw.synthesize()
            save_checkpoint(log, state_at(log))
    sw.agent("a1").share("after the last checkpoint")
    sw.close()


def newest(root: Path) -> Path:
    return sorted((root / "checkpoints").glob("ckpt-*.bin"))[-1]


def flip(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[int(len(raw) * 0.6)] ^= 0x01
    path.write_bytes(bytes(raw))


def digest(root: Path) -> str:
    r = cli_at(root, "replay", "--json")
    return str(orjson.loads(r.stdout)["digest"]) if r.returncode == 0 else f"exit {r.returncode}"


def retention(base: Path) -> None:
    for damage in ("newest checkpoint's payload byte flipped", "another swarm's copied in"):
        root = base / damage.split()[0]
        swarm_log(root)
        before = digest(root)
        if damage.startswith("newest"):
            flip(newest(root))
        else:
            other = base / "other"
            swarm_log(other, tag="other")
            log = FileLog(other)
            seq = FileLog(root).last_seq - 1
            save_checkpoint(log, state_at(log, at_seq=seq))
            shutil.copy(newest(other), root / "checkpoints" / newest(other).name)
            shutil.rmtree(other)
        r = cli_at(root, "compact")
        after = digest(root)  # (before synth decides the memory after the checkpoint)
        fails = [c for c in ("stats", "synth") if cli_at(root, c).returncode]
        fails += ["search"] if cli_at(root, "search", "cache").returncode else []
        check(
            f"compact (delete) with the {damage}",
            r.returncode == 0 and not fails and after == before,
            f"{r.stdout.strip()}; replay digest {'unchanged' if after == before else after}"
            + (f"; failing: {fails}" if fails else ""),
        )
    root = base / "allrot"
    swarm_log(root)
    for ck in (root / "checkpoints").glob("ckpt-*.bin"):
        flip(ck)
    segs = sorted(p.name for p in (root / "segments").iterdir())
    r = cli_at(root, "compact")
    lines = r.stderr.strip().splitlines()
    kept = sorted(p.name for p in (root / "segments").iterdir()) == segs
    check(
        "compact with every checkpoint rotted: nothing deleted, exit 1, one line",
        r.returncode == 1 and len(lines) == 1 and kept,
        lines[-1][:160] if lines else "no message",
    )


def side_build(root: Path, shift: int = 0) -> None:
    topics = ["cache", "database", "network", "deploy", "queue", "auth", "search", "billing"]
    with Swarm.open(root) as sw:
        for k in range(120):
            i = k + shift
            sw.agent("a1").share(f"{topics[i % 8]} note {i} about {topics[(i * 3) % 8]} tuning")
        sw.synthesize()
        sw.checkpoint()


def answers(root: Path) -> tuple[list[list[str]], str]:
    out, err = [], ""
    for q in QUERIES:
        r = cli_at(root, "search", q, "--json", "-n", "5")
        out.append([h["id"] for h in orjson.loads(r.stdout)] if r.returncode == 0 else [])
        err += r.stderr
    return out, err


def vec_rows(vec: Path) -> tuple[bytearray, int, int]:
    data = bytearray(vec.read_bytes())
    h = orjson.loads(bytes(data[:4096]))
    return data, int(h["n"]), int(h["dim"])


def side_files(base: Path) -> None:
    for damage in ("zeroed", "permuted", "another swarm's rows"):
        root = base / f"vec-{damage.split()[0]}"
        side_build(root)
        want, _ = answers(root)
        (vec,) = (root / "checkpoints").glob("vec-*.f32")
        data, n, dim = vec_rows(vec)
        live = np.frombuffer(bytes(data[4096 : 4096 + n * dim * 4]), dtype=np.float32)
        rows = live.reshape(n, dim)
        if damage == "zeroed":
            new = np.zeros_like(rows)
        elif damage == "permuted":
            new = rows[::-1]
        else:
            side_build(base / "vec-other", shift=1000)
            (theirs,) = (base / "vec-other" / "checkpoints").glob("vec-*.f32")
            tdata, _, _ = vec_rows(theirs)
            new = np.frombuffer(bytes(tdata[4096 : 4096 + n * dim * 4]), dtype=np.float32)
            shutil.rmtree(base / "vec-other")
        data[4096 : 4096 + n * dim * 4] = np.ascontiguousarray(new, dtype=np.float32).tobytes()
        vec.write_bytes(bytes(data))
        v = cli_at(root, "verify")
        got, err = answers(root)
        notes = [ln for ln in err.splitlines() if vec.name in ln]
        check(
            f"vector side file {damage}",
            v.returncode == 1 and vec.name in v.stdout and got == want and len(notes) == 1,
            f"verify exit {v.returncode}; {sum(a == b for a, b in zip(got, want, strict=True))}"
            f" of {len(QUERIES)} queries as intact; {notes[0][:110] if notes else 'no note'}",
        )


COUNTER = (
    "import os, sys, time\n"
    "from synthesizer import MemoryEntry, MemoryStore\n"
    "who = {'tenant': 't'}\n"
    "acked = 0\n"
    "with MemoryStore(sys.argv[1]) as s:\n"
    "    while not os.path.exists(sys.argv[2]): time.sleep(0.005)\n"
    "    while acked < 150:\n"
    "        cur = s.get(who, 'counter')\n"
    "        v, ver = (0, 0) if cur is None else (int(cur.value), cur.version)\n"
    "        acked += s.put_if_version(who, MemoryEntry('counter', v + 1, version=ver + 1),"
    " ver).applied\n"
    "print(acked)\n"
)


def counter(base: Path) -> None:
    root, go = base / "store", base / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", COUNTER, str(root), str(go)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(1.0)
    go.touch()
    acked = sum(int(p.communicate(timeout=300)[0]) for p in procs)
    from synthesizer import MemoryStore

    with MemoryStore(str(root)) as s:
        cur = s.get({"tenant": "t"}, "counter")
    value = None if cur is None else cur.value
    check(
        "put_if_version: 4 processes x 150 acknowledged increments",
        value == acked == 600,
        f"{acked} acknowledged, counter {value}",
    )


def main() -> int:
    base = Path(tempfile.mkdtemp(prefix="swarmlog-fault-trust-"))
    t0 = time.monotonic()
    try:
        retention(base)
        side_files(base)
        counter(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{len(FAILED)} failed; {time.monotonic() - t0:.0f}s")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
