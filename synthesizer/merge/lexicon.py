"""An offline English lexicon: WordNet's database files, read directly.

The merge rule (``mergerule``) asks what two differing words are to each other: the same
word inflected, synonyms (they share a synset), antonyms (WordNet's ``!`` pointer, also
through a satellite adjective's head or one hypernym step: "reduce" is a kind of
"decrease", the antonym of "increase"), one a kind of the other (hypernym chain), or
neither. The data is WordNet 3.0 in its original file format, as Debian's ``wordnet-base``
package installs it (``/usr/share/wordnet``; CI installs it) or as NLTK's ``wordnet``
corpus unpacks it; ``SWARMLOG_WORDNET`` names another folder. No network, no model.

Without the files ``lexicon()`` returns None and the rule degrades to the safe side:
no two different words are taken for synonyms, so fewer statements merge, none wrongly.
The reader is small on purpose: a lemma is found by binary search in its sorted index
file, as WordNet's own library does, synsets are read from the data files by byte offset
(both mapped with mmap) and both are cached.
"""

from __future__ import annotations

import functools
import mmap
import os
import threading
from pathlib import Path
from typing import NamedTuple

__all__ = ["Lexicon", "Synset", "lexicon", "wordnet_dir"]

_UNSEEN = object()

POS = ("n", "v", "a", "r")
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_CANDIDATES = (
    "/usr/share/wordnet",
    "/usr/local/share/wordnet",
    "~/nltk_data/corpora/wordnet",
    "/usr/share/nltk_data/corpora/wordnet",
    "/usr/local/share/nltk_data/corpora/wordnet",
)
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
    """The folder holding WordNet's database files, or None when none is installed."""
    env = os.environ.get("SWARMLOG_WORDNET")
    for c in ([env] if env else []) + list(_CANDIDATES):
        p = Path(c).expanduser()
        if (p / "index.noun").is_file() and (p / "data.noun").is_file():
            return p
    return None


class Lexicon:
    """WordNet lookups (see module docstring). Thread-safe after construction."""

    def __init__(self, root: Path) -> None:
        """Open the database at ``root`` (index files load on first use)."""
        self.root = root
        self._found: dict[str, dict[str, object]] = {p: {} for p in POS}
        self._exc: dict[str, dict[str, tuple[str, ...]]] = {}
        self._data: dict[tuple[str, str], mmap.mmap] = {}
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
                    if path.is_file():
                        with open(path, encoding="utf-8") as f:
                            for line in f:
                                parts = line.split()
                                if len(parts) >= 2:
                                    got[parts[0]] = tuple(parts[1:])
                    self._exc[pos] = got
        return got

    def _mm(self, pos: str, kind: str = "data") -> mmap.mmap:
        """``data.<pos>`` or ``index.<pos>``, mapped read-only (once)."""
        mm = self._data.get((kind, pos))
        if mm is None:
            with self._lock:
                mm = self._data.get((kind, pos))
                if mm is None:
                    with open(self.root / f"{kind}.{_FILES[pos]}", "rb") as f:
                        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                    self._data[(kind, pos)] = mm
        return mm

    def _synset(self, key: str) -> Synset:
        pos, off = key.split(":")
        mm = self._mm(pos)
        start = int(off)
        end = mm.find(b"\n", start)
        line = mm[start:end].decode("utf-8", "replace")
        head, _, gloss = line.partition(" | ")
        parts = head.split()
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
    """The installed WordNet, or None (the merge rule then merges only exact rewordings)."""
    root = wordnet_dir()
    return Lexicon(root) if root is not None else None
