"""CLI start-up benchmark: what one ``swarmlog`` call per agent action costs.

    .venv/bin/python scripts/bench/cli_bench.py [--runs N] [--facts N]

1. the median wall time of each per-action command (``append``, ``tail``, ``search``,
   ``board FACT``, ``board cas``, ``reinforce``) on an existing small swarm, each in a
   fresh process through the installed ``swarmlog`` entry point, against
   ``python -c "import orjson"`` timed in the same rounds (interleaved); plus, for
   reference, ``python -c "import orjson, numpy"`` (numpy is what ``search`` needs on top
   of the fold: its index);
2. ``swarmlog stats --json`` in a fresh process on a 100,000-fact swarm (pool capacity
   raised to 200,000) from its checkpoint.

Writes the table into docs/benchmarks.md (marker ``cli``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import cached_bytecode, write_table
from synth_bench import fact_log

from synthesizer.swarm import Swarm

BIN = Path(sys.executable).parent
HERE = Path(__file__).resolve().parents[2]  # this source tree
SWARMLOG = str(BIN / "swarmlog")
PY = sys.executable


def run(
    cmd: list[str],
    ok: tuple[int, ...] = (0,),
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> float:
    """Wall time of one command (seconds); its output is discarded, its exit code checked."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    dt = time.perf_counter() - t0
    if r.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.decode()[:300]}")
    return dt


def small_swarm(root: Path) -> tuple[str, int]:
    """An existing swarm: 200 shared memories by 4 agents, synthesized and checkpointed."""
    with Swarm.open(root) as sw:
        for i in range(200):
            sw.agent(f"agent-{i % 4}").share(f"finding {i}: the cache {i % 17} drops keys")
        sw.synthesize()
        sw.checkpoint()
        fid = sorted(sw.state().facts)[0]
        return fid, sw.log.last_seq


def _commands(exe: str, root: str, fid: str, last: int, tag: str) -> dict[str, object]:
    return {
        "append": lambda i: [*exe.split(), "--root", root, "append", "--agent", "a", f"note {i}"],
        "tail": lambda i: [*exe.split(), "--root", root, "tail", "--from", str(last)],
        "search": lambda i: [*exe.split(), "--root", root, "search", "cache drops keys"],
        "board FACT": lambda i: [*exe.split(), "--root", root, "board", fid],
        "board cas": lambda i: [
            *exe.split(), "--root", root, "board", "cas", f"plan-{tag}{i}", "--expect", "0",
            "--content", "plan", "--value", str(i),
        ],
        "reinforce": lambda i: [
            *exe.split(), "--root", root, "reinforce", "--agent", f"r{tag}{i}", fid
        ],
    }


def per_action(
    root: str, fid: str, last: int, runs: int, compare: str | None
) -> list[list[str]]:
    """Median start of each per-action command vs ``import orjson`` (and, with
    ``compare``, another source tree's CLI on the same swarm), interleaved."""
    # with ``compare``, both trees run the same way (``python -m dashboards`` from their
    # directory, first on the path) and take turns going first: a fair before/after
    cmds = _commands(f"{PY} -m dashboards" if compare else SWARMLOG, root, fid, last, "a")
    other = _commands(f"{PY} -m dashboards", root, fid, last, "b") if compare else {}
    ours_env = {**os.environ, "PYTHONPATH": str(HERE)}
    env = {**os.environ, "PYTHONPATH": compare or ""}
    base: list[float] = []
    numpy: list[float] = []  # a reference: what ``search`` must import on top (the index)
    times: dict[str, list[float]] = {k: [] for k in cmds}
    then: dict[str, list[float]] = {k: [] for k in other}
    for i in range(runs):
        base.append(run([PY, "-c", "import orjson"]))
        numpy.append(run([PY, "-c", "import orjson, numpy"]))
        for k, make in cmds.items():
            if k not in other:
                times[k].append(run(make(i)))  # type: ignore[operator]
                continue
            pair = [
                (times[k], make(i), ours_env, str(HERE)),  # type: ignore[operator]
                (then[k], other[k](i), env, compare),  # type: ignore[operator]
            ]
            for into, argv, e, cwd in pair if i % 2 else pair[::-1]:
                into.append(run(argv, env=e, cwd=cwd))
    b = statistics.median(base)
    rows = []
    for k, v in times.items():
        m = statistics.median(v)
        row = [f"`{k}`", f"{m * 1e3:.0f} ms", f"{b * 1e3:.0f} ms", f"{m / b:.1f}x"]
        if compare:
            t = statistics.median(then[k])
            row.append(f"{t * 1e3:.0f} ms ({t / b:.1f}x)")
        rows.append([*row, "<= 4x"])
    n = statistics.median(numpy)
    ref = ["`python -c \"import orjson, numpy\"` (reference)", f"{n * 1e3:.0f} ms",
           f"{b * 1e3:.0f} ms", f"{n / b:.1f}x"]
    rows.append([*ref, *(["-"] if compare else []), "-"])
    return rows


