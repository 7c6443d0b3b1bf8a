"""Compaction under a file size limit (RLIMIT_FSIZE, ``ulimit -f``).

A compaction under a limit smaller than a segment once spun for about an hour: the
archive scan copied the segment into a memfd (which counts against the limit) without
checking the short write, and ``segment.read_records`` re-read the torn copy forever.
Now archives are scanned in memory, a short read ends the scan, and an archive that
cannot be written stops the compaction with a one-line error (``file too large``) that
changes nothing: every segment is still there, the log verifies, and a run without the
limit completes. Real subprocesses with the limit set by ``resource.setrlimit``.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from swarmlog.file import segment as seg
from swarmlog.file.compact import compact

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 20_000  # bytes: a third of a segment

COMPACT = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
from swarmlog import FileLog
from swarmlog.file.compact import compact
log = FileLog(sys.argv[1], create=False, notify=False)
try:
    res = compact(log, 150)
except OSError as e:
    print("error", e.errno, e.filename)
    sys.exit(3)
print("done", [s.first for s in res.segments])
"""


def _log(root: Path, pad: str) -> list[str]:
    """200 events over four 64 KiB segments and a checkpoint at seq 150; the segments."""
    with FileLog(root, segment_bytes=65536, notify=False) as log:
        for i in range(200):
            text = os.urandom(500).hex() if pad == "random" else pad[i * 7 % 500 :][:1000]
            body = {"pad": text, "i": i}
            log.append(Event(agent="a", type="test.event", id=f"e{i}", body=body))
        log.checkpoints.save(150, b"state", "test/1")
    return seg_names(root)


def seg_names(root: Path) -> list[str]:
    return sorted(os.listdir(root / "segments"))


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    code = COMPACT.format(limit=LIMIT)
    return subprocess.run(
        [sys.executable, "-c", code, str(root)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,  # old code: spins here until killed
    )


def test_compressible_segments_compact_under_the_limit(tmp_path: Path) -> None:
    before = _log(tmp_path, "the cache lives in /var/cache " * 100)
    res = _run(tmp_path)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.split()[0] == "done"
    assert len(seg_names(tmp_path)) == len(before) - 2  # seqs 1..113 archived
    log = FileLog(tmp_path, create=False)
    assert log.verify().ok
    assert [e.seq for e in log.read()] == list(range(1, 201))  # through the archives


def test_archive_over_the_limit_fails_clearly_and_changes_nothing(tmp_path: Path) -> None:
    before = _log(tmp_path, "random")  # incompressible: the archive outgrows the limit
    data = {n: (tmp_path / "segments" / n).read_bytes() for n in before}
    res = _run(tmp_path)
    assert res.returncode == 3, (res.returncode, res.stdout, res.stderr[-2000:])
    _, errno_, filename = res.stdout.split()
    assert int(errno_) == 27  # EFBIG
    assert "archive" in filename
    assert seg_names(tmp_path) == before
    assert {n: (tmp_path / "segments" / n).read_bytes() for n in before} == data
    assert not [n for n in os.listdir(tmp_path / "archive") if ".tmp" in n]
    log = FileLog(tmp_path, create=False)
    assert log.verify().ok
    assert len(compact(log, 150).segments) == 2  # without the limit it completes
    assert len(seg_names(tmp_path)) == len(before) - 2
    assert log.verify().ok
    assert [e.seq for e in log.read()] == list(range(1, 201))


@pytest.mark.slow
def test_cli_compact_over_the_limit_says_file_too_large(tmp_path: Path) -> None:
    from synthesizer.configlog import change_config

    log = FileLog(tmp_path, segment_bytes=65536, notify=False)
    change_config(log, {"retention.keep_checkpoints": "1"})
    log.close()
    with FileLog(tmp_path, segment_bytes=65536, notify=False) as log:
        for i in range(200):
            log.append(Event(agent="a", type="test.event", body={"pad": os.urandom(500).hex()}))
    assert subprocess.run(
        [sys.executable, "-m", "dashboards", "--root", str(tmp_path), "checkpoint"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    ).returncode == 0
    before = seg_names(tmp_path)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    res = subprocess.run(
        [sys.executable, "-m", "dashboards", "--root", str(tmp_path), "compact"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )
    assert res.returncode == 1, (res.stdout, res.stderr)
    assert "Traceback" not in res.stderr
    line = res.stderr.strip().splitlines()[-1]
    assert "file too large" in line and "ulimit -f" in line, line
    assert seg_names(tmp_path) == before
    assert FileLog(tmp_path, create=False).verify().ok


def test_short_read_ends_the_scan(tmp_path: Path) -> None:
    """``read_records`` asked past the end of a file torn mid-record returns (once looped)."""
    code = (
        "import os, sys\n"
        "from swarmlog.file import segment as seg\n"
        "fd = os.open(sys.argv[1], os.O_RDONLY)\n"
        "n = os.fstat(fd).st_size\n"
        "out = [len(r) for r, _ in seg.read_records(fd, 0, n + 5000, 1, 'x')]\n"
        "print(sum(out))\n"
    )
    with FileLog(tmp_path / "log", notify=False) as log:
        for i in range(20):
            log.append(Event(agent="a", type="t", id=f"e{i}", body={"i": i}))
    name = seg.segment_name(1)
    path = tmp_path / "log" / "segments" / name
    raw = path.read_bytes()
    torn = tmp_path / "torn"
    torn.write_bytes(raw[: len(raw) - 10])  # the last record cut short
    res = subprocess.run(
        [sys.executable, "-c", code, str(torn)], cwd=ROOT, capture_output=True, text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert int(res.stdout) == 19
