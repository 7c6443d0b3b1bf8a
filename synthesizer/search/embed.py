"""Deterministic local text embeddings (no network, no model download).

`HashingEmbedder` maps text to a fixed-size vector with the hashing trick over
lexical features: word unigrams, word bigrams and character 3-5-grams inside
words.  It knows nothing about meaning, but it is very good at what the
synthesizer needs most — recognising the *same statement worded slightly
differently* (case, punctuation, inflection, a word added or reordered) — and
it is byte-for-byte reproducible across runs, processes and machines because
every hash is blake2b over UTF-8 (never Python's salted `hash()`).

Agents may bring their own vectors from any other embedder; they live in a
separate namespace keyed by embedder id and dimension (see `vindex`).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = [
    "DEFAULT_NEAR_DUPLICATE",
    "Embedder",
    "HashingEmbedder",
    "check_vector",
    "embedder_for",
    "embedder_names",
    "near_duplicate_of",
    "normalise",
    "register_embedder",
    "tokenize",
]

#: Near-duplicate cosine of an embedder that does not name its own.
DEFAULT_NEAR_DUPLICATE = 0.9


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into L2-normalised float32 rows of width `dim`."""

    @property
    def id(self) -> str:
        """Stable identifier of the embedding space (vectors of different ids never mix)."""
        ...

    @property
    def dim(self) -> int:
        """Width of every vector this embedder returns."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a float32 array [len(texts), dim] of L2-normalised rows."""
        ...


def near_duplicate_of(embedder: object) -> float:
    """The embedder's own near-duplicate cosine (its ``near_duplicate``, else 0.9).

    Why: the threshold belongs to the embedding space — a real embedder scores true
    paraphrases lower than the hashing one scores rewordings.
    """
    value = getattr(embedder, "near_duplicate", DEFAULT_NEAR_DUPLICATE)
    return float(value) if isinstance(value, (int, float)) else DEFAULT_NEAR_DUPLICATE


