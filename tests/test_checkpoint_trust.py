"""Checkpoints are used only for their own log (robustness work, defect 2).

A checkpoint copied from another swarm, one past the log's end (a log restored from an
older backup), one whose header was edited, one taken on a log that has since diverged
and one whose payload does not decode are each skipped with a one-line warning naming
the file, and the next older usable one (or the start) gives the same state as a replay
from seq 1. Leftover ``.tmp`` files of dead writers are removed on the next open.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog
from swarmlog.checkpoint import TMP_GRACE
from synthesizer import Swarm
from synthesizer.replay import CHECKPOINT_FORMAT, load_checkpoint, state_at

REPO = Path(__file__).resolve().parent.parent


def _fill(sw: Swarm, agent: str, n: int, tag: str) -> None:
    a = sw.agent(agent)
    for i in range(n):
        a.share(f"{tag} memory number {i} about topic {i % 7}", importance=0.5)
    sw.synthesize()


def _ckpt_files(root: Path) -> list[Path]:
    return sorted((root / "checkpoints").glob("ckpt-*.bin"))


def _digest_from_start(log: FileLog, at: int | None = None) -> str:
    return state_at(log, at_seq=at, from_start=True).digest()


def _skips(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "skipping checkpoint" in r.getMessage()]


def test_foreign_checkpoint_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    a_root, b_root = tmp_path / "a", tmp_path / "b"
    with Swarm.open(a_root) as a, Swarm.open(b_root) as b:
        _fill(a, "x", 10, "alpha")
        own = a.checkpoint()
        _fill(a, "x", 10, "beta")
        _fill(b, "y", 15, "gamma")
        b.checkpoint()
    # copy B's newer checkpoint into A (same format and configuration: only identity differs)
    (foreign,) = _ckpt_files(b_root)
    shutil.copy(foreign, a_root / "checkpoints" / foreign.name)
    with FileLog(a_root, notify=False) as log:
        assert log.last_seq >= int(foreign.name[5:25])  # not past A's end: only identity
        st = load_checkpoint(log)
        assert st is not None and st.last_seq == own  # A's own older one
        assert state_at(log).digest() == _digest_from_start(log)
    msgs = _skips(caplog)
    assert msgs and all(foreign.name in m and "another swarm" in m for m in msgs)
    with FileLog(a_root, notify=False) as la, FileLog(b_root, notify=False) as lb:
        assert la.swarm_id != lb.swarm_id


def test_checkpoint_past_the_logs_end_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A log restored from an older backup keeps a newer checkpoint: it must not be used."""
    root, backup = tmp_path / "live", tmp_path / "backup"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 10, "alpha")
        sw.checkpoint()
        shutil.copytree(root, backup)
        _fill(sw, "x", 20, "beta")
        sw.checkpoint()
    newest = _ckpt_files(root)[-1]
    shutil.copy(newest, backup / "checkpoints" / newest.name)
    with FileLog(backup, notify=False) as log:
        assert int(newest.name[5:25]) > log.last_seq
        assert state_at(log).digest() == _digest_from_start(log)
        st = load_checkpoint(log)
        assert st is not None and st.last_seq < int(newest.name[5:25])
    msgs = _skips(caplog)
    assert msgs and all(newest.name in m and "past the log's last seq" in m for m in msgs)


def test_checkpoint_of_a_diverged_log_is_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Restored from a backup and written on: the seq exists again, with another event."""
    root, backup = tmp_path / "live", tmp_path / "backup"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 5, "alpha")
        shutil.copytree(root, backup)
        _fill(sw, "x", 10, "beta")
        seq = sw.checkpoint()
    ck = _ckpt_files(root)[-1]
    with Swarm.open(backup) as sw:
        for i in range(30):  # other events at the same seqs
            sw.agent("z").share(f"delta memory {i}")
        assert sw.log.last_seq > seq
    (backup / "checkpoints").mkdir(exist_ok=True)
    shutil.copy(ck, backup / "checkpoints" / ck.name)
    with FileLog(backup, notify=False) as log:
        assert state_at(log).digest() == _digest_from_start(log)
    msgs = _skips(caplog)
    assert msgs and ck.name in msgs[0] and f"record at seq {seq}" in msgs[0]


def test_edited_header_is_detected(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The header's seq is under the checksum: a checkpoint relabelled to an older seq
    would otherwise hand the state at seq N to a replay asking for an earlier one."""
    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 10, "alpha")
        early = sw.log.last_seq
        _fill(sw, "x", 10, "beta")
        sw.checkpoint()
    (ck,) = _ckpt_files(root)
    head, _, payload = ck.read_bytes().partition(b"\n")
    h = orjson.loads(head)
    with FileLog(root, notify=False) as log:
        h["seq"] = early
        h["event"] = next(log.read(early, early)).id  # a careful forger fixes that too
    ck.write_bytes(orjson.dumps(h) + b"\n" + payload)
    with FileLog(root, notify=False) as log:
        assert state_at(log, at_seq=early).digest() == _digest_from_start(log, early)
    msgs = _skips(caplog)
    assert msgs and ck.name in msgs[0] and "checksum mismatch" in msgs[0]


