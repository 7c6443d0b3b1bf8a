"""What two words are to each other for WordNet, as the merge rule (``rule.py``) asks.

``relation(x, y)``: synonyms (a shared synset in a main sense, or a derivation), antonyms
(WordNet's ``!`` pointer, also through a similar adjective or one hypernym step), one a
kind of the other, two kinds or two parts of one thing ("sibling"), two verbs of one
verb ("manner": no rival values, see ``relation``), unknown or unrelated.
``holding_verb(v)``: whether a verb means possessing or controlling (two holders of one
thing cannot both be right). Read from ``lexicon``; without WordNet every pair is
"unknown" and no verb holds (the safe side).
"""

from __future__ import annotations

import functools
import re

from synthesizer.merge.lexicon import Lexicon, lexicon
from synthesizer.merge.wordclass import STOPWORDS

__all__ = ["holding_verb", "relation"]

_MAIN_SENSES = 3  # a synonym counts in one of a word's first senses (WordNet orders by use)


@functools.lru_cache(maxsize=1 << 15)
def relation(x: str, y: str) -> str:
    """What word ``y`` is to word ``x`` for the lexicon: "synonym", "antonym", "sibling"
    (two kinds of one thing), "manner" (two verbs only under one verb), "kind" (one is a
    kind of the other), "unknown" (one is not in WordNet) or "unrelated". Symmetric."""
    lex = lexicon()
    if lex is None:
        return "unknown"
    sx, sy = lex.synsets(x), lex.synsets(y)
    if not sx or not sy:
        return "unknown"
    if _antonyms(lex, sx, sy):
        return "antonym"
    shared = set(sx) & set(sy)
    if shared:
        for p in ("n", "v", "a", "r"):
            tx, ty = lex.synsets(x, p)[:_MAIN_SENSES], lex.synsets(y, p)[:_MAIN_SENSES]
            if shared & set(tx) and shared & set(ty):
                return "synonym"
    if _derived(lex, x, y, sx, sy):
        return "synonym"
    main_x, main_y = _main(lex, x), _main(lex, y)
    up_x = {k: lex.ancestors(k, 2) for k in main_x}
    up_y = {k: lex.ancestors(k, 2) for k in main_y}
    for kx, ax in up_x.items():
        for ky, ay in up_y.items():
            if kx in ay or ky in ax:
                return "kind"  # one is a kind of the other ("customer" / "user")
    manner = False
    for kx in main_x:
        hx = set(lex.related(kx, "@ @i"))
        for ky in main_y:
            if kx[0] == ky[0] and hx & set(lex.related(ky, "@ @i")):
                if kx[0] != "v":
                    return "sibling"  # two kinds of one thing ("green" / "red")
                manner = True
    if _wholes(lex, main_x) & _wholes(lex, main_y):
        return "sibling"  # two parts of one whole ("weekday" / "weekend": parts of a week)
    if manner:
        # verbs under one verb are its manners (WordNet's troponyms: "reserve" and
        # "book", "notice" and "spot"), ways of doing one thing that one report can
        # word either way; not two values of a slot, as two kinds of a noun are
        return "manner"
    return _bridged(lex, main_x, main_y) or "unrelated"


def _wholes(lex: Lexicon, keys: tuple[str, ...]) -> set[str]:
    """The wholes the senses are a part or member of, also through one hypernym step
    ("weekday" is a "day of the week", a part of a "week"). Nouns only."""
    nouns = tuple(k for k in keys if k[0] == "n")
    return _neighbours(lex, nouns + tuple(_neighbours(lex, nouns, "@")), "#p #m")


def _main(lex: Lexicon, word: str) -> tuple[str, ...]:
    """The word's main senses: the first few of each part of speech."""
    return tuple(k for p in ("n", "v", "a", "r") for k in lex.synsets(word, p)[:_MAIN_SENSES])


def _neighbours(lex: Lexicon, keys: tuple[str, ...], symbols: str) -> set[str]:
    return {n for k in keys for n in lex.related(k, symbols)}


def _lemmas(lex: Lexicon, keys: set[str] | tuple[str, ...]) -> set[str]:
    return {lem for k in keys for lem in lex.synset(k).lemmas}


