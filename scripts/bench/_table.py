"""Shared helpers of the benchmark scripts: timing and writing a table into docs/benchmarks.md."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """Fastest wall time of ``repeat`` runs of ``fn`` (seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def write_table(
    marker: str, title: str, header: list[str], rows: list[list[str]], notes: str = ""
) -> str:
    """Render a markdown table and put it between ``<!-- bench:marker -->`` markers."""
    lines = [
        f"### {title}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if notes:
        lines += ["", notes]
    block = "\n".join(lines)
    text = BENCHMARKS.read_text()
    start, end = f"<!-- bench:{marker} -->", f"<!-- /bench:{marker} -->"
    if start not in text:
        text = text.rstrip() + f"\n\n{start}\n{end}\n"
    text = re.sub(
        re.escape(start) + r".*?" + re.escape(end),
        lambda _: f"{start}\n{block}\n{end}",
        text,
        flags=re.S,
    )
    BENCHMARKS.write_text(text)
    return block


def cached_bytecode() -> None:
    """Let this process and the processes it starts cache compiled bytecode, as any
    installed Python package does, and compile the project's modules once now. Why: a
    sandbox that sets PYTHONDONTWRITEBYTECODE makes every fresh process compile every
    module it imports from source (~90 ms of a CLI start here), which is not what a user's
    process pays; the bare-interpreter baseline never pays it."""
    import os
    import subprocess
    import sys

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import dashboards.cli, synthesizer.swarm, synthesizer.search.recall,"
            " synthesizer.worker.synth, synthesizer.metrics, dashboards.commands.act_log,"
            " dashboards.commands.act_board,"
            " dashboards.commands.act_synth, dashboards.commands.act_stats",
        ],
        check=True,
    )
