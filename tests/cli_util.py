"""Run the ``swarmlog`` CLI in-process (through ``main``, so exit codes are the real ones)."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass


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
