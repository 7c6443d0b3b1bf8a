"""Merge quality of each embedder on the labelled set, through the real synthesizer path.

    .venv/bin/python scripts/bench/quality_bench.py [--embedders hash,minilm]

For every pair of tests/data/quality_pairs.jsonl (trivial rewrites, light and semantic
paraphrases, near-misses by number / unit / negation / component, unrelated pairs) two
agents share the two statements into a fresh swarm (a FileLog in a temporary directory)
and one synthesizer pass decides: merged means one fact. Reported per level: how many
merged; overall precision and recall of merging. Then recall@5 of search-style queries
(tests/data/quality_queries.jsonl) over a swarm holding every base statement plus its
near-misses as distractors. The hashing embedder is the baseline of the same run.
Quality figures do not depend on the machine; the embedding rate does (shared machine).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import write_table

from synthesizer.config import SynthConfig
from synthesizer.search.embed import embedder_for, near_duplicate_of
from synthesizer.swarm import Swarm

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"
HELD_OUT = ["quality_pairs_heldout.jsonl", "quality_pairs_heldout2.jsonl"]
LEVELS = [
    "trivial",
    "light",
    "semantic",
    "near_number",
    "near_unit",
    "near_negation",
    "near_component",
    "unrelated",
]


def load(name: str) -> list[dict]:
    """Rows of a JSONL file under tests/data."""
    with open(DATA / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def merged(name: str, a: str, b: str, root: Path) -> bool:
    """Share ``a`` and ``b`` (two agents) into a fresh swarm at ``root`` configured with
    embedder ``name``; one fact after the synthesizer's pass?"""
    with Swarm.open(root, config=SynthConfig(embedder=name)) as sw:
        sw.agent("alpha").share(a, category="finding")
        sw.agent("beta").share(b, category="finding")
        sw.synthesize()
        return len(sw.state().facts) == 1


def outcome(name: str, a: str, b: str, root: Path) -> str:
    """Share ``a`` and ``b`` (two agents) into a fresh swarm with embedder ``name`` and
    run one synthesizer pass: "merged" (one fact), "contested" (two facts, each naming
    the other in ``contested_with``) or "apart"."""
    with Swarm.open(root, config=SynthConfig(embedder=name)) as sw:
        sw.agent("alpha").share(a, category="finding")
        sw.agent("beta").share(b, category="finding")
        sw.synthesize()
        facts = list(sw.state().facts.values())
    if len(facts) == 1:
        return "merged"
    x, y = facts
    return "contested" if y.id in x.contested_with and x.id in y.contested_with else "apart"


def outcomes(name: str, pairs: list[dict]) -> list[str]:
    """The outcome of each pair, each in its own fresh swarm."""
    with tempfile.TemporaryDirectory(prefix="quality-") as tmp:
        return [outcome(name, p["a"], p["b"], Path(tmp) / f"s{i}") for i, p in enumerate(pairs)]


def merge_outcomes(name: str, pairs: list[dict]) -> list[bool]:
    """Whether each pair merged, each in its own fresh swarm."""
    return [o == "merged" for o in outcomes(name, pairs)]


TEST_SET = "quality_testset.jsonl"
SUBJECT_SET = "quality_subject_pairs.jsonl"  # merge-rule round 2: two holders of one thing
SET3 = "quality_testset3.jsonl"  # merge-rule round 3: written first, then looked at
SET4 = "quality_testset4.jsonl"  # session 10: a probe of unseen sentences, then tuned on
SET5 = "quality_testset5.jsonl"  # session 10: written before its changes, not tuned on
SET6 = "quality_testset6.jsonl"  # session 10: hedges, written before the hedge change
SET7 = "quality_testset7.jsonl"  # session 10: paths, written before the path change
CONTRADICTION_LEVELS = ("near_number", "near_unit", "near_negation", "near_polarity")


