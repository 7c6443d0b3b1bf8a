"""Shared helpers of the fault scripts: run the CLI for real, record what held.

Each script builds a fresh log in a temporary directory, damages or constrains it the
way an operator or an attacker could, runs the real ``swarmlog`` commands (a new
interpreter per command) and prints one line per check: ``held`` or ``FAILED``. The
exit code is 0 when everything held.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.cli_util import READS, WRITES, build_log  # noqa: E402


@dataclass
class Run:
    code: int
    out: str
    err: str


def cli(*args: str, stdin: str = "", timeout: float = 120) -> Run:
    """``swarmlog ARGS`` in a new interpreter."""
    r = subprocess.run(
        [sys.executable, "-m", "dashboards", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Run(r.returncode, r.stdout, r.stderr)


def cli_at(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``swarmlog --root ROOT ARGS`` in a new interpreter, from the repository."""
    return subprocess.run(
        [sys.executable, "-m", "dashboards", "--root", str(root), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )


FAILED: list[str] = []
"""Names of the checks ``check`` saw fail (the scripts' exit code)."""


def check(name: str, ok: bool, detail: str = "") -> None:
    """Print one ``held`` / ``FAILED`` line; remember a failure in ``FAILED``."""
    print(f"{'held  ' if ok else 'FAILED'}  {name}{': ' + detail if detail else ''}")
    if not ok:
        FAILED.append(name)


def one_line_error(r: Run, start: str = "error: ") -> bool:
    """Exit 1 with exactly one line on stderr, starting with ``start``, no traceback."""
    lines = r.err.strip().splitlines()
    return r.code == 1 and len(lines) == 1 and lines[0].startswith(start)


@dataclass
class Report:
    title: str
    rows: list[tuple[bool, str]] = field(default_factory=list)

    def check(self, ok: bool, what: str, detail: str = "") -> bool:
        self.rows.append((ok, what))
        mark = "held  " if ok else "FAILED"
        print(f"  {mark} {what}" + (f"  [{detail.strip()[:300]}]" if detail and not ok else ""))
        return ok

    def done(self) -> int:
        bad = sum(1 for ok, _ in self.rows if not ok)
        print(f"{self.title}: {len(self.rows) - bad} of {len(self.rows)} checks held")
        return 1 if bad else 0


def workdir(prefix: str) -> Path:
    """A fresh directory under /tmp (world-traversable, for the other-user checks)."""
    d = Path(tempfile.mkdtemp(prefix=f"swarmlog-fault-{prefix}-", dir="/tmp"))
    d.chmod(0o755)
    return d


def build(root: Path) -> None:
    """A log with memories, a synthesizer pass, a checkpoint and one late memory."""
    build_log(root, cli)


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


__all__ = [
    "FAILED",
    "READS",
    "REPO",
    "WRITES",
    "Report",
    "Run",
    "build",
    "check",
    "cli",
    "cli_at",
    "one_line_error",
    "os",
    "snapshot",
]