def _bridged(lex: Lexicon, sx: tuple[str, ...], sy: tuple[str, ...]) -> str | None:
    """ "kind" when one word is one step (hypernym, similar-to, also-see) from the other's
    senses, by synset or lemma ("skip" is a kind of "neglect", a sense of "ignore"), or
    two adjectives are similar to one head; "sibling" when only their hypernyms share a
    lemma ("titanium" and "steel": both a "metal"); else None."""
    up_x, up_y = _neighbours(lex, sx, "@ @i"), _neighbours(lex, sy, "@ @i")
    sim_x, sim_y = _neighbours(lex, sx, "& ^"), _neighbours(lex, sy, "& ^")
    own_x, own_y = _lemmas(lex, sx), _lemmas(lex, sy)
    near_x, near_y = up_x | sim_x, up_y | sim_y
    if near_x & set(sy) or near_y & set(sx):
        return "kind"
    if _lemmas(lex, near_x) & own_y or _lemmas(lex, near_y) & own_x:
        return "kind"
    if sim_x & sim_y:
        return "kind"  # adjectives similar to one head ("huge" / "enormous")
    if len(own_x & own_y) > 0 and not set(sx) & set(sy):
        return "kind"  # a synonym in common, in other senses ("skip" ~ "cut" ~ "ignore")
    if _lemmas(lex, up_x) & _lemmas(lex, up_y):
        return "sibling"  # nouns: two kinds of one thing, by its name
    # adjectives (organised by similarity, not by kind): a definition naming the other
    # side's near word ("outdated": "old; no longer valid", and "stale" is also-see "old")
    ax, ay = tuple(k for k in sx if k[0] == "a"), tuple(k for k in sy if k[0] == "a")
    lx = _lemmas(lex, set(ax) | _neighbours(lex, ax, "& ^")) - STOPWORDS
    ly = _lemmas(lex, set(ay) | _neighbours(lex, ay, "& ^")) - STOPWORDS
    gx = {w for k in ax for w in re.findall(r"[a-z]+", lex.synset(k).gloss)} - STOPWORDS
    gy = {w for k in ay for w in re.findall(r"[a-z]+", lex.synset(k).gloss)} - STOPWORDS
    return "kind" if lx & gy or ly & gx else None


def _derived(lex: Lexicon, x: str, y: str, sx: tuple[str, ...], sy: tuple[str, ...]) -> bool:
    """Derivationally related forms ("deploy" / "deployment"), not negative prefixes."""
    for neg in ("un", "in", "im", "il", "ir", "dis", "non"):
        if x == neg + y or y == neg + x:
            return False
    short = min(len(x), len(y))
    common = len(_common_prefix(x, y))
    if short >= 4 and common >= max(4, short - 2) and not {"-", "_"} & set(x + y):
        return True  # one word with another ending ("decide" / "decision")
    wanted = set(sy)
    return any(k2 in wanted for k in sx for k2 in lex.related(k, "+ \\ ="))


def _common_prefix(x: str, y: str) -> str:
    n = 0
    while n < min(len(x), len(y)) and x[n] == y[n]:
        n += 1
    return x[:n]


def _antonyms(lex: Lexicon, sx: tuple[str, ...], sy: tuple[str, ...]) -> bool:
    """An antonym pointer between the two words' synsets, also through one similar-to,
    also-see or hypernym step on either side."""

    def near(keys: tuple[str, ...]) -> set[str]:
        out = set(keys)
        for k in keys:
            out.update(lex.related(k, "& ^ @"))
        return out

    nx, ny = near(sx), near(sy)
    return any(a in ny for k in nx for a in lex.related(k, "!")) or any(
        a in nx for k in ny for a in lex.related(k, "!")
    )


@functools.lru_cache(maxsize=1 << 12)
def holding_verb(lemma: str) -> bool:
    """``lemma`` is a verb of possession or control in one of its two main senses."""
    lex = lexicon()
    if lex is None:
        return False
    anchors = set(lex.synsets("own", "v")) | {
        k for k in lex.synsets("control", "v") if "command" in lex.synset(k).lemmas
    }
    return any(lex.ancestors(k, 4) & anchors for k in lex.synsets(lemma, "v")[:2])
