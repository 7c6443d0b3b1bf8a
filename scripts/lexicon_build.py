"""Build the compact WordNet 3.0 copy the merge rule ships with (``synthesizer/merge/wordnet``).

Why: the rule's verdicts depend on the lexicon, so it ships inside the package instead of
being read from whatever a machine has installed. The copy keeps WordNet's own file
format (``index.*``, ``data.*``, ``*.exc``), as ``synthesizer/merge/lexicon.py`` reads it,
and only what that reader and ``wordrel`` use:

- data lines: offset, lexicographer file, synset type, words, and the pointers the rule
  follows (``KEEP``), each between synsets (source/target word fields zeroed, duplicates
  dropped); verb frames dropped; the gloss dropped but for adjectives, which keep its first
  clause (``wordrel`` reads it). Byte offsets are rewritten to the new files, in the index
  files and in every pointer, as 8 digits like WordNet's (keys stay "pos:offset").
- index lines: lemma, part of speech, synset count, no pointer symbols, sense counts and
  the synset offsets in WordNet's sense order.
- licence headers, ``cntlist*``, ``sents.vrb``, ``sentidx.vrb`` and other files dropped;
  WordNet's licence goes into ``LICENSE``; ``MANIFEST.json`` lists each file's sha256.

Deterministic: the same source folder gives byte-identical output.

    python scripts/lexicon_build.py [--source /usr/share/wordnet] [--out synthesizer/merge/wordnet]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "synthesizer" / "merge" / "wordnet"
FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
KEEP = frozenset({"!", "@", "@i", "&", "^", "#p", "#m", "+", "\\", "="})
"""Pointer symbols read by the rule: antonym, hypernym (and instance), similar to, also
see, part and member holonym, derivation, pertainym, attribute."""
FORMAT = "swarmlog-wordnet-1"

LICENSE = """\
WordNet Release 3.0

This software and database is being provided to you, the LICENSEE, by
Princeton University under the following license.  By obtaining, using
and/or copying this software and database, you agree that you have
read, understood, and will comply with these terms and conditions.:

Permission to use, copy, modify and distribute this software and
database and its documentation for any purpose and without fee or
royalty is hereby granted, provided that you agree to comply with
the following copyright notice and statements, including the disclaimer,
and that the same appear on ALL copies of the software, database and
documentation, including modifications that you make for internal
use or for distribution.

WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.

THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR
IMPLIED.  BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON
UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT-
ABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE
OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT
INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR
OTHER RIGHTS.

The name of Princeton University or Princeton may not be used in
advertising or publicity pertaining to distribution of the software
and/or database.  Title to copyright in this software, database and
any associated documentation shall at all times remain with
Princeton University and LICENSEE agrees to preserve same.

