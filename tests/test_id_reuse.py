"""An event id reused for other content is refused (polish work); a retry is still answered.

The contract tests (test_log_contract.py) hold every backend to it, with two real
processes racing one id. Here: FileLog's append path without its shared writer index
(a handle that cannot open the index catches up from the segments instead), the CLI's
one-line error naming the JSONL line, and a record erased since (its original content
is gone, so a retry gets the redacted record, as before).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import Event, EventIdReused, open_log
from swarmlog.file.log import FileLog
from swarmlog.idreuse import differing
from tests.cli_util import run_cli
from tests.conftest import LogTarget


def ev(id: str, **kw: object) -> Event:
    return Event(agent="a1", type="test.event", id=id, **kw)  # type: ignore[arg-type]


def test_file_log_without_its_writer_index(tmp_path: Path) -> None:
    root = str(tmp_path / "log")
    with FileLog(root, create=True) as log:
        log._wix_off = True  # (the catch-up path a handle takes when no index opens)
        first = log.append(ev("x", body={"v": 1}))
        assert log.append(ev("x", body={"v": 1})) == first
        with pytest.raises(EventIdReused, match="seq 1 with different content"):
            log.append(ev("x", body={"v": 2}))
        with pytest.raises(EventIdReused):
            log.append_many([ev("y"), ev("x", body={"v": 2})])
        assert log._wview() is None and log.last_seq == 1
        out = log.append_many([ev("y"), ev("x", body={"v": 1})])
        assert [e.seq for e in out] == [2, 1] and out[1] == first


def test_cli_jsonl_names_the_line(cli_root: str) -> None:
    batch = b'{"id": "e1", "body": {"content": "one"}}\n{"id": "e2", "body": {"content": "two"}}\n'
    assert run_cli("--root", cli_root, "append", "--agent", "a", "--jsonl", stdin=batch).code == 0
    again = run_cli("--root", cli_root, "append", "--agent", "a", "--jsonl", stdin=batch)
    assert again.code == 0 and "appended seq 2 " in again.out  # a retry: the originals
    changed = batch.replace(b'"two"', b'"2"') + b'{"body": {"content": "three"}}\n'
    r = run_cli("--root", cli_root, "append", "--agent", "a", "--jsonl", stdin=changed)
    assert r.code == 1 and r.err.count("\n") == 1 and "Traceback" not in r.err, r
    assert r.err.startswith("error: line 2: event id 'e2' is already stored at seq 2"), r.err
    with open_log(cli_root) as log:
        assert log.last_seq == 2


def test_a_redacted_record_answers_a_retry(log_target: LogTarget) -> None:
    with log_target.open() as log:
        log.append(ev("x", body={"content": "secret"}))
        assert log.redact({1: None}) == 1
        got = log.append(ev("x", body={"content": "secret"}))
        assert got.seq == 1 and got.body == {} and log.last_seq == 1


def test_content_is_compared_as_stored_json() -> None:
    stored = ev("x", body={"a": [1, 2], "b": {"c": 1.5}}, causes=[1]).replace(seq=1, swarm="s")
    same = ev("x", body={"b": {"c": 1.5}, "a": (1, 2)}, causes=[1], ts=5.0)
    assert differing(same.envelope, stored.envelope) == []
    assert differing(ev("x", body={"a": [1, 2], "b": {"c": 1.5}}, causes=[1], swarm="s").envelope,
                     stored.envelope) == []
    other = ev("x", body={"a": [1, 2], "b": {"c": 1.5}}, swarm="t", thread="t")
    assert differing(other.envelope, stored.envelope) == ["swarm", "thread", "causes"]
