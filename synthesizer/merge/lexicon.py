"""An offline English lexicon: WordNet 3.0's database files, shipped with the package.

The merge rule (``rule.py``) asks what two differing words are to each other: the same
word inflected, synonyms (they share a synset), antonyms (WordNet's ``!`` pointer, also
through a satellite adjective's head or one hypernym step: "reduce" is a kind of
"decrease", the antonym of "increase"), one a kind of the other (hypernym chain), or
neither. The data is a compact copy of WordNet 3.0 in its own file format
(``synthesizer/merge/wordnet``, built by ``scripts/lexicon_build.py``: only what the rule
reads), so every machine gives the same verdicts. ``SWARMLOG_WORDNET`` may name another
folder built the same way. No network, no model.

Before first use (once per process) the files are checked against the folder's
``MANIFEST.json`` digests: a damaged, cut, emptied or foreign folder is refused with one
warning and the shipped copy used; a damaged shipped copy gives no lexicon, and the rule
degrades to the safe side (no two different words are synonyms: fewer merges, none
wrong). ``lexicon_identity()`` names the copy in use, for the log. The reader is small on
purpose: a lemma is found by binary search in its sorted index file, as WordNet's own
library does, synsets are read from the data files by byte offset (both mapped with
mmap) and both are cached; bad data reads as an unknown word, never an exception.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import mmap
import os
import threading
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "SHIPPED",
    "Lexicon",
    "Synset",
    "check_folder",
    "lexicon",
    "lexicon_identity",
    "wordnet_dir",
]

log = logging.getLogger(__name__)

_UNSEEN = object()

POS = ("n", "v", "a", "r")
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
SHIPPED = Path(__file__).resolve().parent / "wordnet"
"""The compact WordNet 3.0 copy inside the package (``scripts/lexicon_build.py``)."""
_FORMAT = "swarmlog-wordnet-1"
_REQUIRED = tuple(f for n in _FILES.values() for f in (f"index.{n}", f"data.{n}", f"{n}.exc"))
# WordNet's own detachment rules (morphy): suffix -> base ending, per part of speech
_DETACH = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""),
          ("ing", "e"), ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}  # fmt: skip


class Synset(NamedTuple):
    """One synset: its key ("n:01234567"), lemmas, and pointers as (symbol, key)."""

    key: str
    pos: str  # n v a s r
    lemmas: tuple[str, ...]
    pointers: tuple[tuple[str, str], ...]
    gloss: str = ""


def wordnet_dir() -> Path | None:
    """The folder to read: ``SWARMLOG_WORDNET`` when set, else the shipped copy (None when
    neither is there). ``lexicon()`` verifies it before use."""
    env = os.environ.get("SWARMLOG_WORDNET")
    if env:
        return Path(env).expanduser()
    return SHIPPED if SHIPPED.is_dir() else None


def check_folder(root: Path) -> str | None:
    """Why ``root`` is not a verified copy (None when every file its ``MANIFEST.json``
    lists has the listed size and sha256, and the manifest lists every file read)."""
    try:
        manifest = json.loads((root / "MANIFEST.json").read_bytes())
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            return "not a folder built by scripts/lexicon_build.py (MANIFEST.json's format)"
        files = manifest["files"]
        for name in _REQUIRED:
            if name not in files:
                return f"MANIFEST.json does not list {name}"
        for name, want in sorted(files.items()):
            path = root / name
            if "/" in name or "\\" in name or name.startswith("."):
                return f"MANIFEST.json names {name!r}"
            if path.stat().st_size != int(want["bytes"]):
                return f"{name} has {path.stat().st_size} bytes, not {want['bytes']}"
            if hashlib.sha256(path.read_bytes()).hexdigest() != want["sha256"]:
                return f"{name} does not match its sha256"
    except FileNotFoundError as e:
        return f"{Path(e.filename or '?').name} is missing"
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return f"unreadable ({type(e).__name__}: {e})"
    return None


def _identity(root: Path) -> str:
    """The identity of a verified folder: "wordnet-<version>:<16 hex of its manifest's sha256>"."""
    raw = (root / "MANIFEST.json").read_bytes()
    version = json.loads(raw).get("version", "?")
    return f"wordnet-{version}:{hashlib.sha256(raw).hexdigest()[:16]}"


class Lexicon:
    """WordNet lookups (see module docstring). Thread-safe after construction."""

    def __init__(self, root: Path, identity: str = "") -> None:
        """Open the database at ``root`` (index files load on first use)."""
        self.root = root
        self.identity = identity
        self._found: dict[str, dict[str, object]] = {p: {} for p in POS}
        self._exc: dict[str, dict[str, tuple[str, ...]]] = {}
        self._data: dict[tuple[str, str], mmap.mmap | bytes] = {}
        self._lock = threading.Lock()
        self.synset = functools.lru_cache(maxsize=1 << 16)(self._synset)
        self.bases = functools.lru_cache(maxsize=1 << 16)(self._bases)  # type: ignore[method-assign]

    # ------------------------------------------------------------------ files

    def _offsets(self, pos: str, word: str) -> tuple[str, ...] | None:
        """The synset keys of lemma ``word`` in ``index.<pos>``, or None when it is not one.

        WordNet's own lookup: a binary search of the sorted index file (mapped), so a
        process that compares a few statements reads a few pages, not 155k lines (~1 s)."""
        found = self._found[pos]
        got = found.get(word, _UNSEEN)
        if got is _UNSEEN:
            got = found[word] = self._search(pos, word)
        return got  # type: ignore[return-value]

    def _search(self, pos: str, word: str) -> tuple[str, ...] | None:
        try:
            return self._bisect(pos, word)
        except (ValueError, IndexError, OSError):  # bad data: an unknown word
            return None

    def _bisect(self, pos: str, word: str) -> tuple[str, ...] | None:
        mm = self._mm(pos, "index")
        key = word.encode("utf-8")
        if not key or b" " in key or b"\n" in key:
            return None
        lo, hi = 0, len(mm)
        while lo < hi:  # lo and hi are line starts
            mid = (lo + hi) // 2
            start = mm.rfind(b"\n", 0, mid) + 1
            end = mm.find(b"\n", start)
            end = len(mm) if end < 0 else end
            line = mm[start:end]
            lemma = b"" if line.startswith(b" ") else line.split(b" ", 1)[0]  # licence: first
            if lemma == key:
                parts = line.decode("utf-8").split()
                n_syn, n_ptr = int(parts[2]), int(parts[3])
                offs = parts[6 + n_ptr : 6 + n_ptr + n_syn]
                return tuple(f"{pos}:{o}" for o in offs)
            if lemma < key:
                lo = end + 1
            else:
                hi = start
        return None

    def exceptions(self, pos: str) -> dict[str, tuple[str, ...]]:
        """WordNet's irregular forms for ``pos`` (``<pos>.exc``: "went" -> ("go",))."""
        got = self._exc.get(pos)
        if got is None:
            with self._lock:
                got = self._exc.get(pos)
                if got is None:
                    got = {}
                    path = self.root / f"{_FILES[pos]}.exc"
                    try:
                        with open(path, encoding="utf-8") as f:
                            for line in f:
                                parts = line.split()
                                if len(parts) >= 2:
                                    got[parts[0]] = tuple(parts[1:])
                    except (OSError, ValueError):  # missing or bad: no irregular forms
                        got = {}
                    self._exc[pos] = got
        return got

    def _mm(self, pos: str, kind: str = "data") -> mmap.mmap | bytes:
        """``data.<pos>`` or ``index.<pos>``, mapped read-only (once); empty bytes when
        the file is missing, empty or cannot be mapped (every word then unknown)."""
        mm = self._data.get((kind, pos))
        if mm is None:
            with self._lock:
                mm = self._data.get((kind, pos))
                if mm is None:
                    try:
                        with open(self.root / f"{kind}.{_FILES[pos]}", "rb") as f:
                            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                    except (OSError, ValueError):
                        mm = b""
                    self._data[(kind, pos)] = mm
        return mm

    def _synset(self, key: str) -> Synset:
        """The synset at ``key``; an empty one (no lemmas, no pointers) on bad data."""
        try:
            return self._read_synset(key)
        except (ValueError, IndexError, KeyError, OSError):
            return Synset(key, key[:1], (), ())

    def _read_synset(self, key: str) -> Synset:
        pos, off = key.split(":")
        mm = self._mm(pos)
        start = int(off)
        if not 0 <= start < len(mm):
            raise ValueError(f"offset {off} outside data.{_FILES[pos]}")
        end = mm.find(b"\n", start)
        line = mm[start : len(mm) if end < 0 else end].decode("utf-8", "replace")
        head, _, gloss = line.partition(" | ")
        parts = head.split()
        if parts[0] != off:  # each line starts with its own offset: else not a synset's
            raise ValueError(f"no synset at {key}")
        ss_type = parts[2]
        n_words = int(parts[3], 16)
        lemmas = tuple(parts[4 + 2 * i].lower().split("(")[0] for i in range(n_words))
        i = 4 + 2 * n_words
        n_ptr = int(parts[i])
        ptrs = []
        for k in range(n_ptr):
            sym, o, p = parts[i + 1 + 4 * k : i + 4 + 4 * k]
            ptrs.append((sym, f"{'a' if p == 's' else p}:{o}"))
        return Synset(key, ss_type, lemmas, tuple(ptrs), gloss.split(";")[0].strip())

    # ------------------------------------------------------------------ words

    def bases(self, word: str, pos: str) -> tuple[str, ...]:
        """The base forms of ``word`` as part of speech ``pos`` known to WordNet (morphy)."""
        return self._bases(word, pos)

    def _bases(self, word: str, pos: str) -> tuple[str, ...]:
        word = word.lower().replace(" ", "_")
        known = self._offsets
        head, sep, rest = word.partition("_")
        if sep and known(pos, word) is None:  # a collocation, first word inflected ("rounded_up")
            return tuple(b for h in self.bases(head, pos) if known(pos, b := f"{h}_{rest}"))
        out = list(self.exceptions(pos).get(word, ()))
        if known(pos, word) is not None:
            out.append(word)
        for suffix, ending in _DETACH[pos]:
            if word.endswith(suffix) and len(word) > len(suffix) + 1:
                base = word[: len(word) - len(suffix)] + ending
                if known(pos, base) is not None:
                    out.append(base)
        return tuple(dict.fromkeys(b for b in out if known(pos, b) is not None))

    def synsets(self, word: str, pos: str | None = None) -> tuple[str, ...]:
        """Keys of the synsets of ``word`` (any inflection), of one part of speech or all."""
        out: list[str] = []
        for p in (pos,) if pos else POS:
            for base in self.bases(word, p):
                out.extend(self._offsets(p, base) or ())
        return tuple(dict.fromkeys(out))

    def known(self, word: str) -> bool:
        """Whether WordNet knows ``word`` in any part of speech."""
        return bool(self.synsets(word))

    def pos_of(self, word: str) -> frozenset[str]:
        """The parts of speech ``word`` can be."""
        return frozenset(p for p in POS if self.bases(word, p))

    def lemma_sets(self, word: str) -> frozenset[str]:
        """Every lemma sharing a synset with ``word`` (its synonyms, itself included)."""
        return frozenset(lem for k in self.synsets(word) for lem in self.synset(k).lemmas)

    def related(self, key: str, symbols: str) -> tuple[str, ...]:
        """Synsets one pointer away from ``key`` by any of the pointer ``symbols``
        (space-separated: ``@`` hypernym, ``&`` similar to, ``!`` antonym …)."""
        want = set(symbols.split())
        return tuple(k for s, k in self.synset(key).pointers if s in want)

    def ancestors(self, key: str, depth: int) -> set[str]:
        """Hypernyms (and instance hypernyms) up to ``depth`` steps, ``key`` included."""
        seen = {key}
        frontier = {key}
        for _ in range(depth):
            frontier = {h for k in frontier for h in self.related(k, "@ @i")} - seen
            seen |= frontier
        return seen


@functools.lru_cache(maxsize=1)
def lexicon() -> Lexicon | None:
    """The verified WordNet copy (``wordnet_dir()``, else the shipped one), or None when
    none verifies (the merge rule then merges only exact rewordings). Checked once per
    process; a refusal is logged once."""
    root = wordnet_dir()
    if root is None:
        return None
    refused: list[str] = []
    for cand in dict.fromkeys((root.resolve(), SHIPPED)):
        why = check_folder(cand)
        if why is None:
            if refused:
                log.warning("WordNet lexicon: refused %s; using the shipped copy", refused[0])
            return Lexicon(cand, _identity(cand))
        refused.append(f"{cand} ({why})")
    log.warning(
        "WordNet lexicon: refused %s: no lexicon, the merge rule keeps apart what only "
        "a lexicon could relate",
        " and ".join(refused),
    )
    return None


def lexicon_identity() -> str:
    """Which lexicon decides the merge rule's verdicts ("wordnet-3.0:<16 hex of its
    manifest's sha256>", "none" without one): recorded with verdicts in the log."""
    lex = lexicon()
    return lex.identity if lex is not None and lex.identity else "none"
