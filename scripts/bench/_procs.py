"""Writer child processes started together: each says "ready", all are let go at once.

Shared by the benchmarks that time N writer processes (jetstream_bench, jetstream_cost):
a child is ``cmd + [agentI]``; it prints ``ready`` once set up and waits for ``go`` on
stdin, so that interpreter start-up and connection set-up stay out of the timed window.
"""

from __future__ import annotations

import subprocess


def start_writers(cmd: list[str], n: int) -> list[subprocess.Popen[str]]:
    """``n`` children of ``cmd`` (agents ``agent0``..), returned once every one is ready."""
    procs = [
        subprocess.Popen(
            [*cmd, f"agent{i}"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        for i in range(n)
    ]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    return procs


def release(procs: list[subprocess.Popen[str]]) -> None:
    """Let every child go (one ``go`` line each)."""
    for p in procs:
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.flush()
