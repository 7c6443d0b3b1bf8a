"""Write the labelled retrieval set (``retrieval_set.jsonl``) the hybrid recall bench reads.

    .venv/bin/python scripts/bench/make_retrieval_set.py

Facts a multi-team swarm would share (platform, data, security, payments, infra, ml,
support), many with look-alike identifiers: neighbouring error codes, CVEs, sibling
paths, ticket ids, versions, hosts and config keys, each family worded alike so that a
dense embedding ranks its members close together. Queries of four kinds name their
relevant facts by key: ``identifier`` (the identifier, maybe with a word), ``keyword``
(a few words of the fact, no identifier), ``question`` (a natural question) and
``paraphrase`` (the fact in other words). Lines: ``{"kind": "fact", "key", "team",
"text"}`` then ``{"kind": "query", "type", "text", "relevant": [keys]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from _retrieval_facts import FACTS, QUERIES

OUT = Path(__file__).resolve().parent / "retrieval_set.jsonl"


def main() -> None:
    """Check the set (unique keys, queries naming known facts) and write it."""
    keys = [k for k, _, _ in FACTS]
    if len(set(keys)) != len(keys):
        dup = sorted({k for k in keys if keys.count(k) > 1})
        raise SystemExit(f"duplicate fact keys: {dup}")
    known = set(keys)
    for kind, text, rel in QUERIES:
        missing = [k for k in rel if k not in known]
        if missing:
            raise SystemExit(f"query {text!r} names unknown facts {missing}")
    with OUT.open("w", encoding="utf-8") as f:
        for key, team, text in FACTS:
            f.write(json.dumps({"kind": "fact", "key": key, "team": team, "text": text}) + "\n")
        for kind, text, rel in QUERIES:
            row = {"kind": "query", "type": kind, "text": text, "relevant": list(rel)}
            f.write(json.dumps(row) + "\n")
    kinds = {k: sum(1 for q in QUERIES if q[0] == k) for k in dict.fromkeys(q[0] for q in QUERIES)}
    print(f"{len(FACTS)} facts, {len(QUERIES)} queries {kinds} -> {OUT}")


if __name__ == "__main__":
    main()