def check_vector(vec: object, dim: int) -> np.ndarray:
    """Return `vec` as a 1-D float32 array of length `dim`, or raise ValueError.

    Why: vectors arrive from agents; a wrong width or a NaN must be rejected
    at the door with a one-line message rather than poison a search later.
    """
    try:
        arr = np.asarray(vec, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"vector is not numeric: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"vector must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != dim:
        raise ValueError(f"vector has dimension {arr.shape[0]}, expected {dim}")
    if not np.isfinite(arr).all():
        raise ValueError("vector contains non-finite values (NaN or infinity)")
    return arr


def normalise(vec: np.ndarray) -> np.ndarray:
    """Return `vec` (1-D, or 2-D row-wise) scaled to unit L2 norm as float32.

    Zero vectors stay zero, so their cosine with anything is 0 instead of NaN.
    """
    arr = np.asarray(vec, dtype=np.float64)  # float64: no overflow for float32-range input
    if arr.ndim == 1:
        norm = math.sqrt(float(np.dot(arr, arr)))
        return (arr / norm if norm > 0.0 else arr).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", arr, arr))
    norms[norms == 0.0] = 1.0
    return (arr / norms[:, None]).astype(np.float32)


# --- the hashing embedder ------------------------------------------------------

# Words that carry little content: they still count, but lightly, and word
# bigrams are built over the remaining words — so adding "is"/"the"/"of"
# hardly moves a vector, while a changed noun or number does.
_STOPWORD_LIST = """
    a an the and or but nor so yet of to in on at by for with from into onto upon
    as than then that this these those there here it its is are was were be been
    being am do does did has have had having will would shall should can could may
    might must i you he she we they me him her us them my your his our their
    what which who whom whose when where why how all any both each few more most
    some such only own same too very just also about over under again further once
"""
_STOPWORDS = frozenset(_STOPWORD_LIST.split())

_TOKEN = re.compile(r"[^\W_]+")

# Feature weights, tuned on paraphrase / different-fact pairs (see
# tests/test_embed.py). Light stems and character n-grams carry most of the
# mass so inflections ("listens" / "listening") and split compounds ("dataset" /
# "data set") still match; exact unigrams and content-word bigrams sharpen
# wording and order; numbers weigh a lot because a changed number is a
# different fact ("port 8080" / "port 9090").
_W_UNIGRAM = 0.3
_W_BIGRAM = 0.25
_W_STEM = 1.2
_W_CHARS = 1.0
_W_STOP = 0.15  # multiplier for every feature of a stopword
_W_NUMBER = 2.2  # numbers have no useful char n-grams: one strong unigram instead


def _fold(text: str) -> str:
    """NFKC + casefold, drop apostrophes ("don't" -> "dont"), strip accents ("café" -> "cafe")."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("'", "")
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text.replace("\u2019", "").replace("\u02bc", ""))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def tokenize(text: str) -> list[str]:
    """Return the folded word tokens of `text` (letters/digits runs; `_` splits)."""
    return _TOKEN.findall(_fold(text))


class _Vocabulary:
    """Bounded token cache: token -> its sparse hashed features, stored CSR-style.

    Why: hashing a word's ~20 character n-grams with blake2b is the expensive
    part of embedding; natural text reuses few words, so each is hashed once and
    later batches only gather precomputed (bucket, weight) runs with numpy.
    When the cache outgrows `max_words` it is cleared between batches; results
    never depend on what is cached (features are pure functions of the token).
    """

    def __init__(self, dim: int, max_words: int) -> None:
        self.dim = dim
        self.max_words = max_words
        self.clear()

    def clear(self) -> None:
        """Forget every cached token."""
        self.ids: dict[str, int] = {}
        self.ptr = np.zeros(1024 + 1, dtype=np.int64)  # features of word w: ptr[w]:ptr[w+1]
        self.word_hash = np.zeros(1024, dtype=np.uint64)  # seed of the word's bigrams
        self.is_stop = np.zeros(1024, dtype=bool)
        self.feat_idx = np.zeros(16384, dtype=np.int64)
        self.feat_val = np.zeros(16384, dtype=np.float64)
        self.n_feat = 0

    def add_many(self, words: list[str]) -> None:
        """Compute and store the features of each new word (known ones are skipped).

        The arrays are written once per call rather than once per word: a batch of
        fresh text brings thousands of new words (numbers, names) at a time.
        """
        fresh = [w for w in dict.fromkeys(words) if w not in self.ids]
        if not fresh:
            return
        first, count = len(self.ids), len(fresh)
        cap = self.word_hash.shape[0]
        while first + count + 1 >= cap:
            cap *= 2
        if cap != self.word_hash.shape[0]:
            self.word_hash = _grown(self.word_hash, cap)
            self.is_stop = _grown(self.is_stop, cap)
            self.ptr = _grown(self.ptr, cap + 1)
        feats = [_word_features(word, self.dim) for word in fresh]
        sizes = np.fromiter((len(b) for b, _ in feats), dtype=np.int64, count=count)
        start = self.n_feat
        end = start + int(sizes.sum())
        if end > self.feat_idx.shape[0]:
            grow = max(end, self.feat_idx.shape[0] * 2)
            self.feat_idx = _grown(self.feat_idx, grow)
            self.feat_val = _grown(self.feat_val, grow)
        chain = itertools.chain.from_iterable
        self.feat_idx[start:end] = np.fromiter(chain(b for b, _ in feats), np.int64, end - start)
        self.feat_val[start:end] = np.fromiter(chain(w for _, w in feats), np.float64, end - start)
        self.n_feat = end
        self.ptr[first + 1 : first + count + 1] = start + np.cumsum(sizes)
        self.word_hash[first : first + count] = np.fromiter(
            (_hash64("b:" + word) for word in fresh), dtype=np.uint64, count=count
        )
        self.is_stop[first : first + count] = [word in _STOPWORDS for word in fresh]
        self.ids.update(zip(fresh, range(first, first + count), strict=True))


def _grown(arr: np.ndarray, size: int) -> np.ndarray:
    """Return a copy of `arr` extended with zeros to `size` entries."""
    out = np.zeros(size, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out


@functools.lru_cache(maxsize=1 << 18)
def _hash64(feature: str) -> int:
    """Deterministic 64-bit hash of a feature string (blake2b-8 of its UTF-8)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """Very light English stemmer: "listens"/"listening" -> "listen", "uses"/"using" -> "us".

    Why: inflections are the commonest difference between two wordings of one
    fact, and short words share too few character n-grams to match otherwise.
    """
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def _word_features(word: str, dim: int) -> tuple[list[int], list[float]]:
    """Signed hashed features of one token: its unigram plus its char 3-5-grams."""
    acc: dict[int, float] = {}

    def put(feature: str, weight: float) -> None:
        h = _hash64(feature)
        bucket = (h >> 1) % dim
        acc[bucket] = acc.get(bucket, 0.0) + (weight if h & 1 else -weight)

    scale = _W_STOP if word in _STOPWORDS else 1.0
    if word.isdigit():
        put("w:" + word, _W_NUMBER * scale)
    else:
        put("w:" + word, _W_UNIGRAM * scale)
        put("s:" + _stem(word), _W_STEM * scale)
        marked = f"<{word}>"
        grams = [marked[i : i + n] for n in (3, 4, 5) for i in range(len(marked) - n + 1)]
        if grams:
            # Each word's char part has norm ~_W_CHARS whatever the word's length.
            weight = _W_CHARS * scale / math.sqrt(len(grams))
            for gram in grams:
                put("c:" + gram, weight)
    buckets = list(acc)
    return buckets, [acc[b] for b in buckets]


_SMALL_BATCH = 4  # up to this many texts, build features in Python (lower fixed cost)

_TF_TABLE: list[float] = [0.0, 1.0]  # _TF_TABLE[c] == 1 + ln(c), via math.log only


def _tf_weight(count: int) -> float:
    """Sublinear term-frequency weight 1 + ln(count), from one shared table."""
    while count >= len(_TF_TABLE):
        _TF_TABLE.extend(1.0 + math.log(c) for c in range(len(_TF_TABLE), 2 * len(_TF_TABLE)))
    return _TF_TABLE[count]


def _tf_weights(counts: np.ndarray) -> np.ndarray:
    """Vector form of `_tf_weight` (same table, so the same bits as the scalar form)."""
    if counts.shape[0]:
        _tf_weight(int(counts.max()))
    return np.asarray(_TF_TABLE, dtype=np.float64)[counts]


# splitmix64 constants: mixing two word hashes into an order-sensitive bigram hash.
_K0 = np.uint64(0x9E3779B97F4A7C15)
_K1 = np.uint64(0xBF58476D1CE4E5B9)
_K2 = np.uint64(0x94D049BB133111EB)
_ONE = np.uint64(1)


def _bigram_hash(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Mix uint64 word hashes pairwise (order matters) with a splitmix64 finaliser."""
    x = (first * _K0) ^ second
    x ^= x >> np.uint64(30)
    x *= _K1
    x ^= x >> np.uint64(27)
    x *= _K2
    x ^= x >> np.uint64(31)
    return x


class HashingEmbedder:
    """Signed feature hashing of words, content-word bigrams and char 3-5-grams.

    Why: a deterministic, dependency-free default embedder that scores
    near-duplicate wording >= 0.9 while different facts on the same topic stay
    lower, and embeds tens of thousands of short sentences per second.
    Features: word unigrams and char n-grams (with `<`/`>` word-boundary marks)
    weighted by 1 + ln(tf) of their word; bigrams of consecutive non-stopwords;
    stopwords weighted down; numbers as one strong unigram. Not thread-safe
    (one cache per instance): use one instance per thread.
    """

    VERSION = "hash-v1"
    #: Cosine at or above which two memories are the same statement (exact rewordings
    #: score >= 0.9 here; different facts on one topic stay below 0.8).
    near_duplicate = DEFAULT_NEAR_DUPLICATE

    def __init__(self, dim: int = 384, *, cache_words: int = 1 << 17) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValueError(f"dim must be an integer >= 8, got {dim!r}")
        self._dim = dim
        self._id = f"{self.VERSION}-{dim}"
        self._vocab = _Vocabulary(dim, cache_words)

    @property
    def id(self) -> str:
        """Embedder id, e.g. "hash-v1-384"; changes whenever vectors would change."""
        return self._id

    @property
    def dim(self) -> int:
        """Vector width."""
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed a batch: float32 [len(texts), dim], rows L2-normalised (no words -> zeros).

        Each row depends only on its own text (never on the batch or the cache),
        so `embed([a, b])[0]` and `embed_one(a)` are byte-identical.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts; use embed_one() for one text")
        n = len(texts)
        vocab = self._vocab
        if len(vocab.ids) > vocab.max_words:
            vocab.clear()
        findall = _TOKEN.findall
        token_lists = [findall(_fold(text)) for text in texts]
        known = vocab.ids
        missing = [
            t for t in dict.fromkeys(itertools.chain.from_iterable(token_lists)) if t not in known
        ]
        if missing:
            vocab.add_many(missing)
        if n <= _SMALL_BATCH:
            flat_idx, flat_val = self._features_small(token_lists)
        else:
            flat_idx, flat_val = self._features_batch(token_lists)
        dim = self._dim
        mat = np.bincount(flat_idx, weights=flat_val, minlength=n * dim).reshape(n, dim)
        # Same kernel for every row, so a row's bits never depend on the batch size.
        norms = np.sqrt(np.einsum("ij,ij->i", mat, mat))
        norms[norms == 0.0] = 1.0
        return (mat / norms[:, None]).astype(np.float32)

    def embed_one(self, text: str) -> np.ndarray:
        """Embed a single text: float32 [dim], unit norm (or all zeros for no words)."""
        return self.embed([text])[0]

    def _features_small(self, token_lists: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Flat (bucket + row*dim, weight) features of a few texts, built in Python.

        Same features in the same per-row order as `_features_batch`, without
        its fixed numpy overhead (which dominates for one short query).
        """
        vocab = self._vocab
        known = vocab.ids
        ptr = vocab.ptr
        dim = self._dim
        idx_parts: list[np.ndarray] = []
        val_parts: list[np.ndarray] = []
        for row, tokens in enumerate(token_lists):
            tf: dict[str, int] = {}
            for tok in tokens:
                tf[tok] = tf.get(tok, 0) + 1
            offset = row * dim
            for tok, count in tf.items():
                wid = known[tok]
                a, b = int(ptr[wid]), int(ptr[wid + 1])
                idx_parts.append(vocab.feat_idx[a:b] + offset)
                val_parts.append(vocab.feat_val[a:b] * _tf_weight(count))
            wids = np.fromiter((known[t] for t in tokens), dtype=np.int64, count=len(tokens))
            content = wids[~vocab.is_stop[wids]]
            if content.shape[0] > 1:
                h = _bigram_hash(vocab.word_hash[content[:-1]], vocab.word_hash[content[1:]])
                idx_parts.append(((h >> _ONE) % np.uint64(dim)).astype(np.int64) + offset)
                val_parts.append(np.where((h & _ONE).astype(bool), _W_BIGRAM, -_W_BIGRAM))
        if not idx_parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        return np.concatenate(idx_parts), np.concatenate(val_parts)

    def _features_batch(self, token_lists: list[list[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Flat (bucket + row*dim, weight) features of many texts, vectorised."""
        vocab = self._vocab
        known = vocab.ids
        dim = self._dim
        n = len(token_lists)
        lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=n)
        tokens = list(itertools.chain.from_iterable(token_lists))
        wids = np.fromiter(map(known.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        sent = np.repeat(np.arange(n, dtype=np.int64), lengths)

        # Word-level term frequency, in first-occurrence order within each text
        # (a canonical summation order: vectors never depend on cache history).
        key = sent * max(len(known), 1) + wids
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        order = np.argsort(first, kind="stable")
        first = first[order]
        u_sent = sent[first]
        u_wid = wids[first]
        tf_weight = _tf_weights(counts[order])

        starts = vocab.ptr[u_wid]
        runs = vocab.ptr[u_wid + 1] - starts
        total = int(runs.sum())
        run_start = np.cumsum(runs) - runs
        pos = np.arange(total, dtype=np.int64) + np.repeat(starts - run_start, runs)
        word_idx = vocab.feat_idx[pos] + np.repeat(u_sent * dim, runs)
        word_val = vocab.feat_val[pos] * np.repeat(tf_weight, runs)

        # Bigrams of consecutive content words of the same text.
        content = ~vocab.is_stop[wids]
        c_wid = wids[content]
        c_sent = sent[content]
        same = c_sent[1:] == c_sent[:-1]
        h = _bigram_hash(vocab.word_hash[c_wid[:-1][same]], vocab.word_hash[c_wid[1:][same]])
        bi_idx = ((h >> _ONE) % np.uint64(dim)).astype(np.int64) + c_sent[1:][same] * dim
        bi_val = np.where((h & _ONE).astype(bool), _W_BIGRAM, -_W_BIGRAM)
        return np.concatenate([word_idx, bi_idx]), np.concatenate([word_val, bi_val])


# ---------------------------------------------------------------- registry


@functools.lru_cache(maxsize=1)
def _minilm() -> Embedder:
    """all-MiniLM-L6-v2 (extra ``embed``); without the extra, a one-line ``MissingExtra``.

    One instance per process: the model is read-only and its runs are locked, and every
    swarm opened here would otherwise load its own copy (~25 MB, ~0.5 s).
    """
    from synthesizer.search.minilm import MiniLMEmbedder  # optional dependencies: only when chosen

    return MiniLMEmbedder()


_FACTORIES: dict[str, Callable[[], Embedder]] = {"hash": HashingEmbedder, "minilm": _minilm}


def register_embedder(name: str, factory: Callable[[], Embedder]) -> None:
    """Make ``embedder_for(name)`` build embedders with ``factory`` (optional extras use it)."""
    _FACTORIES[name] = factory


def embedder_names() -> list[str]:
    """Names ``embedder_for`` can build in this process, sorted."""
    return sorted(_FACTORIES)


def embedder_for(name: str) -> Embedder:
    """The embedder a swarm's configuration names (``embedder=hash`` ...).

    Why: the configuration in the log says which embedder every process uses; an
    unknown or unavailable name is a one-line error rather than a silent fallback.
    """
    factory = _FACTORIES.get(name)
    if factory is None:
        from synthesizer.errors import UnknownEmbedder

        raise UnknownEmbedder(name, embedder_names())
    return factory()