def test_undecodable_payload_falls_back(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A checksum-valid checkpoint whose payload this version cannot decode (another
    format version's state) costs a fallback, not a failed replay, stats or synth."""
    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 10, "alpha")
        good = sw.checkpoint()
        _fill(sw, "x", 10, "beta")
        cfg = sw.config
        sw.log.checkpoints.save(
            sw.log.last_seq, b'{"format": 999, "facts": []}', CHECKPOINT_FORMAT, cfg.digest()
        )
    with FileLog(root, notify=False) as log:
        st = load_checkpoint(log)
        assert st is not None and st.last_seq == good
        assert state_at(log).digest() == _digest_from_start(log)
    assert any("payload does not decode" in m for m in _skips(caplog))
    with Swarm.open(root) as sw:  # opening a Swarm and a synthesizer pass work too
        sw.agent("y").share("one more memory")
        sw.synthesize()
        assert sw.state().digest() == _digest_from_start(sw.log)  # type: ignore[arg-type]


def test_cli_warning_is_one_line(tmp_path: Path) -> None:
    """The operator sees one line naming the file and the reason (no Python warning
    with a source line), and the command succeeds from an older checkpoint."""
    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 5, "alpha")
        sw.checkpoint()
        _fill(sw, "x", 5, "beta")
        sw.checkpoint()
    newest = _ckpt_files(root)[-1]
    raw = bytearray(newest.read_bytes())
    raw[-3] ^= 0x20
    newest.write_bytes(bytes(raw))
    env = {**os.environ, "SWARMLOG_ROOT": str(root)}
    for cmd in (["replay", "--json"], ["stats", "--json"]):
        p = subprocess.run(
            [sys.executable, "-m", "dashboards", *cmd],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )
        assert p.returncode == 0, p.stderr
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1, p.stderr
        assert "skipping checkpoint" in lines[0] and newest.name in lines[0]
        assert "checksum mismatch" in lines[0] and "Warning" not in lines[0]


def test_dead_writers_tmp_files_are_removed_on_open(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 3, "alpha")
        sw.checkpoint()
    ckdir = root / "checkpoints"
    dead = ckdir / ".ckpt-00000000000000000099.bin.4242.tmp"
    dead.write_bytes(b"x" * 100_000)
    live = ckdir / ".ckpt-00000000000000000098.bin.4343.tmp"
    live.write_bytes(b"y" * 100)
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a writer still at work holds its tmp file
        (root / "swarm.tmp999").write_bytes(b"{")  # an init that died mid-write
        FileLog(root, notify=False).close()
        assert not dead.exists()
        assert live.exists()
        assert not (root / "swarm.tmp999").exists()
    finally:
        os.close(fd)
    FileLog(root, notify=False).close()
    assert not live.exists()
    assert [p.name for p in ckdir.iterdir() if p.name.endswith(".tmp")] == []


def test_a_live_writers_fresh_tmp_file_is_left_until_it_is_old(tmp_path: Path) -> None:
    """A writer creates its temporary file and locks it an instant later: unheld in
    between. Every process opening the log cleans the checkpoints' temporaries, and one
    took a ``forget``'s checkpoint from under it that way ("checkpoint not written: No
    such file or directory"). A live process's unheld temporary is left while young
    (``TMP_GRACE``), removed once old, and at once when its process is gone."""
    root = tmp_path / "s"
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="a", type="note", body={}))
        log.checkpoints.save(1, b"payload", "f/1")
    ckdir = root / "checkpoints"
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        fresh = ckdir / f".ckpt-00000000000000000007.bin.{live.pid}.tmp"
        side = ckdir / f".vec-7-.qidx.{live.pid}-1401.tmp"  # (sidefile.write's form)
        old = ckdir / f".ckpt-00000000000000000006.bin.{live.pid}.tmp"
        for p in (fresh, side, old):
            p.write_bytes(b"x")
        past = time.time() - 2 * TMP_GRACE
        os.utime(old, (past, past))
        FileLog(root, notify=False).close()  # (an open cleans the checkpoints' temporaries)
        assert fresh.exists() and side.exists()
        assert not old.exists()
    finally:
        live.kill()
        live.wait()
    FileLog(root, notify=False).close()  # its writer is gone: they go now
    assert not fresh.exists() and not side.exists()


