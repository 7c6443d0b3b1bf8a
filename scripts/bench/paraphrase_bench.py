"""Paraphrase merging, pair by pair and swarm-wide, under each embedder.

    .venv/bin/python scripts/bench/paraphrase_bench.py [--embedders hash,minilm]
        [--sets quality_testset11.jsonl,quality_dev11.jsonl] [--swarm FILE] [--no-judge]
        [--json OUT]

1. The rule (``compare`` with the embedder's span similarity) on every pair of each
   labelled set: per level, how many pairs are ``same`` / ``contradicts`` / ``different``
   / ``unsure``; then false merges (a keep-apart pair ``same``), contradictions flagged,
   should-merge or different-thing pairs flagged as contradictions, and should-merge pairs
   called ``different`` without evidence (a reason that names no other value or thing).
2. A judge that answers from the labels (registered in-process), each pair of each set
   shared by two agents into a fresh swarm and folded by one synthesizer pass: how many
   should-merge pairs end as one fact, how many pairs the judge was asked about, and
   keep-apart pairs merged (a judge can merge only what the rule called ``unsure``).
3. The swarm (tests/data/swarm_findings.jsonl): 30 findings, each reported by three
   agents in their own words, and 10 contradicting reports, shared into a fresh FileLog
   swarm and folded by one synthesizer pass, no judge: facts, groups of possible
   duplicates (what recall shows as one hit), contradicting reports flagged, false
   merges (a fact holding two findings, or a contradiction merged into its finding), and
   the hits of the finding in a grouped recall whose query is each finding's first
   wording (summed over the 30 findings: 30 is one hit per finding).

Run it against another checkout (``PYTHONPATH=/path/to/checkout``) for a baseline of the
same run; labelled files that checkout lacks are read from this one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from synthesizer.config import SynthConfig
from synthesizer.merge.judge import register_judge
from synthesizer.merge.rule import compare
from synthesizer.search.embed import embedder_for
from synthesizer.swarm import Swarm

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
EVIDENCE = ("number", "unit", "name", "quantity", "subject", "hedge", "swapped", "direction")
"""Words a ``different`` verdict's reason names when it rests on evidence."""


