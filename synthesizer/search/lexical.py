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
import mmap
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import numpy as np
import orjson

from synthesizer.search.topk import kth_largest

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
    checkpoint's side file: a few array reads, no per-document work, its terms and fact
    ids left in their blobs until looked up, ``_Names``) and a mutable *overlay* of
    dicts for what changed since. A base document that leaves (or changes) is masked
    (``_live``), never reused; a full ``sync`` that drops base documents compacts the
    index, so dropped words leave the base too."""

    def __init__(self) -> None:
        self._base = _Names.of([])  # base slot -> fact id (slots below _bdocs)
        self._oids: list[str | None] = []  # overlay slot - _bdocs -> fact id (None: free)
        self._oslot: dict[str, int] = {}  # overlay: fact id -> slot
        self._count = 0  # live documents
        self._free: list[int] = []  # overlay slots to reuse
        self._sig = np.zeros(1024, dtype=np.int64)  # slot -> digest of its content
        self._len = np.zeros(1024, dtype=np.float64)  # slot -> document length (0: none)
        self._live = np.zeros(1024, dtype=bool)
        self._total = 0
        self._terms: dict[str, tuple[str, ...]] = {}  # overlay fact id -> distinct terms
        self._post: dict[str, dict[int, int]] = {}  # overlay: term -> slot -> tf
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # its numpy copies
        self._weights: dict[str, tuple[float, int, np.ndarray, np.ndarray]] = {}  # _weighted
        self._masks = 0  # base documents masked so far (a term's live postings may shrink)
        self._bvocab = _Names.of([])  # base: sorted terms; a term's number: its postings'
        self._bptr = np.zeros(1, dtype=np.int64)  # base postings t: [ptr[t], ptr[t+1])
        self._bslots = np.zeros(0, dtype=np.int64)
        self._btf = np.zeros(0, dtype=np.float64)
        self._bdocs = 0  # slots below this are base documents (never reused)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, fid: object) -> bool:
        return isinstance(fid, str) and self._slot_of(fid) is not None

    @property
    def frozen(self) -> int:
        """How many slots the base read from a checkpoint's file holds (0: built here)."""
        return self._bdocs

    def _slot_of(self, fid: str) -> int | None:
        """The live slot of a fact (the overlay's, else the base's), None if absent."""
        s = self._oslot.get(fid)
        if s is None and self._bdocs:
            s = self._base.find(fid)
            if s is not None and not self._live[s]:
                return None
        return s

    def _id_of(self, slot: int) -> str:
        got = self._base.at(slot) if slot < self._bdocs else self._oids[slot - self._bdocs]
        return str(got)

    def _slots(self) -> int:
        return self._bdocs + len(self._oids)

    def _fids(self) -> list[str]:
        """Every live document's fact id (decodes the base's: a full sync, a dump)."""
        live = np.flatnonzero(self._live[: self._bdocs]).tolist()
        return [self._base.at(s) for s in live] + list(self._oslot)

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
        slot = self._slot_of(fid)
        if slot is not None and self._sig[slot] == sig:
            return
        self.remove(fid)
        counts = Counter(terms(content))
        if self._free:
            slot = self._free.pop()
            self._oids[slot - self._bdocs] = fid
        else:
            slot = self._slots()
            self._oids.append(fid)
            self._grow(slot)
        self._oslot[fid] = slot
        self._count += 1
        self._terms[fid] = tuple(counts)
        n = sum(counts.values())
        self._sig[slot], self._len[slot], self._live[slot] = sig, n, True
        self._total += n
        post, arrays = self._post, self._arrays
        if arrays or self._weights:  # numpy copies of the postings it joins are stale
            for t in counts:
                arrays.pop(t, None)
                self._weights.pop(t, None)
        for t, tf in counts.items():
            p = post.get(t)
            if p is None:
                post[t] = {slot: tf}
            else:
                p[slot] = tf

    def remove(self, fid: str) -> None:
        """Drop a fact: its terms leave the postings, an emptied term the vocabulary (a
        base document is masked until the next compaction)."""
        slot = self._slot_of(fid)
        if slot is None:
            return
        self._count -= 1
        self._total -= int(self._len[slot])
        self._len[slot], self._sig[slot], self._live[slot] = 0.0, 0, False
        if slot < self._bdocs:
            self._masks += 1
            return
        del self._oslot[fid]
        self._oids[slot - self._bdocs] = None
        for t in self._terms.pop(fid):
            p = self._post[t]
            del p[slot]
            if not p:
                del self._post[t]
            self._arrays.pop(t, None)
            self._weights.pop(t, None)
        self._free.append(slot)

    def sync(self, facts: Mapping[str, HasContent], names: Iterable[str] | None = None) -> None:
        """Bring the index to ``facts`` (fact id -> fact): only the facts ``names`` when
        given (changed, new or gone), else every fact (a full comparison, then a
        compaction if base documents left)."""
        if names is None:
            gone = [f for f in self._fids() if f not in facts]
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
            i = self._bvocab.find(t) if self._bdocs else None
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
        n_docs = self._count
        if not qterms or not n_docs:
            return {}
        avg = self._total / n_docs if self._total else 1.0
        acc = np.zeros(self._slots(), dtype=np.float64)
        hit = False
        for t in qterms:
            got = self._weighted(t, avg)
            if got is None:
                continue
            slots, w = got
            df = slots.shape[0]
            if not df:
                continue
            idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            if idf < MIN_IDF and len(qterms) > 1:
                continue  # in nearly every document: it moves no ranking, costs a pass
            acc[slots] += idf * w
            hit = True
        if not hit:
            return {}
        found = np.flatnonzero(acc > 0.0)
        if found.shape[0] > limit:
            cut = kth_largest(acc[found], limit)
            above = found[acc[found] > cut]
            tied = self._by_id(found[acc[found] == cut])
            found = np.concatenate([above, tied[: limit - above.shape[0]]])
        return dict(zip(self._ids_of(found), acc[found].tolist(), strict=True))

    def _weighted(self, t: str, avg: float) -> tuple[np.ndarray, np.ndarray] | None:
        """The live slots holding ``t`` and BM25's term weight in each (without the idf)
        at average length ``avg``. Kept per term until its postings, the masked base
        documents or the average change: a reader's queries repeat terms, and at 1M
        facts a common term's weights were a few passes over 80,000 postings a query."""
        got = self._weights.get(t)
        if got is not None and got[0] == avg and got[1] == self._masks:
            return got[2], got[3]
        arr = self._posting(t)
        if arr is None:
            return None
        slots, tf = arr
        if self._bdocs:  # masked base documents neither count nor score
            keep = self._live[slots]
            slots, tf = slots[keep], tf[keep]
        norm = K1 * (1.0 - B + B * self._len[slots] / avg)
        w = tf * (K1 + 1.0) / (tf + norm)
        if len(self._weights) >= 4096:
            self._weights.clear()
        self._weights[t] = (avg, self._masks, slots, w)
        return slots, w

    def _ids_of(self, slots: np.ndarray) -> list[str]:
        """The fact ids of live slots, in their order."""
        slots = slots.astype(np.int64)
        if slots.shape[0] and int(slots.max()) < self._bdocs:
            return self._base.many(slots)
        return [self._id_of(s) for s in slots.tolist()]

    def _by_id(self, slots: np.ndarray) -> np.ndarray:
        """Live slots sorted by their fact ids (base slots by the file's id order: no
        id decoded; with overlay slots among them, by the ids themselves)."""
        if slots.shape[0] and int(slots.max()) < self._bdocs:
            return slots[np.argsort(self._base.rank()[slots], kind="stable")]
        ids = self._ids_of(slots)
        return slots[sorted(range(len(ids)), key=ids.__getitem__)]

    def holding(self, term: str, limit: int) -> list[str]:
        """Fact ids (at most ``limit``, by id) whose content holds ``term`` whole."""
        arr = self._posting(term)
        if arr is None:
            return []
        return sorted(self._id_of(s) for s in arr[0].tolist() if self._live[s])[:limit]

    # ------------------------------------------------------------------ checkpoint file

    def dump(self) -> bytes:
        """The live documents as one compact blob (a checkpoint's side file): a JSON
        header, then the arrays; ``load`` reads it back."""
        live_slots = np.flatnonzero(self._live[: self._slots()])
        renum = np.full(self._slots() + 1, -1, dtype=np.int64)
        renum[live_slots] = np.arange(live_slots.shape[0])
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
        ids = _Names.of([self._id_of(s) for s in live_slots.tolist()], order=True)
        terms_ = _Names.of(vocab)
        arrays = {
            "ptr": ptr,
            "slots": slots.astype(np.int32),
            "tf": tfs.astype(np.int32),
            "len": self._len[live_slots].astype(np.int32),
            "sig": self._sig[live_slots].astype(np.int64),
            "vocab_off": terms_.off,
            "vocab": np.frombuffer(terms_.blob, dtype=np.uint8),
            "ids_off": ids.off,
            "ids": np.frombuffer(ids.blob, dtype=np.uint8),
            "ids_order": ids.order if ids.order is not None else np.zeros(0, np.int64),
        }
        offsets: dict[str, list[Any]] = {}
        at = 0
        for name, arr in arrays.items():
            offsets[name] = [at, arr.dtype.str, int(arr.shape[0])]
            at += arr.nbytes
        header = orjson.dumps({"magic": LEX_MAGIC, "arrays": offsets})
        body = b"".join(np.ascontiguousarray(a).tobytes() for a in arrays.values())
        return len(header).to_bytes(8, "little") + header + body

    @classmethod
    def load(cls, data: bytes | mmap.mmap) -> LexicalIndex:
        """An index from ``dump``'s bytes (or those of the format before, ``swarmlex/1``:
        names as JSON), read in place (a memory map of the file, say: nothing is copied
        but the per-document columns); ValueError (or KeyError, TypeError) when not
        well formed."""
        hlen = int.from_bytes(data[:8], "little")
        header = orjson.loads(data[8 : 8 + hlen])
        if header.get("magic") not in (LEX_MAGIC, _LEX_MAGIC_1):
            raise ValueError("not a lexical index")
        base = 8 + hlen
        got: dict[str, np.ndarray] = {}
        for name, (off, dtype, n) in header["arrays"].items():
            got[name] = np.frombuffer(data, dtype=np.dtype(dtype), count=n, offset=base + off)
        if header["magic"] == _LEX_MAGIC_1:
            off, size = header["names"]
            names = orjson.loads(data[base + off : base + off + size])
            vocab, ids = _Names.of(names["vocab"]), _Names.of(names["ids"], order=True)
        else:
            arrays = header["arrays"]
            vocab = _Names(data, got["vocab_off"], None, base + arrays["vocab"][0])
            ids = _Names(data, got["ids_off"], got["ids_order"], base + arrays["ids"][0])
        n = len(ids)
        ptr = got["ptr"]
        if ptr.shape[0] != len(vocab) + 1 or got["len"].shape[0] != n or got["sig"].shape[0] != n:
            raise ValueError("lexical index: arrays of different lengths")
        if got["slots"].shape[0] != int(ptr[-1]) or (n and int(got["slots"].max(initial=0)) >= n):
            raise ValueError("lexical index: postings out of range")
        self = cls()
        self._base, self._count = ids, n
        self._grow(max(n, 1))
        self._len[:n] = got["len"]
        self._sig[:n] = got["sig"]
        self._live[:n] = True
        self._total = int(got["len"].sum())
        self._bvocab = vocab
        self._bptr = ptr.astype(np.int64)
        self._bslots = got["slots"]  # int32, read in place (see _posting)
        self._btf = got["tf"]
        self._bdocs = n
        return self


