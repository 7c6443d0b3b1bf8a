"""The runnable examples (examples/) run as a user runs them and check their own result."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.timeout(240)


def _run(script: str, root: Path) -> list[str]:
    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), str(root)],
        capture_output=True, text=True, timeout=200, cwd=root.parent,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "ok", r.stdout
    return lines


def test_multiprocess_team(tmp_path: Path) -> None:
    lines = _run("multiprocess_team.py", tmp_path / "swarm")
    assert "4 facts from 5 memories:" in lines
    (login,) = [ln for ln in lines if "support 2" in ln]  # two processes, one fact
    assert "researcher-1" in login and "researcher-2" in login and "login test" in login


@pytest.mark.slow
def test_langgraph_team_twice_on_one_root(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.graph")
    first = _run("langgraph_team.py", tmp_path / "swarm")
    assert any(ln.startswith("answer: ") and "fact f" in ln for ln in first)
    second = _run("langgraph_team.py", tmp_path / "swarm")  # the memory persists, no dups
    assert "2 facts in the swarm" in second[-2]
