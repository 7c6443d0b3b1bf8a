"""A lexical (BM25) index over facts' contents, kept beside the vectors.

Why: agents ask memory about error codes, ticket ids, CVEs, hosts, paths, versions and
config keys; a dense embedding ranks look-alikes (ORA-00942 / ORA-00904) almost alike.
Words and identifiers are indexed whole *and* split: ``src/billing/invoice.py`` gives
itself, its path tails (``billing/invoice.py``, ``invoice.py``) and its parts (``src``,
``billing``, ``invoice``, ``py``); ``ORA-00942`` gives ``ora-00942``, ``ora`` and
``00942``; ``MaxPoolSize`` gives itself and ``max``, ``pool``, ``size``. Short numeric
parts (``14`` of ``v2.14.3``) are left out: they match everything.

A derived view like the vectors: it holds the contents of ``state.facts`` only, read
from a checkpoint's side file (``dump`` / ``load``, written by
``synthesizer.checkpoints.vectors``) or built from the contents on first use, and kept
current by ``FactIndex`` (new, changed and dropped facts). A dropped fact's words leave
the vocabulary (a term with no document left is deleted; a full sync compacts the
checkpoint's base), so erasure leaves nothing behind in it. Postings are arrays (the
base) and dicts (slot -> term frequency, what changed since) with a numpy copy made per
term on demand, so a query is a few vector operations per query term.
"""

from __future__ import annotations

