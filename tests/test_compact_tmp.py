"""Temporaries of a killed or disk-full compaction (faults work, item 6).

A compaction child is SIGKILLed (a real kill -9, from itself) just before it renames its
archive temporary ``archive/.<seg>.jsonl.gz.<pid>.tmp`` into place: the temporary holds
the segment's records, the forgotten agent's among them. Then:

* ``swarmlog forget`` deletes it (it holds records): a scan of the whole root, gzip
  files opened, finds none of the agent's words;
* the next ``swarmlog compact`` removes it and completes;
* any other writing command (``swarmlog append``) removes a dead process's temporary;
* a compaction on a full disk (a small tmpfs) leaves no temporary, and the CLI says in
  one line that it may simply be run again.
"""

from __future__ import annotations

import errno
import gzip
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from swarmlog import FileLog
from swarmlog.file.compact import compact
from synthesizer import Swarm
from tests.cli_util import run_cli
from tests.test_disk_full import tmpfs  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

MARK = "ZQXTMPSECRET"


def _build(root: Path) -> int:
    FileLog(root, segment_bytes=4096).close()
    sw = Swarm.open(root)
    try:
        for i in range(60):
            sw.agent("victim").share(f"{MARK} private finding number {i}", category="note")
            sw.agent("other").share(f"public finding number {i} about the build", category="ops")
        sw.synthesize()
        seq = sw.checkpoint()
    finally:
        sw.close()
    run_cli("--root", str(root), "config", "set", "retention.keep_checkpoints=1")
    return seq


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob("*.tmp")]


def _holds_mark(path: Path) -> bool:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            pass
    return MARK.encode() in data


def _child(fn: object) -> int:
    """Run ``fn()`` in a forked child; its wait status as subprocess reports it."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            fn()  # type: ignore[operator]
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException as e:
            sys.stderr.write(f"child: {type(e).__name__}: {e}\n")
            code = 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def _killed_compaction(root: Path, point: int) -> None:
    """A real compaction, SIGKILLed as it is about to rename an archive into place."""
    real = os.replace

    def replace(src: str, dst: str) -> None:
        if str(dst).endswith(".jsonl.gz"):
            os.kill(os.getpid(), signal.SIGKILL)
        real(src, dst)

    def run() -> None:
        os.replace = replace  # type: ignore[assignment]  (the child only)
        log = FileLog(root)
        compact(log, point, "archive")

    assert _child(run) == -signal.SIGKILL
    left = _temps(root)
    assert left and all(p.parent.name == "archive" for p in left), left
    assert any(_holds_mark(p) for p in left), "the temporary holds the agent's records"


def test_forget_deletes_a_killed_compactions_temporary(tmp_path: Path) -> None:
    root = tmp_path / "s"
    point = _build(root)
    _killed_compaction(root, point)
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    assert _temps(root) == []
    assert [p for p in root.rglob("*") if p.is_file() and _holds_mark(p)] == []
    assert FileLog(root).verify().ok


def test_the_next_compaction_and_any_writer_remove_temporaries(tmp_path: Path) -> None:
    root = tmp_path / "s"
    point = _build(root)
    _killed_compaction(root, point)
    r = run_cli("--root", str(root), "compact")
    assert r.code == 0, r.err
    assert _temps(root) == []
    assert (root / "archive").is_dir() and list((root / "archive").glob("*.jsonl.gz"))
    # another killed one, then a plain append (any writing command) cleans up after it
    root2 = tmp_path / "s2"
    point = _build(root2)
    _killed_compaction(root2, point)
    r = run_cli("--root", str(root2), "append", "hello", "--agent", "other")
    assert r.code == 0, r.err
    assert _temps(root2) == []
    assert FileLog(root2).verify().ok


def _fill(mnt: Path) -> Path:
    """Fill the file system with one file (ENOSPC from then on)."""
    path = mnt / "filler"
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
    return path


def test_a_compaction_on_a_full_disk_leaves_no_temporary(
    tmpfs: Callable[[str], Path],  # noqa: F811 (the fixture)
) -> None:
    root = tmpfs("8m") / "s"
    _build(root)
    segs = sorted(p.name for p in (root / "segments").iterdir())
    filler = _fill(root.parent)
    r = run_cli("--root", str(root), "compact")
    assert r.code == 1
    assert "compaction stopped" in r.err and "run 'swarmlog compact' again" in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert _temps(root) == []
    assert sorted(p.name for p in (root / "segments").iterdir()) == segs
    filler.unlink()
    r = run_cli("--root", str(root), "compact")  # with room again: it simply runs again
    assert r.code == 0, r.err
    assert _temps(root) == []
    assert FileLog(root).verify().ok


def test_a_compaction_leaves_a_live_writers_index_temporary(tmp_path: Path) -> None:
    """A compaction holds ``compact.lock``, not the append lock, under which a live writer
    grows the shared index through ``.index.<pid>.tmp``: that temporary is not the
    compaction's to remove (it once was, and the growing writer's append failed with
    "index: No such file or directory"). Those of the files written under
    ``compact.lock`` (the seals too, since session 9) go whatever their pid, and any of a
    dead process; a redaction, which holds both locks, removes the live writer's index
    temporary too."""
    root = tmp_path / "s"
    point = _build(root)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        (root / "archive").mkdir(exist_ok=True)
        growing = root / f".index.{live.pid}.tmp"
        theirs = [
            root / f".retention.json.{live.pid}.tmp",
            root / "archive" / f".00000000000000000001.jsonl.gz.{live.pid}.tmp",
            root / f".index.{dead.pid}.tmp",
            root / f".seals.{dead.pid}.tmp",
            root / f".seals.{live.pid}.tmp",  # (a seal is written under compact.lock)
        ]
        for p in (growing, *theirs):
            p.write_bytes(b"x")
        res = compact(FileLog(root), point, "archive")
        assert res.segments  # (it ran: eligible segments were archived)
        assert growing.exists()
        assert [p for p in theirs if p.exists()] == []
        with FileLog(root) as log:  # a redaction (forget) holds the append lock as well
            assert log.redact({log.last_seq: None}) == 1
        assert not growing.exists()
    finally:
        live.kill()
        live.wait()
