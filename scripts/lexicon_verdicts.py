"""The merge rule's verdicts on every labelled pair, to check that a lexicon gives the same.

Why: the rule's verdicts depend on the WordNet copy it reads; the copy shipped in the
package (``synthesizer/merge/wordnet``) must decide every labelled pair as WordNet 3.0's
own files did. ``--write`` records the verdicts of the lexicon in use (with each pair's
text) into ``tests/data/lexicon_verdicts.json``; ``--check FILE`` recomputes them for the
recorded pairs and exits 1 on any difference (the wheel test runs it inside a fresh
install). When the rule changes on purpose, rerun ``--write`` and commit the file with
the change (``tests/data/lexicon_answers.json`` keeps pinning the lexicon meanwhile).

``--answers FILE`` records what the lexicon answered to every question the rule asked on
those pairs (base forms per part of speech, ``wordrel.relation``, ``holding_verb``): a
check of the lexicon alone that stays valid when the rule changes. ``--folder DIR`` reads
WordNet from ``DIR`` unverified (WordNet 3.0's own files, to record the reference).

    python scripts/lexicon_verdicts.py --folder /usr/share/wordnet \
        --write tests/data/lexicon_verdicts.json --answers tests/data/lexicon_answers.json
    python scripts/lexicon_verdicts.py --check tests/data/lexicon_verdicts.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"


def labelled_pairs(data: Path = DATA) -> list[tuple[str, int, str, str]]:
    """(file, line, a, b) for every row with "a" and "b" in ``quality_*.jsonl``."""
    out = []
    for path in sorted(data.glob("quality_*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line) if line.strip() else {}
            if isinstance(row.get("a"), str) and isinstance(row.get("b"), str):
                out.append((path.name, n, row["a"], row["b"]))
    return out


def _hash_sim() -> Callable[[str, str], float]:
    """The hashing embedder's cosine of two spans (deterministic, no model)."""
    from synthesizer.search.embed import embedder_for

    emb = embedder_for("hash")
    cache: dict[str, object] = {}

    def sim(x: str, y: str) -> float:
        for t in (x, y):
            if t not in cache:
                cache[t] = emb.embed([t])[0]
        return float(cache[x] @ cache[y])  # type: ignore[operator]

    return sim


def verdicts(pairs: list[tuple[str, str, str]]) -> list[dict[str, object]]:
    """Per (where, a, b): the plain verdict and the one with the hashing embedder's spans."""
    from synthesizer.merge.rule import compare

    sim = _hash_sim()
    out: list[dict[str, object]] = []
    for at, a, b in pairs:
        plain, hashed = compare(a, b), compare(a, b, sim)
        out.append(
            {
                "at": at,
                "a": a,
                "b": b,
                "plain": [plain.kind, plain.reason],
                "hash": [hashed.kind, hashed.reason],
            }
        )
    return out


def pairs_of(data: Path = DATA) -> list[tuple[str, str, str]]:
    """(where, a, b) of every labelled pair in ``data``."""
    return [(f"{name}:{n}", a, b) for name, n, a, b in labelled_pairs(data)]


def check(want: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, object]]]:
    """The recorded verdicts the lexicon in use does not reproduce, with what it gives."""
    got = verdicts([(str(w["at"]), str(w["a"]), str(w["b"])) for w in want])
    return [(w, g) for w, g in zip(want, got, strict=True) if w != g]


def use_folder(root: Path) -> None:
    """Make every merge module read WordNet from ``root`` as is (no manifest check)."""
    import functools

    from synthesizer.merge import lexicon as lexmod

    lex = lexmod.Lexicon(root, f"unverified:{root}")
    fixed = functools.lru_cache(maxsize=1)(lambda: lex)
    _patch("lexicon", lexmod.lexicon, fixed)


def _patch(name: str, old: object, new: object) -> None:
    """Replace ``old`` by ``new`` wherever a loaded ``synthesizer`` module holds it as ``name``."""
    import synthesizer.merge.rule  # noqa: F401  (every merge module loaded)

    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith("synthesizer.") and getattr(mod, name, None) is old:
            setattr(mod, name, new)


