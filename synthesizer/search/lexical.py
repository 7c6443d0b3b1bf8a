"""A lexical (BM25) index over facts' contents, kept beside the vectors.

Why: agents ask memory about error codes, ticket ids, CVEs, hosts, paths, versions and
config keys; a dense embedding ranks look-alikes (ORA-00942 / ORA-00904) almost alike.
Words and identifiers are indexed whole *and* split: ``src/billing/invoice.py`` gives
itself, its path tails (``billing/invoice.py``, ``invoice.py``) and its parts (``src``,
``billing``, ``invoice``, ``py``); ``ORA-00942`` gives ``ora-00942``, ``ora`` and
``00942``; ``MaxPoolSize`` gives itself and ``max``, ``pool``, ``size``. Short numeric
parts (``14`` of ``v2.14.3``) are left out: they match everything.

A derived view like the vectors: it holds the contents of ``state.facts`` only, built
from them on first use and kept current by ``FactIndex`` (new, changed and dropped
facts). It writes no file; a dropped fact's words leave the vocabulary at once (a
token with no document left is deleted), so erasure leaves nothing behind in it.
Postings are dicts (slot -> term frequency) with a numpy copy made per token on demand,
so a query is a few vector operations per query token.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Protocol

import numpy as np

K1 = 1.2
B = 0.75
MIN_IDF = 0.2  # a term in more than ~4/5 of the documents is skipped (see ``scores``)

_EDGE = "\"'`()[]{}<>,;:!?*" + ".…"
_PARTS = re.compile(r"[^\W_]+")  # letters/digits runs (splits on / . - _ and the rest)
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_IDENT = re.compile(r"\d|\w[/.\-_:@]\w|[a-z][A-Z]|[A-Z]{2}[a-z]")
_CACHE_MAX = 200_000  # raw token -> its terms (a swarm's vocabulary repeats)
_STOP = """a an and are as at be been but by can could did do does for from had has have how
    i if in into is it its of on or our so than that the their them then there these they
    this those to was we were what when where which while who whom why will with would
    you your about after any all also more most not no yes should shall may might must
    up out over under again just only own same such very"""
STOPWORDS = frozenset(_STOP.split())


def is_identifier(token: str) -> bool:
    """Whether a raw token (case kept) looks like an identifier: it has a digit, an
    inner ``/ . - _`` (or ``:`` / ``@``), or CamelCase."""
    return _IDENT.search(token) is not None


def _plain(word: str) -> str:
    """A plain word folded to a light stem (plural ``s`` off) so keyword queries meet
    singular and plural; identifiers are never stemmed."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _raw_tokens(text: str) -> list[str]:
    """Whitespace-separated tokens stripped of surrounding punctuation (case kept)."""
    edge = _EDGE
    return [t for t in (w.strip(edge) for w in text.split()) if t]


def _expand(raw: str) -> list[str]:
    """The index terms of one raw token: whole, path tails, parts (see module doc)."""
    low = raw.lower()
    if not is_identifier(raw):
        return [_plain(p) for p in _PARTS.findall(low) if p not in STOPWORDS]
    terms = [low]
    if "/" in low:
        segs = [s for s in low.split("/") if s]
        terms.extend("/".join(segs[i:]) for i in range(1, len(segs)))
    pieces = _CAMEL.findall(raw) if not raw.islower() else []
    for p in [*_PARTS.findall(low), *(p.lower() for p in pieces)]:
        if p.isdigit() and len(p) < 3:
            continue
        if p not in STOPWORDS and p not in terms:
            terms.append(p)
    return terms


_cache: dict[str, list[str]] = {}


def terms(text: str) -> list[str]:
    """The index terms of a text (a document or a query), in order, repeats kept."""
    out: list[str] = []
    cache = _cache
    for raw in _raw_tokens(text):
        got = cache.get(raw)
        if got is None:
            if len(cache) >= _CACHE_MAX:
                cache.clear()
            got = cache[raw] = _expand(raw)
        out.extend(got)
    return out


def identifiers(text: str) -> list[str]:
    """A query's identifier tokens, lowercased and whole (distinct, in order)."""
    seen: list[str] = []
    for raw in _raw_tokens(text):
        if is_identifier(raw):
            low = raw.lower()
            if low not in seen:
                seen.append(low)
    return seen


class HasContent(Protocol):
    """What the index reads of a fact."""

    @property
    def content(self) -> str: ...


