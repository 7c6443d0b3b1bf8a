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
from synthesizer.worker.synth import Synthesizer
assert sb.__file__.startswith(tree)
spent = [0.0]  # CPU seconds inside the free-text choice (the merge rule's share)
try:
    from synthesizer.worker.contest import TextContests
except ImportError:  # before the rule: no such step
    TextContests = None
if TextContests is not None:
    plain = TextContests.choose
    def choose(self, *a, **k):
        c0 = time.process_time()
        try:
            return plain(self, *a, **k)
        finally:
            spent[0] += time.process_time() - c0
    TextContests.choose = choose
with tempfile.TemporaryDirectory() as d:
    p = Path(d) / "decide"
    sb.fact_log(p, 10_000, config=sb.BIG)
    log = open_log(p)
    w = Synthesizer(log)
    w.catch_up()
    log.append_many(sb.raw_events(5_000, random.Random(5)))
    t0, c0 = time.perf_counter(), time.process_time()
    made = w.run_once()
    took, cpu = time.perf_counter() - t0, time.process_time() - c0
    log.close()
print(made / took, made / cpu, spent[0])
"""


def export(rev: str, into: Path) -> Path:
    """The tree of ``rev`` under ``into`` (git archive)."""
    into.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def step(tree: Path) -> tuple[float, float, float]:
    """Decisions per wall second and per CPU second of one run of the step on ``tree``,
    and the CPU seconds spent choosing among free-text candidates (the merge rule)."""
    r = subprocess.run(
        [sys.executable, "-c", STEP, str(tree)], capture_output=True, text=True, timeout=900
    )
    if r.returncode != 0:
        sys.exit(f"{tree}: {r.stderr.strip().splitlines()[-1]}")
    wall, cpu, rule = r.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu), float(rule)


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
        runs: dict[str, list[tuple[float, float, float]]] = {label: [] for label, _ in trees}
        for r in range(args.rounds):
            for label, tree in trees if r % 2 == 0 else trees[::-1]:
                runs[label].append(step(tree))
                wall, cpu, rule = runs[label][-1]
                print(f"round {r + 1}: {label}: {wall:,.0f}/s wall, {cpu:,.0f}/CPU-s, "
                      f"choosing {rule:.2f} CPU-s", flush=True)  # fmt: skip
    load1 = os.getloadavg()[0]
    rows = []
    for label, v in runs.items():
        wall, cpu, rule = ([x[i] for x in v] for i in range(3))
        rows.append(
            [
                label,
                f"{statistics.median(wall):,.0f} ({max(wall):,.0f})",
                f"{statistics.median(cpu):,.0f} ({max(cpu):,.0f})",
                f"{statistics.median(rule):.2f} ({min(rule):.2f})" if max(rule) else "-",
                str(len(v)),
            ]
        )
    notes = (
        "`scripts/bench/rule_cost_bench.py`: synth_bench's decision step (10,000 live facts, "
        "5,000 new memories from a 32-word topic vocabulary, hashing embedder, one "
        "`run_once`, lexicon lookups included) on each revision, exported with `git "
        "archive`, each run in a fresh process, rounds alternating the order. Shared 2-core "
        f"machine, load {load0:.1f} at the start and {load1:.1f} at the end: wall figures "
        "fall with load; per CPU-second they move less. 'Choosing' is the CPU time inside "
        "`TextContests.choose` (parsing, the merge rule, span embeddings), the part this "
        "step adds to the decisions; the rest is mostly the candidate scorer, whose floor "
        "the contest floor (0.55) lowers."
    )
    header = [
        "revision",
        "decisions/s, wall: median (best)",
        "decisions per CPU-s: median (best)",
        "CPU-s choosing among candidates: median (best)",
        "runs",
    ]
    title = "Cost of the merge rule: decisions/s per revision, same run"
    if args.no_write:
        print(notes)
    else:
        print(write_table("rule_cost", title, header, rows, notes))


if __name__ == "__main__":
    main()