def rows(name: str) -> list[dict]:
    """Rows of a JSONL file under tests/data."""
    with open(DATA / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def span_sim(name: str):  # type: ignore[no-untyped-def]
    """The embedder's cosine of two texts (vectors cached)."""
    emb = embedder_for(name)
    cache: dict[str, object] = {}

    def vec(x: str):  # type: ignore[no-untyped-def]
        if x not in cache:
            cache[x] = emb.embed([x])[0]
        return cache[x]

    return lambda x, y: float(vec(x) @ vec(y))


def rule_table(name: str, sets: list[str]) -> dict:
    """Part 1 for embedder ``name``."""
    sim = span_sim(name)
    out = {}
    for fname in sets:
        levels: dict[str, Counter] = defaultdict(Counter)
        false_merges, flagged_wrong, unproven = [], 0, []
        contra = contra_flagged = should = keep_other = 0
        for r in rows(fname):
            v = compare(r["a"], r["b"], sim)
            levels[r["level"]][v.kind] += 1
            if r["merge"]:
                should += 1
                flagged_wrong += v.kind == "contradicts"
                if v.kind == "different" and not any(w in v.reason for w in EVIDENCE):
                    unproven.append((r["a"], r["b"], v.reason))
            else:
                if v.kind == "same":
                    false_merges.append((r["a"], r["b"]))
                if r["level"] == "contradiction":
                    contra += 1
                    contra_flagged += v.kind == "contradicts"
                else:
                    keep_other += 1
                    flagged_wrong += v.kind == "contradicts"
        out[fname] = {
            "levels": {k: dict(c) for k, c in sorted(levels.items())},
            "false_merges": len(false_merges),
            "contradictions_flagged": f"{contra_flagged}/{contra}",
            "flagged_wrongly": f"{flagged_wrong}/{should + keep_other}",
            "different_without_evidence": len(unproven),
        }
    return out


LABELS: dict[frozenset[str], str] = {}
ASKED: list[tuple[str, str]] = []


def _from_labels(a: str, b: str) -> str:
    ASKED.append((a, b))
    return LABELS.get(frozenset((a, b)), "different")


register_judge("bench-labels", _from_labels)


def judge_table(name: str, sets: list[str]) -> dict:
    """Part 2 for embedder ``name``."""
    out = {}
    cfg = SynthConfig.model_validate({"embedder": name, "synthesizer": {"judge": "bench-labels"}})
    for fname in sets:
        should = merged = wrong = 0
        ASKED.clear()
        data = rows(fname)
        for r in data:
            answer = (
                "same"
                if r["merge"]
                else ("contradicts" if r["level"] == "contradiction" else "different")
            )
            LABELS[frozenset((r["a"], r["b"]))] = answer
            with (
                tempfile.TemporaryDirectory() as tmp,
                Swarm.open(Path(tmp) / "s", config=cfg) as sw,
            ):
                sw.agent("alpha").share(r["a"], category="finding")
                sw.agent("beta").share(r["b"], category="finding")
                sw.synthesize()
                live = [f for f in sw.state().facts.values() if f.status in ("active", "contested")]
                one = len(live) == 1
            should += r["merge"]
            merged += one and r["merge"]
            wrong += one and not r["merge"]
        out[fname] = {
            "should_merge_merged": f"{merged}/{should}",
            "pairs_asked": f"{len({frozenset(p) for p in ASKED})}/{len(data)}",
            "keep_apart_merged": wrong,
        }
    return out


def swarm_table(name: str, fname: str = "swarm_findings.jsonl") -> dict:
    """Part 3 for embedder ``name``, on the swarm file ``fname``."""
    data = rows(fname)
    with (
        tempfile.TemporaryDirectory() as tmp,
        Swarm.open(Path(tmp) / "s", config=SynthConfig(embedder=name)) as sw,
    ):
        finding_of: dict[int, tuple[int, str]] = {}
        for r in data:
            seq = sw.agent(r["agent"]).share(r["text"], category="finding").seq
            finding_of[seq] = (r["finding"], r["kind"])
        sw.synthesize()
        st = sw.state()
        live = {fid: f for fid, f in st.facts.items() if f.status in ("active", "contested")}
        judging = getattr(st, "judging", None)
        groups = {tuple(judging.group(fid)) if judging else (fid,) for fid in live}
        groups = {tuple(g for g in grp if g in live) for grp in groups}
        false_merge = flagged = 0
        findings_of: dict[str, set[int]] = {}
        for fid, f in live.items():
            found = {finding_of[e.seq] for e in f.evidence if e.seq in finding_of}
            findings_of[fid] = {fi for fi, k in found if k == "report"}
            if len({fi for fi, _ in found}) > 1 or len({k for _, k in found}) > 1:
                false_merge += 1
            if any(k == "contradiction" for _, k in found) and f.status == "contested":
                flagged += 1
        first = {}
        for r in data:
            if r["kind"] == "report":
                first.setdefault(r["finding"], r["text"])
        hits = 0
        reader = sw.agent("reader")
        for finding, text in sorted(first.items()):
            for h in reader.recall(text, limit=10):
                if finding in findings_of.get(h.fact.id, set()):
                    hits += 1
    return {
        "reports": len(data),
        "findings": 30,
        "facts": len(live),
        "groups": len(groups),
        "contradictions_flagged": f"{flagged}/10",
        "false_merges": false_merge,
        "finding_hits_in_recall": hits,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedders", default="hash,minilm")
    ap.add_argument("--sets", default="quality_testset11.jsonl,quality_dev11.jsonl")
    ap.add_argument("--swarm", default="swarm_findings.jsonl", help="the swarm-level set")
    ap.add_argument("--no-judge", action="store_true", help="parts 1 and 3 only")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    report = {}
    for name in args.embedders.split(","):
        sets = args.sets.split(",")
        report[name] = {"rule": rule_table(name, sets), "swarm": swarm_table(name, args.swarm)}
        if not args.no_judge:
            report[name]["judge"] = judge_table(name, sets)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text)


if __name__ == "__main__":
    sys.exit(main())
