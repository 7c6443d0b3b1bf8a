"""What the merge rule costs the synthesizer: ``synth_bench``'s decision step on several
revisions of this repository, in one run, alternating.

    .venv/bin/python scripts/bench/rule_cost_bench.py [--rounds 3] [--no-write] REV=LABEL ...

Each revision is exported with ``git archive`` into a temporary folder and the decision
step runs there in a fresh process (10,000 live facts, 5,000 new memories from
``_corpus``'s 32-word topic vocabulary, hashing embedder, one ``run_once``; the first
comparison's lexicon lookups included, as in ``synth_bench``). Rounds alternate the
revisions so that load changes hit all of them; the best and median of each are reported
with the machine's load. ``HEAD`` (or ``.``) is the working tree as committed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import write_table

REPO = Path(__file__).resolve().parents[2]
STEP = """
import random, sys, tempfile, time
from pathlib import Path
tree = sys.argv[1]
sys.path[:0] = [tree, tree + "/scripts/bench"]
import synth_bench as sb
from swarmlog import open_log
from synthesizer.worker import Synthesizer
assert sb.__file__.startswith(tree)
with tempfile.TemporaryDirectory() as d:
    p = Path(d) / "decide"
    sb.fact_log(p, 10_000, config=sb.BIG)
    log = open_log(p)
    w = Synthesizer(log)
    w.catch_up()
    log.append_many(sb.raw_events(5_000, random.Random(5)))
    t0 = time.perf_counter()
    made = w.run_once()
    took = time.perf_counter() - t0
    log.close()
print(made / took)
"""


def export(rev: str, into: Path) -> Path:
    """The tree of ``rev`` under ``into`` (git archive)."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def step(tree: Path) -> float:
    """Decisions per second of one run of the step on ``tree``."""
    r = subprocess.run(
        [sys.executable, "-c", STEP, str(tree)], capture_output=True, text=True, timeout=900
    )
    if r.returncode != 0:
        sys.exit(f"{tree}: {r.stderr.strip().splitlines()[-1]}")
    return float(r.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run the step ``--rounds`` times per revision; print and write the table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("revs", nargs="+", help="REV=LABEL (a git revision and its row label)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="rule-cost-") as tmp:
        trees = []
        for i, spec in enumerate(args.revs):
            rev, _, label = spec.partition("=")
            trees.append((label or rev, export(rev, Path(tmp) / f"t{i}")))
        rates: dict[str, list[float]] = {label: [] for label, _ in trees}
        for r in range(args.rounds):
            for label, tree in trees if r % 2 == 0 else trees[::-1]:
                rates[label].append(step(tree))
                print(f"round {r + 1}: {label}: {rates[label][-1]:,.0f} decisions/s", flush=True)
    load1 = os.getloadavg()[0]
    rows = [
        [label, f"{max(v):,.0f}", f"{statistics.median(v):,.0f}", str(len(v))]
        for label, v in rates.items()
    ]
    notes = (
        "`scripts/bench/rule_cost_bench.py`: synth_bench's decision step (10,000 live facts, "
        "5,000 new memories from a 32-word topic vocabulary, hashing embedder, one "
        "`run_once`, lexicon lookups included) on each revision, exported with `git "
        "archive`, each run in a fresh process, rounds alternating the order. Shared 2-core "
        f"machine, load {load0:.1f} at the start and {load1:.1f} at the end: the absolute "
        "figures fall with load, compare the rows of one run."
    )
    header = ["revision", "best decisions/s", "median decisions/s", "runs"]
    title = "Cost of the merge rule: decisions/s per revision, same run"
    if args.no_write:
        print(notes)
    else:
        print(write_table("rule_cost", title, header, rows, notes))


if __name__ == "__main__":
    main()
