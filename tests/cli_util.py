"""Run the ``swarmlog`` CLI in-process (through ``main``, so exit codes are the real ones)."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Result:
    code: int
    out: str
    err: str


def run_cli(*args: str, stdin: str | bytes = b"") -> Result:
    """Run ``swarmlog ARGS`` via ``dashboards.cli.main``; capture stdout, stderr, exit code."""
    from dashboards.cli import main

    data = stdin.encode() if isinstance(stdin, str) else stdin
    out, err = io.StringIO(), io.StringIO()
    fake_in = io.TextIOWrapper(io.BytesIO(data))
    old = sys.stdin, sys.stdout, sys.stderr
    # stdout needs a .buffer for JSON output
    out_bytes = io.BytesIO()
    out_wrapper = io.TextIOWrapper(out_bytes, write_through=True)
    sys.stdin, sys.stdout, sys.stderr = fake_in, out_wrapper, err
    code = 0
    try:
        main(list(args))
    except SystemExit as e:
        code = int(e.code or 0) if not isinstance(e.code, str) else 1
    finally:
        out_wrapper.flush()
        sys.stdin, sys.stdout, sys.stderr = old
    text = out_bytes.getvalue().decode() + out.getvalue()
    return Result(code, text, err.getvalue())


def build_log(root: Path, run: Callable[..., Any] = run_cli) -> None:
    """A log with memories, a synthesizer pass, a checkpoint and one late memory, made
    through the CLI ``run`` (in-process here; the fault scripts pass a subprocess one)."""
    assert run("--root", str(root), "init").code == 0
    for i in range(3):
        r = run("--root", str(root), "append", "-a", f"ag{i}", f"the cache lives in /var/c{i}")
        assert r.code == 0, r
    assert run("--root", str(root), "synth").code == 0
    assert run("--root", str(root), "checkpoint").code == 0
    assert run("--root", str(root), "append", "-a", "late", "one more memory").code == 0


READS = [
    ["tail"],
    ["tail", "--follow", "--timeout", "0.3"],
    ["tail", "--json"],
    ["verify"],
    ["replay"],
    ["stats"],
    ["dashboard"],
    ["search", "cache"],
    ["board"],
    ["board", "f1"],
    ["checkpoint", "--list"],
    ["config", "show"],
]
"""Commands that only read: they must work on a read-only log (on ``build_log``'s log)."""

WRITES = [
    ["append", "-a", "x", "hello"],
    ["synth"],
    ["reinforce", "f1", "-a", "x"],
    ["checkpoint"],
    ["board", "cas", "f1", "--expect", "1", "--content", "changed", "-a", "x"],
    ["init"],
    ["config", "set", "pool.capacity=5"],
]
"""Commands that write: on a read-only log each must fail in one line."""