def rule_summary(pairs: list[dict], got: list[str], test: bool) -> dict[str, str]:
    """False merges, contradictions flagged, wrongly flagged, and merges that should be."""

    def frac(sel: list[int], want: str) -> str:
        n = sum(got[i] == want for i in sel)
        return f"{n}/{len(sel)} ({100 * n / len(sel):.0f}%)" if sel else "-"

    idx = range(len(pairs))
    if test:
        contra = [i for i in idx if pairs[i]["level"] == "contradiction"]
        other = [i for i in idx if pairs[i]["level"] == "different"]
        syn = [i for i in idx if pairs[i]["level"] in ("synonym", "paraphrase")]
        levels = {
            f"{lv} merged": frac([i for i in idx if pairs[i]["level"] == lv], "merged")
            for lv in ("rewording", "synonym", "paraphrase")
        }
    else:
        levels = {
            f"{lv} merged": frac([i for i in idx if pairs[i]["level"] == lv], "merged")
            for lv in ("trivial", "light", "semantic")
        }
        contra = [i for i in idx if pairs[i]["level"] in CONTRADICTION_LEVELS]
        other = [i for i in idx if pairs[i]["level"] in ("near_component", "unrelated")]
        syn = [i for i in idx if pairs[i]["level"] == "semantic"]
    keep = [i for i in idx if not pairs[i]["merge"]]
    should = [i for i in idx if pairs[i]["merge"]]
    return {
        "false merges": frac(keep, "merged"),
        "contradictions flagged": frac(contra, "contested"),
        "different things flagged": frac(other, "contested"),
        "semantic/synonym merged": frac(syn, "merged"),
        "all should-merge merged": frac(should, "merged"),
        "should-merge flagged as rivals": frac(should, "contested"),
        **levels,
    }