---
This folder is a reduced copy of the WordNet 3.0 database files, made by
scripts/lexicon_build.py in the swarmlog repository: glosses (but for the
first clause of adjective glosses), verb frames, the sense index, sentence
frames and most pointer kinds are left out, and byte offsets are renumbered.
"""


def _data_lines(path: Path) -> list[tuple[str, list[str], str]]:
    """(old offset, head fields, gloss) of each synset line, licence header skipped."""
    out = []
    for raw in path.read_bytes().decode("utf-8").split("\n"):
        if not raw or raw.startswith(" "):
            continue
        head, _, gloss = raw.partition(" | ")
        parts = head.split()
        out.append((parts[0], parts, gloss))
    return out


def _compact(parts: list[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """The kept head fields (offset left as is) and kept pointers (symbol, offset, pos)."""
    n_words = int(parts[3], 16)
    words = parts[4 : 4 + 2 * n_words]
    i = 4 + 2 * n_words
    n_ptr = int(parts[i])
    ptrs: list[tuple[str, str, str]] = []
    for k in range(n_ptr):
        sym, off, p, _ = parts[i + 1 + 4 * k : i + 5 + 4 * k]
        if sym in KEEP and (sym, off, p) not in ptrs:
            ptrs.append((sym, off, p))
    return parts[:4] + words, ptrs


def build(source: Path, out: Path) -> dict[str, object]:
    """Write the compact copy of ``source`` into ``out``; returns the manifest."""
    head = (source / "data.noun").read_bytes()[:2000].decode("utf-8", "replace")
    if "WordNet 3.0" not in head:
        raise SystemExit(f"{source}/data.noun is not WordNet 3.0's")
    parsed = {p: _data_lines(source / f"data.{name}") for p, name in FILES.items()}
    # pass 1: every line's new length is known before any offset (8 digits each)
    lines: dict[str, list[tuple[str, list[str], list[tuple[str, str, str]], str]]] = {}
    new_off: dict[tuple[str, str], str] = {}
    for p, rows in parsed.items():
        at = 0
        lines[p] = []
        for old, parts, gloss in rows:
            fields, ptrs = _compact(parts)
            clause = gloss.split(";")[0].strip() if p == "a" else ""
            lines[p].append((old, fields, ptrs, clause))
            new_off[(p, old)] = f"{at:08d}"
            at += len(_line("00000000", fields, ptrs, clause, {}).encode("utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.iterdir():
        if stale.is_file():
            stale.unlink()
    for p, name in FILES.items():
        text = "".join(
            _line(new_off[(p, old)], fields, ptrs, clause, new_off)
            for old, fields, ptrs, clause in lines[p]
        )
        (out / f"data.{name}").write_bytes(text.encode("utf-8"))
        (out / f"index.{name}").write_bytes(_index(source / f"index.{name}", p, new_off))
        exc = source / f"{name}.exc"
        (out / f"{name}.exc").write_bytes(exc.read_bytes() if exc.is_file() else b"")
    (out / "LICENSE").write_bytes(LICENSE.encode("utf-8"))
    files = sorted(f.name for f in out.iterdir() if f.name != "MANIFEST.json")
    manifest: dict[str, object] = {
        "name": "WordNet",
        "version": "3.0",
        "format": FORMAT,
        "builder": "scripts/lexicon_build.py",
        "files": {
            f: {
                "sha256": hashlib.sha256((out / f).read_bytes()).hexdigest(),
                "bytes": (out / f).stat().st_size,
            }
            for f in files
        },
    }
    (out / "MANIFEST.json").write_text(
        json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return manifest


def _line(
    off: str,
    fields: list[str],
    ptrs: list[tuple[str, str, str]],
    clause: str,
    new_off: dict[tuple[str, str], str],
) -> str:
    """One data line; pointer offsets mapped through ``new_off`` (placeholders while it
    is empty: pass 1 only measures lengths)."""
    ptr_text = [
        f"{sym} {new_off[('a' if p == 's' else p, o)] if new_off else '00000000'} {p} 0000"
        for sym, o, p in ptrs
    ]
    body = " ".join([off, *fields[1:], f"{len(ptrs):03d}", *ptr_text])
    return body + (f" | {clause}" if clause else "") + "\n"


def _index(path: Path, pos: str, new_off: dict[tuple[str, str], str]) -> bytes:
    """The index file with pointer symbols dropped and offsets mapped, order kept."""
    out = []
    for line in path.read_bytes().decode("utf-8").split("\n"):
        if not line or line.startswith(" "):
            continue
        parts = line.split()
        n_syn, n_ptr = int(parts[2]), int(parts[3])
        sense, tagged = parts[4 + n_ptr : 6 + n_ptr]
        offs = [new_off[(pos, o)] for o in parts[6 + n_ptr : 6 + n_ptr + n_syn]]
        out.append(" ".join([parts[0], parts[1], str(n_syn), "0", sense, tagged, *offs]) + "\n")
    return "".join(out).encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    """Build and print the sizes."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=Path("/usr/share/wordnet"))
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    manifest = build(args.source, args.out)
    files = manifest["files"]
    assert isinstance(files, dict)
    total = sum(int(v["bytes"]) for v in files.values())
    print(f"{len(files)} files, {total:,} bytes in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
