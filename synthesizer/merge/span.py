"""One differing span of two aligned statements: a rewording, or a slot (and which).

The merge rule (``rule``) aligns two statements and hands each span that differs here:
the marked tokens decide first (the ends of a path, quantities, hedges), then the words,
by their relation in the lexicon (``wordrel``), word for word, and last, where that is
evidence, by the embedder's cosine of the two spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import StrEnum

from synthesizer.merge.lexicon import lexicon
from synthesizer.merge.statement import Tok, key_base, lemma
from synthesizer.merge.wordclass import BOUNDS, HEDGES, OCCURRENCE
from synthesizer.merge.wordrel import relation

__all__ = ["SPAN_SAME", "Span", "SpanSim", "judge_span"]

SPAN_SAME = 0.5
"""Embedder cosine of two differing spans at or above which, when the lexicon knows no
reason to keep them apart, they are a rewording of each other."""

SpanSim = Callable[[str, str], float]
"""The embedder's cosine of two spans' texts."""


class Span(StrEnum):
    """What one differing span of an aligned pair is: a rewording, unsure (the lexicon
    cannot place it), or a slot, named by its reason (the value a verdict records)."""

    REWORDING = "rewording"
    UNSURE = "unsure"
    NUMBER = "number"  # another quantity
    UNIT = "unit"  # another unit of one quantity
    NAME = "name"  # a name swapped for another
    ANTONYM = "antonym"
    SIBLING = "sibling"  # two kinds (or parts) of one thing
    ADDED = "added"  # a word on one side only
    WORD = "word"  # another content word
    HEDGE = "hedge"  # a hedge added, or of another class
    SCALE = "scale"  # two hedges of one scale leaning opposite ways
    DIRECTION = "direction"  # the ends of a path swapped


def judge_span(
    xs: tuple[Tok, ...],
    ys: tuple[Tok, ...],
    span_sim: SpanSim | None,
    modifier: bool = False,
) -> Span:
    """What span ``xs`` against span ``ys`` is: the marked tokens decide first (path ends,
    quantities, hedges), then the words, by their lexical relation, word for word, and
    last by the embedder (``modifier``: the spans name which of one shared head)."""
    bases_x, bases_y = sorted(key_base(t.key) for t in xs), sorted(key_base(t.key) for t in ys)
    if bases_x == bases_y and sorted(t.key for t in xs) != sorted(t.key for t in ys):
        return Span.DIRECTION  # "from Oslo" / "to Oslo", "from A to B" / "from B to A"
    # (other words too: they decide, each verb has its prepositions: "connected to" /
    # "disconnected from")
    xs = tuple(Tok(key_base(t.key), t.text, t.name, t.pos) for t in xs)
    ys = tuple(Tok(key_base(t.key), t.text, t.name, t.pos) for t in ys)
    marked = _marked(xs, ys)
    if marked is not None:
        return marked
    wx = [t for t in xs if t.key[0] not in "#~^"]
    wy = [t for t in ys if t.key[0] not in "#~^"]
    if not wx and not wy:
        return Span.REWORDING
    if _glued(wx) == _glued(wy):
        return Span.REWORDING  # "start-up" / "startup", "rate limiter" / "rate-limiter"
    if not wx or not wy:
        return _added(wx or wy)
    if any(t.name for t in wx + wy):
        names_x = {t.key for t in wx if t.name}
        names_y = {t.key for t in wy if t.name}
        if names_x and names_y and names_x != names_y:
            return Span.NAME  # a name swapped for another
    if len(wx) == len(wy) == 1 and _compound(wx[0].text) and _compound(wy[0].text):
        wx, wy = _one_part(wx, wy)
    rels = [relation(key_base(x.key), key_base(y.key)) for x in wx for y in wy]
    related = _by_relation(wx, wy, rels, modifier)
    if related is not None:
        return related
    if len(wx) == len(wy) > 1:
        each = _word_for_word(wx, wy, span_sim, modifier)
        if each is not None:
            return each
    return _by_embedder(wx, wy, rels, span_sim, modifier)


def _marked(xs: tuple[Tok, ...], ys: tuple[Tok, ...]) -> Span | None:
    """The slot the quantities or the hedges of two spans show, None when they agree."""
    nums_x = sorted(t.key for t in xs if t.key[0] in "#~")
    nums_y = sorted(t.key for t in ys if t.key[0] in "#~")
    if nums_x != nums_y:
        return Span.NUMBER if any(k[0] == "#" for k in nums_x + nums_y) else Span.UNIT
    return _hedge_slot(
        [t.key for t in xs if t.key[0] == "^"], [t.key for t in ys if t.key[0] == "^"]
    )


def _added(added: list[Tok]) -> Span:
    """Words on one side only: a rewording when they are adverbs only ("currently",
    "always") or a verb of occurrence alone (``OCCURRENCE``: an event named happens),
    else a word added."""
    lex = lexicon()
    if lex is not None and all(lex.pos_of(t.text) == {"r"} for t in added):
        return Span.REWORDING
    if all(key_base(t.key) in OCCURRENCE for t in added):
        return Span.REWORDING  # "the landslide happened" / "the landslide"
    return Span.ADDED


def _one_part(wx: list[Tok], wy: list[Tok]) -> tuple[list[Tok], list[Tok]]:
    """Two compounds that differ in one part ("read-only" / "read-write"): that part of
    each, as the words to judge; else the compounds as they are."""
    lex = lexicon()
    px = [lemma(w, lex) for w in re.split(r"[-_]", wx[0].text)]
    py = [lemma(w, lex) for w in re.split(r"[-_]", wy[0].text)]
    if len(px) != len(py) or sum(a != b for a, b in zip(px, py, strict=True)) != 1:
        return wx, wy
    x, y = next((a, b) for a, b in zip(px, py, strict=True) if a != b)
    return [Tok(x, x, False, wx[0].pos)], [Tok(y, y, False, wy[0].pos)]


def _by_relation(wx: list[Tok], wy: list[Tok], rels: list[str], modifier: bool) -> Span | None:
    """The span by the lexicon's relations of its words (``rels``, each word of ``wx``
    against each of ``wy``): an antonym, a synonym, a sibling; None when they do not tell."""
    if "antonym" in rels:
        return Span.ANTONYM
    if len(wx) == len(wy) == 1:
        rel = rels[0]
        if rel != "synonym" and relation(wx[0].text, wy[0].text) == "synonym":
            rel = "synonym"  # the words as written ("gifted" / "talented": an adjective
            # each, though "gifted" is also "gift" inflected, the lemma the key holds)
        if rel == "synonym":
            return Span.REWORDING
        if rel == "sibling":
            return Span.SIBLING
        if rel == "manner":
            return Span.UNSURE  # two ways of one action: a rewording, or another act
        if rel == "unrelated" and modifier:
            return Span.WORD  # another modifier of one head: another thing
    elif all(
        any(relation(key_base(x.key), key_base(y.key)) == "synonym" for y in wy) for x in wx
    ) and all(any(relation(key_base(x.key), key_base(y.key)) == "synonym" for x in wx) for y in wy):
        return Span.REWORDING
    if "sibling" in rels:
        return Span.SIBLING  # two kinds of one thing among the words: another value
    return None


def _word_for_word(
    wx: list[Tok], wy: list[Tok], span_sim: SpanSim | None, modifier: bool
) -> Span | None:
    """As many words on each side, read word for word: each pair that is not the same
    word or a synonym judged as one word for one word; a slot among them is the span's
    ("evening classes" / "weekend courses" is "evening" / "weekend", not a paraphrase of
    a span the embedder reads alike). None when the pairs do not settle it."""
    kinds = [
        judge_span((x,), (y,), span_sim, modifier)
        for x, y in zip(wx, wy, strict=True)
        if x.key != y.key and relation(x.key, y.key) != "synonym"
    ]
    slot = next((k for k in kinds if k not in (Span.REWORDING, Span.UNSURE)), None)
    if slot is not None:
        return slot
    if kinds and all(k is Span.REWORDING for k in kinds):
        return Span.REWORDING
    return None


def _by_embedder(
    wx: list[Tok], wy: list[Tok], rels: list[str], span_sim: SpanSim | None, modifier: bool
) -> Span:
    """The span the lexicon could not place, read by the embedder where that is evidence.

    A paraphrase of a span (words on both sides) the lexicon has no rival for is a
    rewording when the embedder reads the two alike; a word for a phrase it reads alike
    ("moved out" / "left the apartment") cannot be told; one word for one word it reads
    alike is no evidence (embedders place antonyms and siblings near each other too), so
    there the lexicon's silence decides: another value.
    """
    x_text = " ".join(t.text for t in wx)
    y_text = " ".join(t.text for t in wy)
    if "unrelated" in rels or "unknown" in rels:
        near = span_sim is not None and span_sim(x_text, y_text) >= SPAN_SAME
        if near and len(wx) > 1 and len(wy) > 1:
            return Span.REWORDING
        return Span.UNSURE if near and len(wx) != len(wy) else Span.WORD
    if modifier and "kind" in rels:
        return Span.WORD  # a modifier swapped for a broader or narrower one: another thing
    if span_sim is not None and span_sim(x_text, y_text) >= SPAN_SAME:
        return Span.REWORDING
    # one word for a broader or narrower one the embedder does not read alike ("fixes" /
    # "introduces", "author" / "reviewer": WordNet puts each under the other within two
    # steps in some sense): never a rival value by itself, never a rewording either. (The
    # embedder's cosine of the two in their frame, one shared word either side, is no
    # evidence: the shared words carry it to 0.85-0.90 for rivals and rewordings alike.)
    return Span.UNSURE if (len(wx) > 1 or len(wy) > 1 or "kind" in rels) else Span.WORD


def _compound(w: str) -> bool:
    """A hyphenated word or a joined collocation ("read-only", "rounded_up")."""
    return "-" in w or "_" in w


def _glued(toks: list[Tok]) -> str:
    return "".join(t.text for t in toks).replace("-", "")


def _hedge_slot(hx: list[str], hy: list[str]) -> Span | None:
    """How two spans' hedges (``wordclass.HEDGES``, as token keys) differ: None when they
    are the same classes, "scale" when one hedge each, on one scale, leaning opposite
    ways ("few" / "many", "seldom" / "usually"), else "hedge" (one added, or another
    class: "may" / "must", "some" / "most", "almost" / none)."""
    if sorted(hx) == sorted(hy):
        return None
    if len(hx) == len(hy) == 1:
        (sx, lx), (sy, ly) = _LEANS[key_base(hx[0])], _LEANS[key_base(hy[0])]
        if sx == sy and lx * ly < 0:
            return Span.SCALE
    return Span.HEDGE


_LEANS = {
    **{f"^{scale}:{name}": (scale, lean) for scale, name, lean in HEDGES.values()},
    **{f"^bound:{name}": ("bound", lean) for name, lean in BOUNDS.values()},
}
"""A hedge or bound token's key -> (its scale, its lean)."""