def record_answers(data: Path = DATA) -> dict[str, Any]:
    """What the lexicon answers to each question the rule asks on the labelled pairs, in
    words (never synset offsets, which differ between copies)."""
    from synthesizer.merge import wordrel
    from synthesizer.merge.lexicon import POS, lexicon

    _clear_caches()
    lex = lexicon()
    if lex is None:
        raise SystemExit("no lexicon")
    relation, holding_verb = wordrel.relation, wordrel.holding_verb
    words: set[str] = set()
    rel: dict[tuple[str, str], str] = {}
    held: dict[str, bool] = {}
    bases = lex.bases

    def rec_bases(word: str, pos: str) -> tuple[str, ...]:
        words.add(word)
        return bases(word, pos)

    def rec_relation(x: str, y: str) -> str:
        rel[(x, y)] = got = relation(x, y)
        return got

    def rec_holding(v: str) -> bool:
        held[v] = got = holding_verb(v)
        return got

    lex.bases = rec_bases  # type: ignore[method-assign]
    _patch("relation", relation, rec_relation)
    _patch("holding_verb", holding_verb, rec_holding)
    try:
        verdicts(pairs_of(data))
    finally:
        lex.bases = bases  # type: ignore[method-assign]
        _patch("relation", rec_relation, relation)
        _patch("holding_verb", rec_holding, holding_verb)
    return {
        "bases": {w: {p: list(lex.bases(w, p)) for p in POS} for w in sorted(words)},
        "relation": sorted([x, y, r] for (x, y), r in rel.items()),
        "holding_verb": dict(sorted(held.items())),
    }


def answers_now(recorded: dict[str, Any]) -> dict[str, Any]:
    """The lexicon in use, asked the questions ``recorded`` holds."""
    from synthesizer.merge import wordrel
    from synthesizer.merge.lexicon import POS, lexicon

    lex = lexicon()
    return {
        "bases": {
            w: {p: list(lex.bases(w, p)) if lex else [] for p in POS} for w in recorded["bases"]
        },
        "relation": [[x, y, wordrel.relation(x, y)] for x, y, _ in recorded["relation"]],
        "holding_verb": {v: wordrel.holding_verb(v) for v in recorded["holding_verb"]},
    }


def _clear_caches() -> None:
    """Empty every ``functools`` cache of the merge modules (the lexicon's included)."""
    import synthesizer.merge.rule  # noqa: F401

    for mod_name, mod in list(sys.modules.items()):
        if mod_name.startswith("synthesizer.merge"):
            for value in list(vars(mod).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()


def rule_sources() -> str:
    """16 hex of a sha256 over the merge rule's sources (``synthesizer/merge/*.py`` but the
    lexicon reader): tells a rule change from a lexicon change when verdicts move."""
    import hashlib

    import synthesizer.merge as merge

    h = hashlib.sha256()
    for path in sorted(Path(merge.__file__).parent.glob("*.py")):
        if path.name != "lexicon.py":
            h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def lexicon_root() -> str:
    """Where the lexicon in use reads from ("" when there is none)."""
    from synthesizer.merge.lexicon import lexicon

    lex = lexicon()
    return str(lex.root) if lex is not None else ""


def main(argv: list[str] | None = None) -> int:
    """Write or check the verdict file; prints one summary line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", type=Path)
    ap.add_argument("--check", type=Path)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--answers", type=Path)
    ap.add_argument("--folder", type=Path)
    args = ap.parse_args(argv)
    if args.folder:
        use_folder(args.folder)
    if args.answers:
        args.answers.write_text(
            json.dumps(record_answers(args.data), sort_keys=True) + "\n", encoding="utf-8"
        )
        print(f"answers written to {args.answers} (lexicon at {lexicon_root()})")
    if args.write:
        got = verdicts(pairs_of(args.data))
        args.write.write_text(
            json.dumps({"rule_sources": rule_sources(), "pairs": got}, indent=0, sort_keys=True)
            + "\n",
            encoding="utf-8",
        )
        print(f"{len(got)} pairs written to {args.write} (lexicon at {lexicon_root()})")
        return 0
    if args.check:
        want = json.loads(args.check.read_text(encoding="utf-8"))["pairs"]
        diff = check(want)
        for w, g in diff[:20]:
            print("differs:", w, g)
        print(f"{len(want) - len(diff)} of {len(want)} pairs equal (lexicon at {lexicon_root()})")
        return 1 if diff else 0
    if not args.answers:
        ap.error("give --write, --check or --answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