import hashlib
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np
import orjson

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
    """BM25 over documents named by fact id (see module docstring).

    Two layers: a frozen *base* (compressed postings, as ``load`` reads them from a
    checkpoint's side file: a few array reads, no per-document work) and a mutable
    *overlay* of dicts for what changed since. A base document that leaves (or changes)
    is masked (``_live``), never reused; a full ``sync`` that drops base documents
    compacts the index, so dropped words leave the base too."""

    def __init__(self) -> None:
        self._slot: dict[str, int] = {}  # fact id -> slot
        self._ids: list[str | None] = []  # slot -> fact id (None: free or dropped)
        self._free: list[int] = []  # overlay slots to reuse
        self._sig = np.zeros(1024, dtype=np.int64)  # slot -> digest of its content
        self._len = np.zeros(1024, dtype=np.float64)  # slot -> document length (0: none)
        self._live = np.zeros(1024, dtype=bool)
        self._total = 0
        self._terms: dict[str, tuple[str, ...]] = {}  # overlay fact id -> distinct terms
        self._post: dict[str, dict[int, int]] = {}  # overlay: term -> slot -> tf
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # its numpy copies
        self._bvocab = _Vocab([])  # base: term -> its postings' number
        self._bptr = np.zeros(1, dtype=np.int64)  # base postings t: [ptr[t], ptr[t+1])
        self._bslots = np.zeros(0, dtype=np.int64)
        self._btf = np.zeros(0, dtype=np.float64)
        self._bdocs = 0  # slots below this are base documents (never reused)

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, fid: object) -> bool:
        return fid in self._slot

    @property
    def frozen(self) -> int:
        """How many slots the base read from a checkpoint's file holds (0: built here)."""
        return self._bdocs

    def vocabulary(self) -> set[str]:
        """Every term some live document holds (tests: erasure leaves no word behind)."""
        out = set(self._post)
        for t, i in self._bvocab.items():
            if self._live[self._bslots[self._bptr[i] : self._bptr[i + 1]]].any():
                out.add(t)
        return out

    def _grow(self, slot: int) -> None:
        if slot >= self._len.shape[0]:
            size = max(2 * self._len.shape[0], slot + 1)
            for name in ("_sig", "_len", "_live"):
                old = getattr(self, name)
                new = np.zeros(size, dtype=old.dtype)
                new[: old.shape[0]] = old
                setattr(self, name, new)

    def put(self, fid: str, content: str) -> None:
        """Index (or re-index, when its content changed) one fact's content."""
        sig = _digest(content)
        slot = self._slot.get(fid)
        if slot is not None and self._sig[slot] == sig:
            return
        self.remove(fid)
        counts = Counter(terms(content))
        if self._free:
            slot = self._free.pop()
            self._ids[slot] = fid
        else:
            slot = len(self._ids)
            self._ids.append(fid)
            self._grow(slot)
        self._slot[fid] = slot
        self._terms[fid] = tuple(counts)
        n = sum(counts.values())
        self._sig[slot], self._len[slot], self._live[slot] = sig, n, True
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
        """Drop a fact: its terms leave the postings, an emptied term the vocabulary (a
        base document is masked until the next compaction)."""
        slot = self._slot.pop(fid, None)
        if slot is None:
            return
        self._total -= int(self._len[slot])
        self._len[slot], self._sig[slot], self._live[slot] = 0.0, 0, False
        self._ids[slot] = None
        if slot < self._bdocs:
            return
        for t in self._terms.pop(fid):
            p = self._post[t]
            del p[slot]
            if not p:
                del self._post[t]
            self._arrays.pop(t, None)
        self._free.append(slot)

    def sync(self, facts: Mapping[str, HasContent], names: Iterable[str] | None = None) -> None:
        """Bring the index to ``facts`` (fact id -> fact): only the facts ``names`` when
        given (changed, new or gone), else every fact (a full comparison, then a
        compaction if base documents left)."""
        if names is None:
            gone = [f for f in self._slot if f not in facts]
            for fid in gone:
                self.remove(fid)
            todo: Iterable[str] = facts
        else:
            gone, todo = [], names
        for fid in todo:
            f = facts.get(fid)
            if f is None:
                self.remove(fid)
            else:
                self.put(fid, f.content)
        if gone and self._bdocs and not self._live[: self._bdocs].all():
            self._adopt(LexicalIndex.load(self.dump()))

    def _adopt(self, other: LexicalIndex) -> None:
        self.__dict__.update(other.__dict__)

    def _posting(self, t: str) -> tuple[np.ndarray, np.ndarray] | None:
        """Slots and term frequencies of ``t`` (base and overlay), None when none."""
        arr = self._arrays.get(t)
        if arr is None:
            p = self._post.get(t)
            i = self._bvocab.get(t)
            if not p and i is None:
                return None
            parts_s, parts_t = [], []
            if i is not None:  # (the base's arrays as read: int32, widened per term)
                a, b = self._bptr[i], self._bptr[i + 1]
                parts_s.append(self._bslots[a:b].astype(np.int64))
                parts_t.append(self._btf[a:b].astype(np.float64))
            if p:
                parts_s.append(np.fromiter(p.keys(), np.int64, len(p)))
                parts_t.append(np.fromiter(p.values(), np.float64, len(p)))
            arr = self._arrays[t] = (np.concatenate(parts_s), np.concatenate(parts_t))
        return arr

    def scores(self, query: str, limit: int) -> dict[str, float]:
        """The best ``limit`` documents for ``query`` by BM25 (fact id -> score > 0);
        ties at the cut by fact id, so the choice never depends on slot order."""
        qterms = sorted(set(terms(query)))
        n_docs = len(self._slot)
        if not qterms or not n_docs:
            return {}
        avg = self._total / n_docs if self._total else 1.0
        live = self._live
        acc = np.zeros(len(self._ids), dtype=np.float64)
        hit = False
        for t in qterms:
            arr = self._posting(t)
            if arr is None:
                continue
            slots, tf = arr
            if self._bdocs:  # masked base documents neither count nor score
                keep = live[slots]
                slots, tf = slots[keep], tf[keep]
            df = slots.shape[0]
            if not df:
                continue
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            if idf < MIN_IDF and len(qterms) > 1:
                continue  # in nearly every document: it moves no ranking, costs a pass
            norm = K1 * (1.0 - B + B * self._len[slots] / avg)
            acc[slots] += idf * tf * (K1 + 1.0) / (tf + norm)
            hit = True
        if not hit:
            return {}
        found = np.flatnonzero(acc > 0.0)
        ids = self._ids
        if found.shape[0] > limit:
            cut = np.partition(acc[found], -limit)[-limit]
            above = found[acc[found] > cut]
            tied = sorted((str(ids[s]), s) for s in found[acc[found] == cut].tolist())
            found = np.concatenate([above, [s for _, s in tied[: limit - above.shape[0]]]])
        return {str(ids[s]): float(acc[s]) for s in found.astype(np.int64).tolist()}

    def holding(self, term: str, limit: int) -> list[str]:
        """Fact ids (at most ``limit``, by id) whose content holds ``term`` whole."""
        arr = self._posting(term)
        if arr is None:
            return []
        ids = self._ids
        return sorted(str(ids[s]) for s in arr[0].tolist() if self._live[s])[:limit]

    # ------------------------------------------------------------------ checkpoint file

    def dump(self) -> bytes:
        """The live documents as one compact blob (a checkpoint's side file): a JSON
        header, then the arrays; ``load`` reads it back."""
        live_slots = [s for s, f in enumerate(self._ids) if f is not None]
        renum = np.full(len(self._ids) + 1, -1, dtype=np.int64)
        renum[live_slots] = np.arange(len(live_slots))
        by_term: dict[str, list[np.ndarray]] = {}
        for t, i in self._bvocab.items():
            a, b = self._bptr[i], self._bptr[i + 1]
            s = self._bslots[a:b]
            keep = self._live[s]
            if keep.any():
                by_term[t] = [renum[s[keep]], self._btf[a:b][keep]]
        for t, p in self._post.items():
            s = renum[np.fromiter(p.keys(), np.int64, len(p))]
            tf = np.fromiter(p.values(), np.float64, len(p))
            if t in by_term:
                by_term[t] = [
                    np.concatenate([by_term[t][0], s]),
                    np.concatenate([by_term[t][1], tf]),
                ]
            else:
                by_term[t] = [s, tf]
        vocab = sorted(by_term)
        counts = np.array([by_term[t][0].shape[0] for t in vocab], dtype=np.int64)
        ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        slots = np.concatenate([by_term[t][0] for t in vocab]) if vocab else np.zeros(0)
        tfs = np.concatenate([by_term[t][1] for t in vocab]) if vocab else np.zeros(0)
        arrays = {
            "ptr": ptr,
            "slots": slots.astype(np.int32),
            "tf": tfs.astype(np.int32),
            "len": self._len[live_slots].astype(np.int32),
            "sig": self._sig[live_slots].astype(np.int64),
        }
        names = orjson.dumps({"vocab": vocab, "ids": [self._ids[s] for s in live_slots]})
        offsets: dict[str, list[Any]] = {}
        at = 0
        for name, arr in arrays.items():
            offsets[name] = [at, arr.dtype.str, int(arr.shape[0])]
            at += arr.nbytes
        header = orjson.dumps({"magic": LEX_MAGIC, "arrays": offsets, "names": [at, len(names)]})
        body = b"".join(np.ascontiguousarray(a).tobytes() for a in arrays.values())
        return len(header).to_bytes(8, "little") + header + body + names

    @classmethod
    def load(cls, data: bytes) -> LexicalIndex:
        """An index from ``dump``'s bytes; ValueError (or KeyError, TypeError) when they
        are not well formed."""
        hlen = int.from_bytes(data[:8], "little")
        header = orjson.loads(data[8 : 8 + hlen])
        if header.get("magic") != LEX_MAGIC:
            raise ValueError("not a lexical index")
        base = 8 + hlen
        got: dict[str, np.ndarray] = {}
        for name, (off, dtype, n) in header["arrays"].items():
            got[name] = np.frombuffer(data, dtype=np.dtype(dtype), count=n, offset=base + off)
        off, size = header["names"]
        names = orjson.loads(data[base + off : base + off + size])
        vocab, ids = names["vocab"], names["ids"]
        n = len(ids)
        ptr = got["ptr"]
        if ptr.shape[0] != len(vocab) + 1 or got["len"].shape[0] != n or got["sig"].shape[0] != n:
            raise ValueError("lexical index: arrays of different lengths")
        if got["slots"].shape[0] != int(ptr[-1]) or (n and int(got["slots"].max(initial=0)) >= n):
            raise ValueError("lexical index: postings out of range")
        self = cls()
        self._ids = list(ids)
        self._slot = {f: i for i, f in enumerate(ids)}
        if len(self._slot) != n:
            raise ValueError("lexical index: a fact twice")
        self._grow(max(n, 1))
        self._len[:n] = got["len"]
        self._sig[:n] = got["sig"]
        self._live[:n] = True
        self._total = int(got["len"].sum())
        self._bvocab = _Vocab(vocab)
        self._bptr = ptr.astype(np.int64)
        self._bslots = got["slots"]  # int32, read in place (see _posting)
        self._btf = got["tf"]
        self._bdocs = n
        return self


LEX_MAGIC = "swarmlex/1"


class _Vocab:
    """A base's terms, sorted as ``dump`` writes them: a term's postings number by
    bisection. Why not a dict: building one over 100,000 terms cost a fresh process's
    first text recall ~70 ms; a query looks up a handful of terms."""

    __slots__ = ("terms",)

    def __init__(self, terms: list[str]) -> None:
        self.terms = terms

    def get(self, term: str) -> int | None:
        """The postings number of ``term``, None when the base does not hold it."""
        i = bisect_left(self.terms, term)
        return i if i < len(self.terms) and self.terms[i] == term else None

    def items(self) -> Iterable[tuple[str, int]]:
        """(term, postings number) in order."""
        return zip(self.terms, range(len(self.terms)), strict=True)


def _digest(content: str) -> int:
    """A 63-bit digest of a content (whether a fact's words changed since indexed)."""
    h = hashlib.blake2b(content.encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 1