class LexicalIndex:
    """BM25 over documents named by fact id (see module docstring)."""

    def __init__(self) -> None:
        self._slot: dict[str, int] = {}  # fact id -> slot
        self._ids: list[str | None] = []  # slot -> fact id (None: free)
        self._free: list[int] = []
        self._content: dict[str, str] = {}  # fact id -> the content indexed
        self._terms: dict[str, tuple[str, ...]] = {}  # fact id -> its distinct terms
        self._post: dict[str, dict[int, int]] = {}  # term -> slot -> tf
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # term -> (slots, tf)
        self._len = np.zeros(1024, dtype=np.float64)  # slot -> document length
        self._total = 0

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, fid: object) -> bool:
        return fid in self._slot

    def vocabulary(self) -> set[str]:
        """Every term some document holds (tests: erasure leaves no word behind)."""
        return set(self._post)

    def put(self, fid: str, content: str) -> None:
        """Index (or re-index, when its content changed) one fact's content."""
        if self._content.get(fid) == content:
            return
        self.remove(fid)
        counts = Counter(terms(content))
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = fid
        else:
            slot = len(self._ids)
            self._ids.append(fid)
            if slot >= self._len.shape[0]:
                self._len = np.concatenate([self._len, np.zeros_like(self._len)])
        self._slot[fid] = slot
        self._content[fid] = content
        self._terms[fid] = tuple(counts)
        n = sum(counts.values())
        self._len[slot] = n
        self._total += n
        post, arrays = self._post, self._arrays
        if arrays:  # numpy copies of the postings this document joins are stale
            for t in counts:
                arrays.pop(t, None)
        for t, tf in counts.items():
            p = post.get(t)
            if p is None:
                post[t] = {slot: tf}
            else:
                p[slot] = tf

    def remove(self, fid: str) -> None:
        """Drop a fact: its terms leave the postings, an emptied term the vocabulary."""
        slot = self._slot.pop(fid, None)
        if slot is None:
            return
        counts = self._terms.pop(fid)
        del self._content[fid]
        for t in counts:
            p = self._post[t]
            del p[slot]
            if not p:
                del self._post[t]
            self._arrays.pop(t, None)
        self._total -= int(self._len[slot])
        self._len[slot] = 0.0
        self._ids[slot] = None
        self._free.append(slot)

    def sync(self, facts: Mapping[str, HasContent], names: Iterable[str] | None = None) -> None:
        """Bring the index to ``facts`` (fact id -> fact): only the facts ``names`` when
        given (changed, new or gone), else every fact (a full comparison)."""
        if names is None:
            for fid in [f for f in self._slot if f not in facts]:
                self.remove(fid)
            todo: Iterable[str] = facts
        else:
            todo = names
        for fid in todo:
            f = facts.get(fid)
            if f is None:
                self.remove(fid)
            else:
                self.put(fid, f.content)

    def _posting(self, t: str) -> tuple[np.ndarray, np.ndarray] | None:
        arr = self._arrays.get(t)
        if arr is None:
            p = self._post.get(t)
            if not p:
                return None
            slots = np.fromiter(p.keys(), np.int64, len(p))
            tfs = np.fromiter(p.values(), np.float64, len(p))
            arr = self._arrays[t] = (slots, tfs)
        return arr

    def scores(self, query: str, limit: int) -> dict[str, float]:
        """The best ``limit`` documents for ``query`` by BM25 (fact id -> score > 0)."""
        qterms = set(terms(query))
        n_docs = len(self._slot)
        if not qterms or not n_docs:
            return {}
        avg = self._total / n_docs if self._total else 1.0
        acc = np.zeros(len(self._ids), dtype=np.float64)
        hit = False
        for t in qterms:
            arr = self._posting(t)
            if arr is None:
                continue
            slots, tf = arr
            df = slots.shape[0]
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            if idf < MIN_IDF and len(qterms) > 1:
                continue  # in nearly every document: it moves no ranking, costs a pass
            norm = K1 * (1.0 - B + B * self._len[slots] / avg)
            acc[slots] += idf * tf * (K1 + 1.0) / (tf + norm)
            hit = True
        if not hit:
            return {}
        found = np.flatnonzero(acc > 0.0)
        if found.shape[0] > limit:
            found = found[np.argpartition(acc[found], -limit)[-limit:]]
        ids = self._ids
        return {str(ids[s]): float(acc[s]) for s in found.tolist()}

    def holding(self, term: str, limit: int) -> list[str]:
        """Fact ids (at most ``limit``) whose content holds ``term`` whole."""
        p = self._post.get(term)
        if not p:
            return []
        ids = self._ids
        return [str(ids[s]) for s in list(p)[:limit]]
