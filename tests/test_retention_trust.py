"""The faults work item 2: retention chooses its boundary only from a checkpoint that loads.

On main, ``retention.checkpoint_seqs`` / ``compact.eligible`` read checkpoint headers
only: with one payload byte of the newest checkpoint flipped (or another swarm's
checkpoint copied in), ``swarmlog compact`` in delete mode deleted the history up to it,
and replay, stats and synth failed for good. Now the boundary moves back to the newest
checkpoint that loads (and, in delete mode, stays behind it), and when none loads
nothing is deleted and the command says why in one line (exit 1).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from swarmlog import FileLog, SwarmlogError
from swarmlog.file.compact import retained_first
from synthesizer.configlog import change_config
from synthesizer.replay import save_checkpoint, state_at
from synthesizer.retention import checkpoint_seqs, compact_swarm
from synthesizer.swarm import Swarm
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(180)


def _build(root: Path, n: int = 240, tag: str = "finding", mode: str = "delete") -> FileLog:
    """A swarm log over small segments, a checkpoint every 60 memories; policy: keep the
    history after the newest checkpoint only (keep_checkpoints=1)."""
    log = FileLog(root, segment_bytes=4096)
    change_config(log, {"retention.keep_checkpoints": "1", "retention.mode": mode})
    sw = Swarm(log)
    for i in range(n):
        sw.agent(f"a{i % 4}", session=f"s{i % 3}").share(
            f"{tag} {i % 37} about the cache and port {8000 + i % 11}", importance=0.5
        )
        if i % 60 == 59:
            sw.synthesize()
            save_checkpoint(log, state_at(log))
    sw.agent("a1").share("after the last checkpoint")
    return log


def _newest(root: Path) -> Path:
    return sorted((root / "checkpoints").glob("ckpt-*.bin"))[-1]


def _flip(path: Path, at: float = 0.6) -> None:
    raw = bytearray(path.read_bytes())
    raw[int(len(raw) * at)] ^= 0x01
    path.write_bytes(bytes(raw))


def _still_works(root: Path, live: str) -> None:
    """replay, stats, search and synth all work, and the state is the one before."""
    fresh = FileLog(root)
    assert state_at(fresh).digest() == live
    for cmd in (["replay", "--json"], ["stats", "--json"], ["search", "cache"], ["synth"]):
        r = run_cli("--root", str(root), *cmd)
        assert r.code == 0, (cmd, r.err)


@pytest.mark.parametrize("damage", ["payload byte flipped", "another swarm's copied in"])
def test_compact_passes_over_a_checkpoint_that_does_not_load(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "s"
    log = _build(root)
    ckpts = checkpoint_seqs(log)
    assert len(ckpts) == 3  # synthesizer.checkpoint_keep
    live = state_at(log).digest()
    if damage == "payload byte flipped":
        bad = _newest(root)
        _flip(bad)
        newest_ok, behind = ckpts[-2], ckpts[-3]
    else:
        other = _build(tmp_path / "other", tag="other")
        seq = (ckpts[-1] + log.last_seq) // 2  # newer than ours, at a seq this log has
        save_checkpoint(other, state_at(other, at_seq=seq))
        src = _newest(tmp_path / "other")
        assert src.name == f"ckpt-{seq:020d}.bin"
        bad = root / "checkpoints" / src.name
        shutil.copy(src, bad)
        newest_ok, behind = ckpts[-1], ckpts[-2]
    r = run_cli("--root", str(root), "compact")
    assert r.code == 0, r.err
    # delete mode: the boundary is behind the newest checkpoint that loads (main: it was
    # the damaged one's seq, and everything up to it was deleted)
    start = retained_first(FileLog(root))
    assert 1 < start <= behind + 1 <= newest_ok, (start, ckpts)
    _still_works(root, live)


def test_archive_mode_moves_back_to_the_newest_that_loads(tmp_path: Path) -> None:
    root = tmp_path / "s"
    log = _build(root, mode="archive")
    ckpts = checkpoint_seqs(log)
    live = state_at(log).digest()
    _flip(_newest(root))
    res = compact_swarm(log)
    assert res.point == ckpts[-2]  # not the damaged newest one
    _still_works(root, live)


def test_no_checkpoint_loads_nothing_is_deleted_and_the_command_says_why(tmp_path: Path) -> None:
    root = tmp_path / "s"
    log = _build(root)
    live = state_at(log).digest()
    for ck in (root / "checkpoints").glob("ckpt-*.bin"):
        _flip(ck)
    segs = sorted(p.name for p in (root / "segments").iterdir())
    r = run_cli("--root", str(root), "compact")
    assert r.code == 1
    lines = [ln for ln in r.err.splitlines() if "nothing compacted" in ln]
    assert len(lines) == 1 and "no checkpoint at or before seq" in lines[0], r.err
    assert "checksum" in lines[0]
    assert sorted(p.name for p in (root / "segments").iterdir()) == segs
    with pytest.raises(SwarmlogError, match="nothing compacted"):
        compact_swarm(FileLog(root))
    assert state_at(FileLog(root), from_start=True).digest() == live
    # verify names the rotted checkpoints (it said ok on main)
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1 and "checkpoint ckpt-" in r.out and "checksum mismatch" in r.out