def test_save_stores_identity_seq_and_event(tmp_path: Path) -> None:
    with FileLog(tmp_path / "s", notify=False) as log:
        ev = log.append(Event(agent="a", type="note", body={}))
        info = log.checkpoints.save(1, b"payload", "f/1")
        assert (info.swarm, info.seq, info.event) == (log.swarm_id, 1, ev.id)
        assert len(log.swarm_id) == 32
        (got,) = log.checkpoints.list()
        assert got == info
        with pytest.raises(Exception, match="not in the log"):
            log.checkpoints.save(5, b"payload", "f/1")


def test_cli_pins_and_lists_checkpoints(tmp_path: Path) -> None:
    """``checkpoint --keep`` pins (retention never deletes it); ``--list`` says which
    checkpoints this log cannot use, and why."""
    from tests.cli_util import run_cli

    root = tmp_path / "s"
    other = tmp_path / "o"
    with Swarm.open(root) as sw, Swarm.open(other) as so:
        _fill(sw, "x", 3, "alpha")
        _fill(so, "y", 2, "omega")
        so.checkpoint()
    r = run_cli("checkpoint", "--root", str(root), "--keep", "--json")
    assert r.code == 0 and orjson.loads(r.out)["pinned"] is True
    pinned = orjson.loads(r.out)["seq"]
    for i in range(5):
        with Swarm.open(root) as sw:
            sw.agent("x").share(f"later memory {i}")
        assert run_cli("checkpoint", "--root", str(root)).code == 0
    (foreign,) = _ckpt_files(other)
    shutil.copy(foreign, root / "checkpoints" / foreign.name)
    rows = orjson.loads(run_cli("checkpoint", "--root", str(root), "--list", "--json").out)
    mine = [r for r in rows if r["usable"]]
    assert [r["seq"] for r in mine if r["pinned"]] == [pinned]
    assert len([r for r in mine if not r["pinned"]]) == 3  # the default checkpoint_keep
    (bad,) = [r for r in rows if not r["usable"]]
    assert bad["name"] == foreign.name and "another swarm" in bad["problem"]
    text = run_cli("checkpoint", "--root", str(root), "--list").out
    assert "pinned" in text and "UNUSABLE" in text


def test_logs_and_checkpoints_from_before_identities(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A log created before identities (no id in swarm.json) takes its identity from its
    first record; old-format checkpoints are reported in one line, then replaced."""
    root = tmp_path / "s"
    with Swarm.open(root) as sw:
        _fill(sw, "x", 5, "alpha")
    meta = orjson.loads((root / "swarm.json").read_bytes())
    del meta["id"]
    (root / "swarm.json").write_bytes(orjson.dumps(meta))
    ckdir = root / "checkpoints"
    ckdir.mkdir(exist_ok=True)
    for seq in (3, 7):  # the first format: header without identity, checksum of the payload
        head = {"seq": seq, "format": CHECKPOINT_FORMAT, "config": "", "checksum": "0", "size": 1}
        (ckdir / f"ckpt-{seq:020d}.bin").write_bytes(orjson.dumps(head) + b"\nx")
    with Swarm.open(root) as sw:
        first = next(sw.log.read(1, 1)).id
        assert sw.log.swarm_id == f"first:{first}"
        caplog.clear()
        assert state_at(sw.log).digest() == _digest_from_start(sw.log)  # type: ignore[arg-type]
        msgs = _skips(caplog)
        assert len(msgs) == 1 and "(2)" in msgs[0] and "before checkpoints carried" in msgs[0]
        seq = sw.checkpoint()
    assert [p.name for p in _ckpt_files(root)] == [f"ckpt-{seq:020d}.bin"]  # old ones pruned
    with FileLog(root, notify=False) as log:
        assert load_checkpoint(log) is not None