def big_swarm(root: Path, facts: int) -> str:
    """A ``facts``-fact swarm with pool capacity 200,000 in its log, checkpointed by the
    CLI (which folds under the log's configuration); returns how it was built."""
    run([SWARMLOG, "--root", str(root), "init", "--set", "pool.capacity=200000"])
    fact_log(root, facts)
    run([SWARMLOG, "--root", str(root), "checkpoint"])
    return "`init --set pool.capacity=200000`, then raw + fact.created pairs, then `checkpoint`"


def stats_row(root: Path, facts: int, runs: int) -> tuple[list[str], str]:
    how = big_swarm(root, facts)
    base, ours = [], []
    for _ in range(runs):
        base.append(run([PY, "-c", "import orjson"]))
        ours.append(run([SWARMLOG, "--root", str(root), "stats", "--json"]))
    out = subprocess.run(
        [SWARMLOG, "--root", str(root), "stats", "--json"], capture_output=True, check=True
    ).stdout
    shown = out.count(b'"id"')  # not used for the figure; facts_total below is
    import orjson

    total = orjson.loads(out).get("facts_total", shown)
    m, b = statistics.median(ours), statistics.median(base)
    row = [
        f"`stats --json`, {facts:,}-fact swarm (shows {total:,} facts)",
        f"{m:.2f} s",
        f"{b * 1e3:.0f} ms",
        f"{m / b:.1f}x",
        "<= 1.5 s",
    ]
    return row, how


def main() -> None:
    cached_bytecode()
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument(
        "--compare",
        help="another source tree (e.g. `git archive main`) whose CLI to time beside, run as "
        "`python -m dashboards` with it first on PYTHONPATH",
    )
    ap.add_argument("--compare-label", default="compared build (ratio)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-bench-") as d:
        tmp = Path(d)
        fid, last = small_swarm(tmp / "small")
        rows = per_action(str(tmp / "small"), fid, last, args.runs, args.compare)
        srow, how = stats_row(tmp / "big", args.facts, max(3, args.runs // 3))
    if args.compare:
        srow.insert(4, "-")
    rows.append(srow)
    notes = (
        f"Each figure is the median of {args.runs} fresh processes through the installed "
        "`swarmlog` entry point (stats: of "
        f"{max(3, args.runs // 3)}), interleaved with the baseline `python -c \"import "
        "orjson\"` (the bare interpreter plus one C extension) in the same rounds; ratio = "
        f"command / baseline. {os.cpu_count()} CPUs, shared with other jobs while measured. "
        f"The 100k swarm: {how}. Bytecode is cached, as in any install (this sandbox sets "
        "PYTHONDONTWRITEBYTECODE, which made every start compile every module it imports: "
        "the figures of earlier rounds include that). "
        "Run: `.venv/bin/python scripts/bench/cli_bench.py`."
    )
    header = ["command", "median wall time", "baseline (import orjson)", "ratio", "goal"]
    if args.compare:
        header.insert(4, args.compare_label)
        notes += (
            f" Compared: {args.compare_label.split(' (')[0]}, run as `python -m dashboards` from "
            "an export of its tree, same swarm, same rounds; with --compare this tree's "
            "commands run the same way (`python -m dashboards` from its checkout), the two "
            "taking turns to go first."
        )
    print(write_table("cli", "CLI start (one process per agent action)", header, rows, notes))


if __name__ == "__main__":
    main()