def rule_table(names: list[str], write: bool = True) -> None:
    """The held-out test set and the development sets, both embedders (marker ``quality_rule``)."""
    sets = [
        (f"test set ({TEST_SET}), never tuned on", load(TEST_SET), True),
        (f"subject set ({SUBJECT_SET}), never tuned on", load(SUBJECT_SET), True),
        (
            f"set 3 ({SET3}), written before round 3's later changes, then tuned on",
            load(SET3),
            True,
        ),
        (f"set 4 ({SET4}), a probe written in session 10, then tuned on", load(SET4), True),
        (f"set 5 ({SET5}), written before session 10's changes, never tuned on", load(SET5), True),
        (f"set 6 ({SET6}), written before the hedge change", load(SET6), True),
        (f"set 7 ({SET7}), written before the path change, then looked at", load(SET7), True),
        (
            "development sets (quality_pairs*.jsonl), tuned on",
            load("quality_pairs.jsonl") + [r for f in HELD_OUT for r in load(f)],
            False,
        ),
    ]
    results = {}
    for label, rows, test in sets:
        for name in names:
            results[(label, name)] = rule_summary(rows, outcomes(name, rows), test)
            print(label, name, json.dumps(results[(label, name)]))
    table = [
        [label, k, *(results[(label, n)][k] for n in names)]
        for label, _, _ in sets
        for k in results[(label, names[0])]
        if results[(label, names[0])][k] != "-"
    ]
    notes = (
        "Each pair shared by two agents into a fresh swarm, one synthesizer pass: merged "
        "(one fact), contested (two facts naming each other in contested_with) or apart. "
        f"The test set ({len(sets[0][1])} pairs: rewording, synonym, paraphrase, contradiction, "
        "different-thing levels, new topics and vocabulary) was written and committed before "
        "the merge rule (synthesizer/merge/rule.py) was, and the rule was never run on it "
        "while being developed; the development sets are the three older labelled sets, "
        "which the rule was developed against (their near_number/unit/negation/polarity "
        "levels count as contradictions, near_component and unrelated as different "
        "things, semantic as paraphrases). No judge configured (the default). Baseline: "
        "main before the rule (synthesizer/worker/guards.py's word lists), same test set, "
        "same pass, run "
        "before the rule existed: hash 0/80 false merges, no contradiction flagged (free "
        "text was never contested), 0/48 synonym/paraphrase merged; minilm 23/80 false "
        "merges (12 of 45 contradictions and 11 of 35 different things merged into one "
        "fact), 36/48 synonym/paraphrase merged. The subject set (32 pairs whose whole "
        "subject differs: 16 two-holders-of-one-thing contradictions, 16 pairs that can "
        "both be true) was written and committed before the two-holders criterion and "
        "not tuned on; before it, no pair of it was flagged under either embedder. "
        "The merge-rule work round 2 (branch merge-rule2) looked at the test set's totals three "
        "times (before its changes, after the rewording changes, after the subject "
        "criterion), never at its pairs. Round 3 added one criterion (two parts of one "
        "whole, by WordNet's meronymy: 'weekdays' / 'weekends', parts of a week), checked it "
        "on the development sets (unchanged) and then looked at the test set's totals once. "
        "Set 3 (90 pairs, new domains) was then written and committed, and its first "
        "figures taken before any further change: hash 0/45 false merges, 24/25 "
        "contradictions flagged, 0/20 different things flagged, 1/35 synonym/paraphrase "
        "merged; minilm 1/45 false merges (approach / recede), 22/25, 0/20, 19/35 (54%). "
        "Three changes followed, made on its pairs and the development sets: verbs whose "
        "hypernyms share only a name are not a kind of each other; one word for one word "
        "the lexicon cannot relate is another value whatever the embedder; one word for a "
        "phrase the embedder reads alike is unsure. The test set's totals were looked at "
        "once more after them. Session 10 wrote set 4 (60 contradictions in new wording: "
        "swapped roles, antonym verbs, quantities) and set 5 (50 pairs to keep apart, 20 "
        "to merge, other domains) before changing anything; set 4's first run found false "
        "merges (hash 1/60, minilm 3/60: 'Service A calls service B' / 'Service B calls "
        "service A', the capital A read as the article; 'fixes' / 'introduces' and "
        "'author' / 'reviewer', a word for a broader one judged alike in its frame) and "
        "set 5's none (0/50 both; minilm 11/20 merged). Three changes followed: a capital "
        "letter inside a sentence is a label; a broader or narrower word is a rewording "
        "only when the embedder reads the two words alike, never their frame; a passive "
        "beside an active is read agent first (an active and a passive with the nouns in "
        "one order swap the roles, and merged before). Set 5 was run after the first two "
        "and after the third: its figures did not move. A probe of hedges then found "
        "'The team seldom deploys on Fridays' / 'The team deploys on Fridays', 'may' / "
        "'must', 'all' / 'some', 'almost full' / 'full' merged: the modal verbs, "
        "quantifiers and degree and frequency adverbs were dropped as function words or "
        "added as adverbs. Set 6 (35 pairs) was written next, before any change: hash and "
        "minilm 14/22 false merges, 9/13 merged. The change (wordclass.HEDGES: the "
        "closed classes kept as tokens by class, one added or swapped is another claim, "
        "two of one scale leaning opposite ways contradict) gave 0/22 and 12/13; its one "
        "unmerged pair showed 'every' not dropped as 'all' and 'each' are, which the "
        "change meant and which was then made (13/13): so set 6 was looked at once "
        "before that last step. A probe of prepositions then found 'The flight goes from "
        "Paris to Rome' / '... from Rome to Paris' and 'The train from Oslo' / 'The train "
        "to Oslo' merged ('from' and 'to' were dropped as function words). Set 7 (24 "
        "pairs) was written next: hash and minilm 13/16 false merges. The change "
        "(wordclass.DIRECTIONS: a word after 'from' or 'to' carries that end of a path in "
        "its key; the same words with the ends swapped contradict; a verb's own "
        "preposition, after a differing word, is left to that word) was made looking at "
        "set 7's pairs as well as the others: 0/16 false merges, 12/12 contradictions "
        "flagged; the other sets' verdicts did not change but for one more contradiction "
        "flagged in set 4. Last, spans of as many words are read word for word (each pair "
        "that is not one word or synonyms judged alone), so a paraphrase of a span needs "
        "spans of different lengths: no verdict above moved, and under an embedder that "
        "calls every span the same (cosine 1.0) the keep-apart pairs of all these sets "
        "that merge fell to 3, each a word "
        "WordNet files as a broader or narrower one ('fixes' / 'introduces'). Later probes "
        "(tests/data/quality_probes10.jsonl, a regression file outside this table) added "
        "'not all' as 'some ... not', 'than' as the other side of a comparison, clauses of "
        "time or condition ('when', 'while', 'if', 'unless', 'until', 'once the') that "
        "keep their words, and a block moved past a negation: no verdict in this table "
        "moved. Under the embedder that calls every span the same, of all 575 keep-apart "
        "pairs in tests/data/quality_*.jsonl (the probes included) the code before "
        "session 10 merges 49, this code 4."
    )
    header = ["set", "figure", *(f"{n}" for n in names)]
    if write:
        print(
            write_table(
                "quality_rule",
                "Merge rule: held-out test set and development sets",
                header,
                table,
                notes,
            )
        )


def recall_at(name: str, pairs: list[dict], queries: list[dict], k: int = 5) -> float:
    """Share of queries whose expected statement is among the top ``k`` search hits."""
    statements = list(dict.fromkeys(q["expected"] for q in queries))
    distractors = [p["b"] for p in pairs if p["level"].startswith("near_")]
    with (
        tempfile.TemporaryDirectory(prefix="quality-") as tmp,
        Swarm.open(Path(tmp) / "s", config=SynthConfig(embedder=name)) as sw,
    ):
        for i, text in enumerate(statements + distractors):
            sw.agent(f"agent{i % 7}").share(text, category="finding")
        sw.synthesize()
        found = 0
        for q in queries:
            hits = sw.search(q["query"], limit=k)
            found += any(h.fact.content == q["expected"] for h in hits)
    return found / len(queries)


