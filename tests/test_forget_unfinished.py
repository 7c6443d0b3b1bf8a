"""An unfinished forget is visible (faults work, item 8).

A real ``swarmlog forget`` child SIGKILLs itself right after its request is durable (and,
in a second run, at a later step, mid-rewrite). ``swarmlog verify`` still exits 0 (the
log is consistent) but notes the unfinished erasure and names the command that finishes
it; running that command finishes it and the note goes.
"""

from __future__ import annotations

import shlex
import signal
from pathlib import Path

import pytest

from tests.cli_util import run_cli
from tests.test_forget_crash import MARK, build, count_steps, forget_child, no_marker

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]


def _note(root: Path) -> str | None:
    r = run_cli("--root", str(root), "verify")
    assert r.code == 0, (r.out, r.err)
    notes = [ln for ln in r.out.splitlines() if ln.startswith("note: unfinished erasure")]
    assert len(notes) <= 1
    return notes[0] if notes else None


@pytest.mark.parametrize("late", [False, True], ids=["after-intent", "mid-rewrite"])
def test_verify_notes_an_unfinished_forget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: bool
) -> None:
    root = tmp_path / "s"
    build(root)
    assert _note(root) is None
    at = 1
    if late:
        probe = tmp_path / "probe"
        import shutil

        shutil.copytree(root, probe)
        at = max(2, count_steps(probe, monkeypatch) // 2)
    assert forget_child(root, at) == -signal.SIGKILL
    assert not no_marker(root), "killed before the rewrite finished: words remain"
    note = _note(root)
    assert note is not None and "agent 'victim'" in note, note
    cmd = note.split("`")[1]
    assert cmd == "swarmlog forget --agent victim --as operator"
    r = run_cli("--root", str(root), *shlex.split(cmd)[1:])
    assert r.code == 0, r.err
    assert _note(root) is None
    assert no_marker(root), MARK
