"""A statement as the merge rule reads it (``rule``): its tokens, polarity and verb.

``parse(text)`` turns a statement into content lemmas (WordNet's morphology, two-word
collocations joined), quantities in base units, hedges by class, the ends of a path and
the clauses of time or condition in the keys of the words they mark, a polarity (the
parity of its negations) and where its verb is; ``active`` reads a passive agent first.
Closed-class English comes from ``wordclass``, every content word from ``lexicon``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from synthesizer.merge.lexicon import Lexicon, lexicon
from synthesizer.merge.wordclass import (
    AUX,
    BARE_ONLY,
    BE,
    BOUNDS,
    BOUNDS_AFTER,
    CALENDAR,
    CLAUSE_START,
    DETERMINERS,
    DIRECTIONS,
    FRACTIONS,
    HEDGES,
    INDEFINITE,
    MULTIPLIERS,
    NEGATING_VERBS,
    NEGATIONS,
    NUMBER_START,
    NUMBER_WORDS,
    PARTICLES,
    STOPWORDS,
    UNITS,
    UNIVERSAL,
    canon,
    number_of,
    stem,
    unknown_base,
)

_WORD = re.compile(r"\d+(?:[.,:]\d+)*[^\W\d_]*|[^\W\d_]+(?:[-.]?[^\W_]+)*")


@dataclass(frozen=True)
class Tok:
    key: str  # what alignment compares: a lemma, "#dim:value", or "~dim:unit"
    text: str  # the word(s) as written (folded)
    name: bool  # a proper name or identifier (capitalised inside a sentence, digits, …)
    pos: int  # index among all words (function words included)


@dataclass(frozen=True)
class Parsed:
    toks: tuple[Tok, ...]
    words: tuple[str, ...]  # every word, folded (function words included)
    negated: bool
    verb_at: int  # index among all words of the first verb (len(words) when none)
    by_at: int  # index among all words of a passive's "by" before its agent (-1: none)


def with_value(text: str, words: Sequence[str], value: str) -> str | None:
    """``text`` (folded as ``parse`` reads it) with the one place its ``words`` (as
    ``parse`` split them) are written replaced by ``value``; None when they are written
    in no place or in several."""
    if not words:
        return None
    pattern = r"(?<!\w)" + r"[\W_]*".join(re.escape(w) for w in words) + r"(?!\w)"
    folded = _fold(text)
    found = list(re.finditer(pattern, folded, flags=re.IGNORECASE))
    if len(found) != 1:
        return None
    m = found[0]
    return folded[: m.start()] + value + folded[m.end() :]


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"['\u2019]s\b", "", text)  # possessive
    text = re.sub(r"\$\s?(\d[\d,.]*)", r" \1 dollars ", text)
    text = re.sub(r"€\s?(\d[\d,.]*)", r" \1 euros ", text)
    return text.replace("'", "").replace("\u2019", "").replace("%", " percent ")


@functools.lru_cache(maxsize=1 << 16)
def lemma(word: str, lex: Lexicon | None) -> str:
    """One canonical base form (the same for "shows", "showed" and "show")."""
    if lex is None:
        return stem(word)
    bases = [b for p in ("v", "n", "a", "r") for b in lex.bases(word, p)]
    if not bases:
        return _unknown(word, lex)
    return min(bases, key=lambda b: (len(b), b))


def _unknown(word: str, lex: Lexicon) -> str:
    """The key of a word the lexicon does not know: one for its regular inflections
    (``unknown_base``: "mislabels" / "mislabelled"), unless that base is a word the
    lexicon knows ("sharding" is not "shard", "https" not "http"): then, like a name,
    the word as written."""
    base = unknown_base(word)
    if base != word and (lex.known(base) or lex.known(base + "e")):
        return word
    return base


def _unknown_past(w: str, lex: Lexicon) -> bool:
    """``w`` is a regular past form ("-ed") of a verb the lexicon does not know
    ("mislabelled", "requeued"), read as one."""
    return w.endswith("ed") and not lex.pos_of(w) and _unknown(w, lex) != w


@functools.lru_cache(maxsize=1 << 14)
def parse(text: str) -> Parsed:
    """The statement as the rule compares it (cached: facts are compared many times)."""
    lex = lexicon()
    raw = _fold(text)
    spans = list(_WORD.finditer(raw))
    words = [m.group().casefold() for m in spans]
    names = [_is_name(raw, m) for m in spans]
    r = _Reading(words, names, spans, lex)
    i, n = 0, len(words)
    while i < n:  # each word read (with the words it takes along): grammar, then content
        w = words[i]
        if w in AUX and r.verb_at < 0 and not names[i]:  # ("in May": a name)
            r.verb_at = i
        if names[i] and len(w) == 1 and w != "i":  # "service A", "plan B": a label, not
            r.toks.append(Tok(w, w, True, i))  # the article (a capital inside a sentence)
            i += 1
            continue
        after = _read_grammar(r, i, w)
        i = after if after is not None else _read_content(r, i, w)
    aux = next((k for k, w in enumerate(words) if w in AUX and not names[k]), -1)
    verb_at = aux if aux >= 0 else r.verb_at  # an auxiliary over a guess by morphology
    verb_at = n if verb_at < 0 else verb_at
    by_at = _agent_at(words, verb_at, lex)
    toks = [_directed(t, words, names, lex) for t in r.toks]
    return Parsed(_elide(toks), tuple(words), r.negations % 2 == 1, verb_at, by_at)


@dataclass(slots=True)
class _Reading:
    """A statement being read word by word: its words, which are names, the tokens so
    far, the negations counted and where the verb is (-1: not found yet)."""

    words: list[str]
    names: list[bool]
    spans: list[re.Match[str]]
    lex: Lexicon | None
    toks: list[Tok] = field(default_factory=list)
    negations: int = 0
    verb_at: int = -1


def _read_grammar(r: _Reading, i: int, w: str) -> int | None:
    """The closed-class readings of the word at ``i``: a hedge (kept, by its class: "may" /
    "must", "some" / "all" differ), "not all", a negation, "able to", a negating verb.
    The index after the words read, None when the word is none of these."""
    words, n = r.words, len(r.words)
    bound = _bound_at(words, i)
    if bound is not None:  # "over 50 percent", "fewer than ten": the bound, not two words
        name, after = bound
        r.toks.append(Tok(f"^bound:{name}", " ".join(words[i:after]), False, i))
        return after
    late = BOUNDS_AFTER.get(tuple(words[i : i + 2]))
    at = _bounded(r.toks) if late is not None else None
    if late is not None and at is not None:  # "three or more", "500 messages or fewer":
        q = r.toks[at]  # read as the bound before the quantity ("at least three")
        r.toks.insert(at, Tok(f"^bound:{late[0]}", " ".join(words[i : i + 2]), False, q.pos))
        return i + 2
    hedge = w in HEDGES and not r.names[i]  # not "at most", "the most" (a bound, a superlative)
    hedge = hedge and not (w == "most" and i and words[i - 1] in ("at", "the"))
    if hedge and HEDGES[w][0] == "time":  # only before a word of the calendar ("last week")
        hedge = i + 1 < n and words[i + 1] in CALENDAR
    if hedge:
        scale, name, _ = HEDGES[w]
        if w == "few" and i and words[i - 1] == "a":
            name = "some"  # ("a few" is "some"; "few" is "not many")
        r.toks.append(Tok(f"^{scale}:{name}", w, False, i))
    if w == "not" and i + 1 < n and words[i + 1] in UNIVERSAL:
        r.toks.append(Tok("^quantity:some", "not " + words[i + 1], False, i))
        r.negations += 1  # ("not all X are" = "some X are not"; not "no X are")
        return i + 2
    if w in NEGATIONS:
        r.negations += 1
        return i + 1
    if hedge:
        return i + 1
    if w in ("able", "unable") and i + 1 < n and words[i + 1] == "to":  # "can", "cannot"
        r.toks.append(Tok("^modal:may", w, False, i))
        r.negations += w == "unable"
        if r.verb_at < 0:
            r.verb_at = i
        return i + 2
    if w in NEGATING_VERBS and i + 1 < n and words[i + 1] == "to":
        r.negations += 1
        if r.verb_at < 0:
            r.verb_at = i
        return i + 2
    return None


def _bounded(toks: list[Tok]) -> int | None:
    """The place among ``toks`` of the quantity a bound said after it applies to: the
    last token, or the one before a last word ("500 messages or fewer"); None when
    neither is a quantity, or it is bounded already."""
    for at in range(len(toks) - 1, max(-1, len(toks) - 3), -1):
        if toks[at].key[0] == "#":
            return None if at and toks[at - 1].key.startswith("^bound:") else at
    return None


def _bound_at(words: Sequence[str], i: int) -> tuple[str, int] | None:
    """(the bound, the index of its quantity) when a bound phrase (``BOUNDS``) starts at
    ``i`` and a quantity follows it ("over 20", "more than half of", "under a minute");
    None otherwise ("over the bridge", "under a bridge")."""
    for size in (3, 2, 1):
        phrase = tuple(words[i : i + size])
        if phrase in BOUNDS and _quantity_at(words, i + size):
            return BOUNDS[phrase][0], i + size
    return None


def _quantity_at(words: Sequence[str], k: int) -> bool:
    """Whether a quantity starts at ``k``: digits, a number or fraction word, or an
    indefinite article before a unit ("a minute")."""
    if k >= len(words):
        return False
    w = words[k]
    if w[0].isdigit() or (w in NUMBER_START and w not in INDEFINITE):
        return True
    return w in INDEFINITE and k + 1 < len(words) and words[k + 1] in UNITS


def _read_content(r: _Reading, i: int, w: str) -> int:
    """The other readings of the word at ``i``: a quantity, a function word (dropped), a
    phrasal verb WordNet knows, a unit, else a content word (or name); the index after."""
    words, n, lex = r.words, len(r.words), r.lex
    value = _number_at(words, i) if w[0].isdigit() or w in NUMBER_START or "-" in w else None
    if value is not None:
        v, j, dim = value
        r.toks.append(Tok(f"#{dim}:{canon(v)}", " ".join(words[i:j]), False, i))
        return j
    if w in STOPWORDS or w == "one":
        return i + 1
    if (
        lex is not None
        and i + 1 < n
        and words[i + 1] in PARTICLES
        and (i + 2 >= n or words[i + 2] not in DETERMINERS)  # "builds on the branch":
        and not (i + 2 < n and (_quantity_at(words, i + 2) or words[i + 2] in CALENDAR))
    ):  # a preposition before a noun phrase (or a date: "closed in 1998"), no particle
        pair = f"{w}_{words[i + 1]}"
        lem = lemma(pair, lex)
        if lem != stem(pair) or lex.known(pair):  # a collocation WordNet knows
            r.toks.append(Tok(lem, pair, False, i))
            if r.verb_at < 0 and r.toks[:-1]:
                r.verb_at = i
            return i + 2
    if w in UNITS and w not in BARE_ONLY:
        r.toks.append(Tok(f"~{UNITS[w][0]}:{stem(w)}", w, False, i))
        return i + 1
    if r.verb_at < 0 and r.toks and _verb_form(w, _before(words, i), lex):
        r.verb_at = i
    key = _name_key(w, r.spans[i].group()) if r.names[i] else lemma(w, lex)
    r.toks.append(Tok(key, w, r.names[i], i))
    return i + 1


def _directed(t: Tok, words: Sequence[str], names: Sequence[bool], lex: Lexicon | None) -> Tok:
    """The token with its end of a path (``wordclass.DIRECTIONS``) in its key when the
    function words right before it hold "from" or "to" ("Oslo<from"), so that aligning
    two statements matches where a thing goes, not only what is named. Not after the
    "to" of an infinitive (a verb's base form right after it: "plans to migrate")."""
    k = t.pos - 1
    while k >= 0 and words[k] in STOPWORDS:
        if k and (words[k - 1], words[k]) in BOUNDS and _bound_at(words, k - 1):
            return t  # "more than 20": a bound (its own token), not a comparison's side
        end = DIRECTIONS.get(words[k])
        if words[k] == "once" and words[k + 1] in CLAUSE_START:
            end = "when"  # ("once the pressure drops"; "once a day" is a number)
        if end is not None:
            if end == "to" and k == t.pos - 1 and not names[t.pos] and _base_verb(t.text, lex):
                return t
            if end == "to" and k + 1 < t.pos and words[k + 1] in AUX:
                return t  # an infinitive's auxiliary ("caused the train to be diverted")
            return Tok(f"{t.key}<{end}", t.text, t.name, t.pos)
        k -= 1
    return t


def _base_verb(w: str, lex: Lexicon | None) -> bool:
    """``w`` is a verb's base form (WordNet knows it as one)."""
    return lex is not None and w in lex.bases(w, "v")


def key_base(key: str) -> str:
    """A token key without its end of a path ("oslo<from" -> "oslo")."""
    return key.split("<", 1)[0]


def path_end(key: str) -> str:
    """A token key's end of a path ("from", "to"), "" when it has none."""
    return key.partition("<")[2]


def _agent_at(words: Sequence[str], verb_at: int, lex: Lexicon | None) -> int:
    """Where a passive's agent is introduced: the first "by" after a form of "be" (or
    "get") and a past participle ("the tasks *are retried* three times *by* the
    scheduler"); -1 when the statement is not such a passive ("due by Friday", "grew by
    five percent")."""
    be = next((k for k in range(verb_at, len(words)) if words[k] in BE), -1)
    if be < 0:
        return -1
    participle = False
    for k in range(be + 1, len(words)):
        w = words[k]
        if w == "by":
            return k if participle else -1
        participle = participle or _participle(w, lex)
    return -1


def _participle(w: str, lex: Lexicon | None) -> bool:
    """``w`` reads as a verb's past participle ("paid", "hired", "written"): a regular
    one, or an irregular form that is neither a present participle nor a third person
    ("lagging", "runs") nor an auxiliary ("is", "been")."""
    if w in AUX or w.endswith(("ing", "s")):
        return False
    if lex is None:
        return w.endswith(("ed", "en"))
    if w.endswith(("ed", "en")) or w in lex.exceptions("v"):
        return any(b != w for b in lex.bases(w, "v")) or _unknown_past(w, lex)
    return False


def active(p: Parsed) -> Parsed:
    """A passive read in the active's order: agent, verb, then the passive's subject
    ("the invoice was paid by the client" as "the client paid the invoice"), so that
    who did what to whom lines up with an active statement's (an active "the courier
    paid the client" and a passive "the courier was paid by the client" hold the same
    words in the same order and say opposite things)."""
    by, verb = p.by_at, p.verb_at
    if by < 0:
        return p
    words = p.words
    n_agent, n_verb = len(words) - by - 1, by - verb

    def moved(pos: int) -> int:
        if pos > by:
            return pos - by - 1  # the agent first
        if pos >= verb:
            return n_agent + pos - verb  # then the verb group
        return n_agent + n_verb + pos  # then the subject

    toks = sorted((Tok(t.key, t.text, t.name, moved(t.pos)) for t in p.toks), key=lambda t: t.pos)
    order = (*words[by + 1 :], *words[verb:by], *words[:verb])
    return Parsed(tuple(toks), order, p.negated, n_agent, -1)


def _elide(toks: list[Tok]) -> tuple[Tok, ...]:
    """The tokens less a common word said again ("weekend traffic … than weekday
    traffic" = "traffic on weekends … than on weekdays"): the repeat adds no content.
    Names and quantities are kept (a repeated value is part of what is said)."""
    seen: set[str] = set()
    out: list[Tok] = []
    for t in toks:
        if t.name or t.key[0] in "#~":
            out.append(t)
        elif t.key not in seen:
            seen.add(t.key)
            out.append(t)
    return tuple(out)


def _before(words: Sequence[str], i: int) -> str:
    """The word before ``words[i]``, past a hedge ("the trains *rarely* run": "trains")."""
    j = i - 1
    while j > 0 and words[j] in HEDGES:
        j -= 1
    return words[j]


def _is_name(raw: str, m: re.Match[str]) -> bool:
    """Capitalised inside a sentence, CamelCase/ACRONYM, or letters with digits."""
    w = m.group()
    if w.isalpha() and not w[0].isupper():
        return False  # letters only, not capitalised (most words): the checks below agree
    if any(c.isdigit() for c in w) and any(c.isalpha() for c in w):
        return True
    if not w[:1].isupper():
        return False
    if any(c.isupper() for c in w[1:]):
        return True
    j = m.start() - 1
    while j >= 0 and raw[j].isspace():
        j -= 1
    return not (j < 0 or raw[j] in ".!?:;")


def _name_key(w: str, original: str = "") -> str:
    """A name as it is written (folded), less a plural "s" after capitals ("PDFs"). A
    capitalised word ("Alice", "Waterlogging") is keyed as an unknown word would be
    (``_unknown``): at the start of a sentence a name and a word are spelt alike, and
    ``lemma`` keys an unknown word that way."""
    if len(original) > 2 and original.endswith("s") and original[-2].isupper():
        return w[:-1]
    lex = lexicon()
    if lex is not None and original[1:].islower() and original.isalpha() and w.isalpha():
        return _unknown(w, lex)
    return w


@functools.lru_cache(maxsize=1 << 15)
def _verb_form(w: str, before: str, lex: Lexicon | None) -> bool:
    """``w`` reads as an inflected verb after a content word ("the courier picks")."""
    if lex is None or before in DETERMINERS or before in STOPWORDS:
        return False
    if w.endswith(("s", "ed", "en")) or w in lex.exceptions("v"):
        return any(b != w for b in lex.bases(w, "v")) or _unknown_past(w, lex)
    # a base form after a plural subject ("the sprinklers run")
    return before.endswith("s") and not before.endswith("ss") and bool(lex.bases(w, "v"))


def _and_more(words: Sequence[str], j: int, value: float) -> bool:
    """Whether ``words[j]`` is the "and" inside a spelled-out number of a hundred or more
    ("one hundred and forty"), not one between two quantities ("two and three")."""
    return (
        words[j] == "and" and value >= 100 and j + 1 < len(words) and words[j + 1] in NUMBER_WORDS
    )


def _number_at(words: Sequence[str], i: int) -> tuple[float, int, str] | None:
    """(value in base units, index after it, dimension) when a quantity starts at ``i``."""
    w = words[i]
    n = len(words)
    value: float | None = None
    suffix = ""
    if w[0].isdigit():
        m = re.match(r"^(\d+(?:[.,:]\d+)*)(.*)$", w)
        if m is None:
            return None
        value, suffix = number_of(m.group(1)), m.group(2)
        if value is None:
            return None
    elif w in NUMBER_WORDS:
        value = float(NUMBER_WORDS[w])
    elif "-" in w and all(p in NUMBER_WORDS for p in w.split("-")):
        value = float(sum(NUMBER_WORDS[p] for p in w.split("-")))
    elif (
        (w == "one" or w in INDEFINITE)
        and i + 1 < n
        and words[i + 1] in UNITS
        and words[i + 1] not in BARE_ONLY
    ) or (w == "one" and i + 1 < n and words[i + 1] in MULTIPLIERS):
        value = 1.0  # "a metre", "one hour", "one hundred"
    elif w == "half" and i + 2 < n and words[i + 1] in INDEFINITE and words[i + 2] in UNITS:
        value, i = 0.5, i + 1
    elif w in FRACTIONS and _of_a_whole(words, i + 1) and (i == 0 or words[i - 1] != "the"):
        return FRACTIONS[w] * 100.0, i + 1, "percent"  # "half of", "a quarter of"
    if value is None:
        return None
    j = i + 1
    while j < n and (
        words[j] in MULTIPLIERS or words[j] in NUMBER_WORDS or _and_more(words, j, value)
    ):
        nxt = words[j]
        if nxt == "and":  # "one hundred and forty": the and of a spelled-out number
            j += 1
            continue
        value = value * MULTIPLIERS[nxt] if nxt in MULTIPLIERS else value + NUMBER_WORDS[nxt]
        j += 1
    if not suffix and j < n and words[j] in FRACTIONS and _of_a_whole(words, j + 1):
        return value * FRACTIONS[words[j]] * 100.0, j + 1, "percent"  # "three quarters of"
    unit = suffix if suffix not in ("st", "nd", "rd", "th", "x") else ""
    if not suffix and j < n and words[j].replace(".", "") in ("am", "pm"):
        unit = words[j].replace(".", "")  # "10 p.m." is "10 pm"
        j += 1
    if unit in ("am", "pm"):
        return value % 12 + (12 if unit == "pm" else 0), j, "clock"
    if not suffix and j < n and words[j] in UNITS:
        unit = words[j]
        j += 1
    if unit in UNITS:
        dim, factor = UNITS[unit]
        if tuple(words[j : j + 3]) == ("and", "a", "half"):  # "an hour and a half"
            value, j = value + 0.5, j + 3
        return value * factor, j, dim
    return value, j, unit


def _of_a_whole(words: Sequence[str], k: int) -> bool:
    """Whether a fraction word before ``words[k]`` takes a part of a whole ("half of the
    runs"), not a period or a part named on its own ("the first half"), nor a ratio ("half
    the water the dye house uses" is "half as much")."""
    return k < len(words) and words[k] == "of"