def tally(pairs: list[dict], outcome: list[bool]) -> tuple[dict[str, list[int]], int, int, int]:
    """Merged/total per level, then true positives, false positives, false negatives."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    tp = fp = fn = 0
    for p, m in zip(pairs, outcome, strict=True):
        per[p["level"]][0] += m
        per[p["level"]][1] += 1
        tp += m and p["merge"]
        fp += m and not p["merge"]
        fn += (not m) and p["merge"]
    return per, tp, fp, fn


def main() -> None:
    """Run the benchmark and write its table (marker ``quality``) into docs/benchmarks.md."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--embedders", default="hash,minilm")
    ap.add_argument("--no-write", action="store_true", help="print only")
    ap.add_argument("--rule-only", action="store_true", help="only the merge-rule table")
    args = ap.parse_args()
    if args.rule_only:
        rule_table(args.embedders.split(","), write=not args.no_write)
        return
    pairs, queries = load("quality_pairs.jsonl"), load("quality_queries.jsonl")
    names = args.embedders.split(",")
    results: dict[str, dict[str, object]] = {}
    for name in names:
        emb = embedder_for(name)
        texts = [p["a"] for p in pairs] + [p["b"] for p in pairs]
        emb.embed(texts[:8])  # load the model outside the timing
        t0 = time.perf_counter()
        emb.embed(texts)
        rate = len(texts) / (time.perf_counter() - t0)
        per, tp, fp, fn = tally(pairs, merge_outcomes(name, pairs))
        extra = []
        for f in HELD_OUT:
            rows_f = load(f)
            _, htp, hfp, hfn = tally(rows_f, merge_outcomes(name, rows_f))
            negatives = sum(not p["merge"] for p in rows_f)
            extra.append(f"{hfp}/{negatives} false, {htp}/{htp + hfn} true")
        results[name] = {
            "extra": extra,
            "per": per,
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + fn) if tp + fn else 1.0,
            "r5": recall_at(name, pairs, queries),
            "rate": rate,
            "near": near_duplicate_of(emb),
        }
        print(name, json.dumps({k: v for k, v in results[name].items() if k != "per"}))
        print("  ", {lv: f"{a}/{b}" for lv, (a, b) in per.items()})
    rows = []
    for lv in LEVELS:
        should = "yes" if lv in ("trivial", "light", "semantic") else "no"
        cells = []
        for name in names:
            a, b = results[name]["per"][lv]  # type: ignore[index]
            cells.append(f"{a}/{b} ({100 * a / b:.0f}%)")
        rows.append([lv, should, *cells])
    for label, key, fmt in (
        ("precision of merging", "precision", "{:.3f}"),
        ("recall of merging", "recall", "{:.3f}"),
        (f"search recall@5 ({len(queries)} queries)", "r5", "{:.3f}"),
        ("near-duplicate threshold", "near", "{:g}"),
        ("embedding rate, texts/s (shared machine)", "rate", "{:,.0f}"),
    ):
        rows.append([label, "", *(fmt.format(results[n][key]) for n in names)])
    for i, f in enumerate(HELD_OUT):
        size = len(load(f))
        label = f"later set {i + 1} ({size} pairs): merges false / true"
        rows.append([label, "", *(results[n]["extra"][i] for n in names)])  # type: ignore[index]
    notes = (
        f"{len(pairs)} labelled pairs (tests/data/quality_pairs.jsonl), each shared by two "
        "agents into a fresh swarm and decided by one synthesizer pass (merged = one fact). "
        "The near-miss guards (replaced in the merge-rule work by the merge rule, "
        "synthesizer/merge/rule.py) were developed against this set, and so was the rule. "
        "Two later sets "
        "(tests/data/quality_pairs_heldout*.jsonl) were written afterwards to check "
        "generalisation; each exposed misses that were then fixed, so neither is held out "
        "any more. On first contact, with minilm, set 1 had 1 of 30 non-merging pairs "
        "merged (a component swap after a preposition: 'sorting by price' / 'by rating') "
        "and 6/10 semantic paraphrases merged; set 2 had 2 of 24 merged (component swaps "
        "after a determiner) and 7/8 trivial rewrites ('one hour' / '1 hour'). "
        "Recall@5: each query's expected statement among the top 5 of `search` over "
        "the 40 statements plus their 80 near-miss variants."
    )
    if not args.no_write:
        header = ["level", "should merge", *(f"{n}: merged" for n in names)]
        print(write_table("quality", "Merge quality per embedder", header, rows, notes))
        rule_table(names)


if __name__ == "__main__":
    main()
