"""Writer-view snapshots across real processes (swarmlog/file/view/snapshot.py,
swarmlog/file/view/columns.py).

* a fresh process that starts from the mapped snapshot recognises every retried id, from
  before the snapshot and after it, and stores nothing twice;
* writer processes racing on one log, each started from a snapshot (the second wave from
  ones the first wave saved while racing), keep seqs gapless and ids unique, answer
  retries with the original seqs and serialise CAS increments exactly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import Event, open_log
from swarmlog.file.view import snapshot

ROOT = Path(__file__).resolve().parent.parent


def _start(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.viewsnapworkers", *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
    )


def _result(p: subprocess.Popen[bytes]) -> Any:
    out, _ = p.communicate(timeout=240)
    assert p.returncode == 0, f"worker {p.pid} failed"
    return orjson.loads(out)


def _filled(root: Path, n: int, monkeypatch: pytest.MonkeyPatch) -> list[Event]:
    """n keyed and unkeyed events, then a snapshot of them (a second handle's catch-up)."""
    with open_log(root) as log:
        stored = [
            log.append(Event(agent="a", type="note", key=f"k{i % 5}" if i % 4 else None, body={}))
            for i in range(n)
        ]
    monkeypatch.setattr(snapshot, "SAVE_AFTER", 50)
    with open_log(root) as log:
        stored.append(log.append(Event(agent="b", type="note", body={})))
    assert (root / snapshot.NAME).exists()
    return stored


def _old(tmp_path: Path, stored: list[Event]) -> str:
    path = tmp_path / "old.json"
    path.write_bytes(orjson.dumps([[e.id, e.seq, e.to_dict()] for e in stored]))
    return str(path)


@pytest.mark.timeout(300)
def test_a_fresh_process_recognises_retried_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    stored = _filled(root, 300, monkeypatch)
    with open_log(root) as log:  # after the snapshot: read on top of it by the worker
        stored += [log.append(Event(agent="c", type="note", body={"i": i})) for i in range(10)]
    r = _result(_start("retry", str(root), _old(tmp_path, stored)))
    assert r["loaded"] == [True] and r["based"]
    assert r["seqs"] == [e.seq for e in stored]
    events = list(open_log(root).read())
    assert [e.id for e in events] == [e.id for e in stored]  # nothing stored twice
    assert open_log(root).verify().ok


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_concurrent_writer_processes_from_snapshots_keep_ids_and_seqs_unique(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    stored = _filled(root, 300, monkeypatch)
    old = _old(tmp_path, stored)
    results = []
    for wave, (workers, rounds) in enumerate([(4, 40), (3, 30)]):
        go = tmp_path / f"go{wave}"
        procs = [
            _start("write", str(root), old, str(go), str(wave * 10 + i), str(rounds))
            for i in range(workers)
        ]
        time.sleep(0.5)  # let them open; the go file releases them together
        go.touch()
        results += [_result(p) for p in procs]
    for r in results:
        assert r["wrong"] == []
        assert r["loaded"][0] is True and r["based"]  # started from a snapshot
    events = list(open_log(root).read())
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert len({e.id for e in events}) == len(events)
    by_id = {e.id: e.seq for e in events}
    mine = [tuple(x) for r in results for x in r["mine"]]
    assert all(by_id[eid] == seq for eid, seq in mine)
    counts = [e for e in events if e.type == "count"]
    assert len(counts) == sum(r["counted"] for r in results) == 4 * 40 + 3 * 30
    assert len(events) == len(stored) + len(mine) + len(counts)
    with open_log(root) as log:
        assert log.version("ctr") == counts[-1].seq
    assert open_log(root).verify().ok
