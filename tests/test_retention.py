"""Retention (retention work): compaction keeps the state, the ids and reads across the boundary."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog
from swarmlog.file import archive as arc
from swarmlog.file.compact import compact
from synthesizer.configlog import change_config
from synthesizer.replay import save_checkpoint, state_at
from synthesizer.retention import checkpoint_seqs, compact_swarm, retention_point
from synthesizer.swarm import Swarm
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(120)


def _disk(root: Path, sub: str) -> int:
    d = root / sub
    return sum(p.stat().st_size for p in d.iterdir()) if d.is_dir() else 0


def _swarm_log(root: Path, mode: str = "archive") -> tuple[FileLog, list[int]]:
    """A swarm log over many small segments with 4 checkpoints; policy: keep after the 2nd."""
    log = FileLog(root, segment_bytes=4096)
    change_config(log, {"retention.keep_checkpoints": "2", "retention.mode": mode})
    sw = Swarm(log)
    for i in range(240):
        sw.agent(f"a{i % 4}", session=f"s{i % 3}").share(
            f"finding {i % 37} about the cache and port {8000 + i % 11}", importance=0.5
        )
        if i % 60 == 59:
            sw.synthesize()
            save_checkpoint(log, state_at(log))
    sw.agent("a1").share("after the last checkpoint")
    return log, checkpoint_seqs(log)


@pytest.mark.parametrize("mode", ["archive", "delete"])
def test_keep_after_two_checkpoints(tmp_path: Path, mode: str) -> None:
    log, ckpts = _swarm_log(tmp_path, mode)
    assert len(ckpts) >= 3  # (the store keeps the newest synthesizer.checkpoint_keep = 3)
    point = ckpts[-2]
    live = state_at(log).digest()
    from_old = state_at(log, at_seq=point + 5).digest()
    before_at = state_at(log, at_seq=ckpts[0] - 3, from_start=True).digest()
    seg_before = _disk(tmp_path, "segments")
    dry = compact_swarm(log, dry_run=True)
    assert dry.segments and dry.freed > 0 and _disk(tmp_path, "segments") == seg_before
    res = compact_swarm(log)
    assert res.point == point == retention_point(log, log_config_policy(log))
    assert [s.first for s in res.segments] == [s.first for s in dry.segments]
    assert res.first_seq <= point + 1 and all(s.last <= point for s in res.segments)
    seg_after = _disk(tmp_path, "segments")
    assert seg_after == seg_before - res.freed
    assert _disk(tmp_path, "archive") < res.freed  # compressed (or only ids, when deleted)
    rep = log.verify()
    assert rep.ok, rep.problems
    # the state and replay from the oldest retained checkpoint are unchanged
    fresh = FileLog(tmp_path)
    assert state_at(fresh).digest() == live
    assert state_at(fresh, at_seq=point + 5).digest() == from_old
    if mode == "archive":
        assert state_at(fresh, at_seq=ckpts[0] - 3, from_start=True).digest() == before_at
        assert [e.seq for e in fresh.read(1, 3)] == [1, 2, 3]
        r = run_cli("--root", str(tmp_path), "replay", "--at", str(ckpts[0] - 3), "--from-start")
        assert r.code == 0 and before_at in r.out
    else:
        with pytest.raises(arc.RetentionError, match=f"oldest available: seq {res.first_seq}"):
            list(fresh.read(1, 3))
        r = run_cli("--root", str(tmp_path), "replay", "--at", "3", "--from-start")
        assert r.code == 1 and f"oldest available: seq {res.first_seq}" in r.err
        assert len(r.err.strip().splitlines()) == 1
    # compaction is idempotent: a re-run finds nothing more to do
    assert compact_swarm(log).segments == []


def log_config_policy(log: FileLog):  # type: ignore[no-untyped-def]
    from synthesizer.configlog import log_config

    return log_config(log).config.retention


def test_id_appended_again_after_archive_is_stored_once(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    first = [log.append(Event(agent="a", type="note", body={"n": i}, key="k")) for i in range(200)]
    stale = FileLog(tmp_path)  # a writer whose view is far behind the compaction
    stale.append(Event(agent="b", type="note", body={"x": 1}, id="stale-first"))
    log.checkpoints.save(150, b"opaque", "test/1")
    res = compact(log, 150, "archive")
    assert res.segments and res.first_seq > 2
    again = Event(agent="a", type="note", body={"n": 0}, key="k", id=first[0].id)
    for handle in (FileLog(tmp_path), stale, log):
        stored = handle.append(again)
        assert stored.seq == first[0].seq and stored.body == {"n": 0}
    before = log.last_seq
    assert log.append_many([again, Event(agent="a", type="note", body={"n": 999})])[0].seq == 1
    assert log.last_seq == before + 1
    # key versions survive too: the CAS on "k" still sees its last version
    assert FileLog(tmp_path).version("k") == first[-1].seq
    assert log.verify().ok
    ids = [e.id for e in log.read(1)]
    assert len(ids) == len(set(ids)) == log.last_seq


def test_id_after_delete_is_still_stored_once(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    first = [log.append(Event(agent="a", type="note", body={"n": i})) for i in range(200)]
    log.checkpoints.save(150, b"opaque", "test/1")
    compact(log, 150, "delete")
    last = log.last_seq
    fresh = FileLog(tmp_path)
    with pytest.raises(arc.RetentionError):  # stored once: the original is gone, not re-stored
        fresh.append(Event(agent="a", type="note", body={"n": 0}, id=first[0].id))
    assert fresh.last_seq == last
    rep = fresh.verify()
    assert rep.ok and any("deleted" in n for n in rep.notes)


def test_no_checkpoint_no_compaction_and_bad_input(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    for i in range(100):
        log.append(Event(agent="a", type="note", body={"n": i}))
    assert compact(log, 80).segments == []  # no checkpoint covers the history: kept
    with pytest.raises(ValueError):
        compact(log, 80, "shred")
    r = run_cli("--root", str(tmp_path), "compact")
    assert r.code == 0 and "no retention policy" in r.out
    r = run_cli("--root", str(tmp_path), "config", "set", "retention.mode=shred")
    assert r.code == 1 and "retention.mode" in r.err


def test_verify_catches_an_altered_archive(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    for i in range(100):
        log.append(Event(agent="a", type="note", body={"n": i}))
    log.checkpoints.save(90, b"opaque", "test/1")
    compact(log, 90)
    victim = sorted((tmp_path / "archive").glob("*.jsonl.gz"))[0]
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    rep = log.verify()
    assert not rep.ok and any("checksum" in p for p in rep.problems)


def test_cli_dry_run_then_compact_and_tail_across(tmp_path: Path) -> None:
    log, _ = _swarm_log(tmp_path)
    r = run_cli("--root", str(tmp_path), "compact", "--dry-run")
    assert r.code == 0 and r.out.startswith("would archive"), r.out
    r = run_cli("--root", str(tmp_path), "compact", "--json")
    doc = orjson.loads(r.out)
    assert r.code == 0 and doc["freed_bytes"] > 0 and doc["segments"]
    assert not os.path.exists(tmp_path / "segments" / "00000000000000000001.jsonl")
    r = run_cli("--root", str(tmp_path), "tail", "--from", "1", "--json")
    seqs = [orjson.loads(line)["seq"] for line in r.out.splitlines()]
    assert seqs == list(range(1, log.last_seq + 1))
    r = run_cli("--root", str(tmp_path), "verify")
    assert r.code == 0 and "retention:" in r.out


def test_worker_compacts_after_its_checkpoints_when_a_policy_is_set(tmp_path: Path) -> None:
    from synthesizer.worker.synth import Synthesizer

    log = FileLog(tmp_path, segment_bytes=4096)
    change_config(
        log,
        {"retention.keep_checkpoints": "1", "synthesizer.checkpoint_every": "50"},
    )
    sw = Swarm(log)
    for i in range(300):
        sw.agent("a").share(f"finding {i} about the cache")
    w = Synthesizer(FileLog(tmp_path))
    w.catch_up()
    assert w.maybe_checkpoint(force=True)
    assert (tmp_path / "archive").is_dir() and list((tmp_path / "archive").glob("*.jsonl.gz"))
    assert FileLog(tmp_path).verify().ok
    assert state_at(FileLog(tmp_path)).digest() == w.state.digest()


def test_at_time_before_a_deleted_window_names_the_oldest(tmp_path: Path) -> None:
    log = FileLog(tmp_path, segment_bytes=4096)
    for i in range(200):
        log.append(Event(agent="a", type="memory.shared", ts=1000.0 + i, body={"content": "x"}))
    log.checkpoints.save(150, b"opaque", "test/1")
    res = compact(log, 150, "delete")
    oldest = res.first_seq
    r = run_cli("--root", str(tmp_path), "replay", "--at-time", "1001", "--from-start")
    assert r.code == 1 and f"oldest available: seq {oldest}" in r.err
    assert len(r.err.strip().splitlines()) == 1
    r = run_cli("--root", str(tmp_path), "tail", "--from", "1")
    assert r.code == 1 and f"oldest available: seq {oldest}" in r.err
    from synthesizer.replay import seq_at_time

    inside = next(iter(log.read(181, 181)))  # (the log stamps ts: read it back)
    assert seq_at_time(log, inside.ts) >= 181  # inside the window: found as before
