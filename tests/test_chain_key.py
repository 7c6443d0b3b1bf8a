"""The operator's chain key reads the same from the variable as from a key file.

``SWARMLOG_CHAIN_KEY_FILE`` was stripped of surrounding whitespace and
``SWARMLOG_CHAIN_KEY`` was not: a log compacted with a key file holding `` k`` failed
``verify --key`` (CORRUPT: "not the one it was written with") when the same text was
given in the variable. docs/faults.md, "The writer index lost, replaced or cut; ...".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from swarmlog.errors import SwarmlogError
from swarmlog.file import archive as arc
from swarmlog.file.compact import compact
from tests.cli_util import run_cli


def _fill_and_compact(root: Path) -> None:
    with FileLog(root, segment_bytes=4096) as log:
        for i in range(90):
            log.append(Event(agent="a", type="test.event", body={"i": i, "pad": "x" * 80}))
        point = log.last_seq - 5
        log.checkpoints.save(point, b"state", "test/1")
        assert compact(log, point, "archive").segments


def test_a_key_in_the_variable_reads_as_the_same_text_in_a_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "s"
    keyfile = tmp_path / "vault" / "chain.key"
    keyfile.parent.mkdir()
    keyfile.write_text(" k\n")
    monkeypatch.setenv(arc.KEY_FILE_ENV, str(keyfile))
    _fill_and_compact(root)
    r = run_cli("--root", str(root), "verify", "--key")
    assert r.code == 0, r.out + r.err
    monkeypatch.delenv(arc.KEY_FILE_ENV)
    monkeypatch.setenv(arc.KEY_ENV, " k")
    r = run_cli("--root", str(root), "verify", "--key")
    assert r.code == 0, r.out + r.err
    monkeypatch.setenv(arc.KEY_ENV, "k\n")
    assert run_cli("--root", str(root), "verify", "--key").code == 0
    monkeypatch.setenv(arc.KEY_ENV, "another key")
    assert run_cli("--root", str(root), "verify", "--key").code == 1


def test_a_variable_of_only_whitespace_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arc.KEY_FILE_ENV, raising=False)
    monkeypatch.setenv(arc.KEY_ENV, "  ")
    with pytest.raises(SwarmlogError, match="only whitespace"):
        arc.chain_key()
    monkeypatch.setenv(arc.KEY_ENV, "")
    assert arc.chain_key() is None