LEX_MAGIC = "swarmlex/2"
_LEX_MAGIC_1 = "swarmlex/1"  # names as JSON: still read (a checkpoint of the version before)


class _Names:
    """Strings kept as one UTF-8 blob with offsets (as ``dump`` writes them), decoded only
    when one is asked for; ``find`` bisects them (in ``order`` when given: their positions
    sorted; else they are sorted themselves). Why not a list and a dict: at 1,000,000
    facts parsing 2M terms and 1M ids and hashing them cost a fresh process's first text
    recall seconds; a query looks up a handful of terms and ten or so ids. UTF-8 bytes
    sort as their strings do (by code point), so ``dump``'s ``sorted`` order holds."""

    __slots__ = ("_rank", "at0", "blob", "off", "order")

    def __init__(
        self, blob: bytes | mmap.mmap, off: np.ndarray, order: np.ndarray | None, at0: int = 0
    ) -> None:
        if off.shape[0] < 1 or int(off[0]) != 0 or at0 + int(off[-1]) > len(blob):
            raise ValueError("lexical index: names out of range")
        n = off.shape[0] - 1
        if order is not None and (order.shape[0] != n or (n and int(order.max()) >= n)):
            raise ValueError("lexical index: names out of order")
        self.blob, self.off, self.order, self.at0 = blob, off, order, at0  # (at0: 1st byte)
        self._rank: np.ndarray | None = None

    @classmethod
    def of(cls, strings: list[str], order: bool = False) -> _Names:
        """Names from strings (``order``: with their sorted order; else already sorted)."""
        raw = [s.encode() for s in strings]
        off = np.zeros(len(raw) + 1, dtype=np.int64)
        np.cumsum([len(r) for r in raw], out=off[1:])
        by = np.array(sorted(range(len(raw)), key=raw.__getitem__), dtype=np.int64)
        return cls(b"".join(raw), off, by if order else None)

    def __len__(self) -> int:
        return self.off.shape[0] - 1

    def _raw(self, i: int) -> bytes:
        at0 = self.at0
        return self.blob[at0 + int(self.off[i]) : at0 + int(self.off[i + 1])]

    def at(self, i: int) -> str:
        """The ``i``-th string."""
        return self._raw(i).decode()

    def many(self, idx: np.ndarray) -> list[str]:
        """The strings at positions ``idx``, in that order."""
        blob = self.blob
        starts, ends = (self.off[idx] + self.at0).tolist(), (self.off[idx + 1] + self.at0).tolist()
        return [blob[a:b].decode() for a, b in zip(starts, ends, strict=True)]

    def rank(self) -> np.ndarray:
        """Each string's place in sorted order (the inverse of ``order``; built once)."""
        if self._rank is None:
            n = len(self)
            rank = np.arange(n, dtype=np.int64)
            if self.order is not None:
                rank[self.order] = np.arange(n, dtype=np.int64)
            self._rank = rank
        return self._rank

    def find(self, s: str) -> int | None:
        """The position of ``s``, None when absent."""
        key, order = s.encode(), self.order
        lo, hi = 0, len(self)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._raw(mid if order is None else int(order[mid])) < key:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self):
            i = lo if order is None else int(order[lo])
            if self._raw(i) == key:
                return i
        return None

    def items(self) -> Iterable[tuple[str, int]]:
        """(string, position) in position order."""
        return ((self.at(i), i) for i in range(len(self)))


def _digest(content: str) -> int:
    """A 63-bit digest of a content (whether a fact's words changed since indexed)."""
    h = hashlib.blake2b(content.encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 1
