"""Closed-class English: number words, units, negations, hedges, function words.

Every closed class the merge rule reads is here, each word listed once: a class used in
several places (the determiners) is the union of its parts.

Grammar, not vocabulary of any topic: the merge rule (``rule.py``) reads quantities
("five minutes" = "300 seconds"), counts negations, keeps the hedges that change what a
statement claims ("may" / "must", "some" / "all", "almost empty" / "empty") and drops
function words with these tables; every content word is left to the lexicon
(``lexicon``) and the embedder.
"""

from __future__ import annotations

import functools
import re

__all__ = [
    "ARTICLES",
    "AUX",
    "BARE_ONLY",
    "BE",
    "BOUNDS",
    "BOUNDS_AFTER",
    "CALENDAR",
    "CAUSE_BEFORE",
    "CLAUSES",
    "CLAUSE_START",
    "DEFINITE",
    "DETERMINERS",
    "DIRECTIONS",
    "EFFECT_BEFORE",
    "FRACTIONS",
    "HEDGES",
    "INDEFINITE",
    "LIGHT_OBJECTS",
    "LIGHT_PARTICLES",
    "LIGHT_VERBS",
    "MULTIPLIERS",
    "NEGATING_VERBS",
    "NEGATIONS",
    "NUMBER_START",
    "NUMBER_WORDS",
    "OCCURRENCE",
    "PARTICLES",
    "PREPOSITIONS",
    "STOPWORDS",
    "UNITS",
    "UNIVERSAL",
    "Hedge",
    "canon",
    "number_of",
    "stem",
]


def _set(words: str) -> frozenset[str]:
    """A frozenset of the whitespace-separated words."""
    return frozenset(words.split())


_NUMBER_WORDS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "twice": 2, "thrice": 3, "dozen": 12,
}  # fmt: skip
# ("one" is left out: it is as often a pronoun or an article as a number)
_MULTIPLIERS = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}


_UNITS: dict[str, tuple[str, float]] = {}
for _unit_names, _dim, _factor in (
    ("ms msec millisecond milliseconds", "time", 0.001),
    ("s sec secs second seconds", "time", 1.0),
    ("m min mins minute minutes", "time", 60.0),
    ("h hr hrs hour hours", "time", 3600.0),
    ("d day days", "time", 86400.0),
    ("w wk wks week weeks", "time", 604800.0),
    ("month months", "time", 2629800.0),
    ("y yr yrs year years", "time", 31557600.0),
    ("b byte bytes", "size", 1.0),
    ("kb kilobyte kilobytes", "size", 1e3),
    ("mb megabyte megabytes", "size", 1e6),
    ("gb gigabyte gigabytes", "size", 1e9),
    ("tb terabyte terabytes", "size", 1e12),
    ("kib", "size", 1024.0),
    ("mib", "size", 1024.0**2),
    ("gib", "size", 1024.0**3),
    ("percent pct", "percent", 1.0),
    ("dollar dollars usd", "usd", 1.0),
    ("euro euros eur", "eur", 1.0),
):
    for _n in _unit_names.split():
        _UNITS[_n] = (_dim, _factor)
_BARE_ONLY = _set("s m h d w y b")  # single letters count only after a number

_NEGATIONS = _set(
    "not no never cannot without none nothing nobody neither nor nowhere "
    "dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt "
    "hasnt havent hadnt aint mustnt neednt"
)
_NEGATING_VERBS = _set("fail fails failed failing unable refuse refuses refused")

INDEFINITE = _set("a an")
_DEMONSTRATIVES = _set("this that these those")
ARTICLES = INDEFINITE | _set("the")
_POSSESSIVES = _set("its their our")
_PERSONAL_POSSESSIVES = _set("my your")
_PRONOUN_POSSESSIVES = _set("his her")  # ("her" is as often an object pronoun)
_DISTRIBUTIVES = _set("each every")
UNIVERSAL = _DISTRIBUTIVES | _set("all")
"""The quantifiers of every member: "not" before one says "some … not" ("not all tests
pass" = "some tests do not pass"), not "none"."""
DETERMINERS = ARTICLES | _DEMONSTRATIVES | _POSSESSIVES | _PERSONAL_POSSESSIVES | _DISTRIBUTIVES
"""The determiners a noun follows: a word after one is not a verb ("the *runs*"), and a
particle before one is a preposition ("builds *on* the branch")."""
_POINTING = (ARTICLES - INDEFINITE) | _DEMONSTRATIVES | _POSSESSIVES
DEFINITE = _POINTING | _PERSONAL_POSSESSIVES | _PRONOUN_POSSESSIVES
"""The determiners of one known thing: "owns *the* billing service" can be true of one
holder only, "owns *a* bicycle" of many."""
CLAUSE_START = _POINTING
"""Determiners after which "once" opens a clause ("once the valve opens"; "once a day" is a
number)."""

_BE_FORMS = _set("is are was were be been being am")
_GET = _set("get gets got")
BE = _BE_FORMS | _GET | _set("isnt arent wasnt werent")
"""The forms of "be" (and "get") a passive is made with ("was paid", "got paid")."""
_HAVE_DO = _set("has have had do does did")
_MODALS = _set("will would shall should can could may might must")
AUX = (
    BE
    | _HAVE_DO
    | _MODALS
    | _set("cannot dont doesnt didnt cant couldnt wont wouldnt shouldnt hasnt havent hadnt")
)
"""The auxiliaries: closed-class words that head a predicate (the rest of a verb is found
by morphology)."""
LIGHT_PARTICLES = _set("out up")
"""The particles that complete a light verb (``LIGHT_VERBS``: "carried out", "made up")."""
OCCURRENCE = _set("happen occur")
"""The verbs (as lemmas) that only say an event named took place ("the outage happened")."""
LIGHT_OBJECTS = _set("place")
"""The nouns that complete a light verb and mean nothing of their own ("took place")."""
PARTICLES = LIGHT_PARTICLES | _set("in on off down over back away")
"""The particles of a phrasal verb ("log in", "back up")."""

_STOPWORDS = (
    _set(
        """and or but so yet of to in on at by for with from into onto upon as than then
        there here it i you he she we they me him us them what which who whom whose when
        where why how all any both some such only own same too very just also about again
        once having while whilst whenever if unless until toward towards"""
    )
    | DETERMINERS
    | _PRONOUN_POSSESSIVES
    | _BE_FORMS
    | _GET
    | _HAVE_DO
    | _MODALS
)

DIRECTIONS = {"from": "from", "to": "to", "into": "to", "onto": "to", "toward": "to"}
DIRECTIONS.update(towards="to", than="than")
CLAUSES = {"when": "when", "whenever": "when", "while": "when", "whilst": "when", "if": "when"}
CLAUSES.update(unless="unless", until="until")
"""The words that open a clause of time or condition, each to its kind: the clause's first
word carries it like an end of a path ("the alarm rings when the door opens" / "the door
opens when the alarm rings" hold the same words and say different things)."""
DIRECTIONS.update(CLAUSES)
"""The prepositions of a path, each to its end of it, and "than", the other side of a
comparison: a word after "from" is where something starts, after "to" where it ends,
after "than" what something is compared with ("moved from Oslo to Rome" / "moved from
Rome to Oslo", "more nurses than doctors" / "more doctors than nurses" hold the same
words and say opposite things)."""

Hedge = tuple[str, str, int]
"""A hedge's (scale, class, lean): its class is what it says (two words of one class say
the same: "may" / "might"), its lean on its scale is -1, 0 or 1 (two classes of one
scale leaning opposite ways contradict each other: "few" / "many", "seldom" / "often")."""

_HEDGE_CLASSES: tuple[tuple[str, str, int, str], ...] = (
    # modal verbs: what is possible, necessary or advised (the future "will" says what
    # the present does, and is left out)
    ("modal", "may", 0, "may might can could cannot cant couldnt perhaps maybe possibly"),
    ("modal", "likely", 1, "probably likely presumably"),
    ("modal", "unlikely", -1, "unlikely improbable"),
    ("modal", "reportedly", 0, "reportedly allegedly supposedly apparently purportedly"),
    ("modal", "must", 0, "must mustnt shall"),
    ("modal", "should", 0, "should shouldnt ought"),
    # quantifiers short of all ("all", "every", "each" say what a plural "the" does)
    ("quantity", "few", -1, "few"),
    ("quantity", "some", 0, "some several"),
    ("quantity", "many", 1, "many numerous"),
    ("quantity", "most", 1, "most"),
    # degree adverbs: approximators, diminishers, minimizers and their opposites
    ("degree", "barely", -1, "barely hardly scarcely"),
    ("degree", "partly", 0, "partly partially somewhat slightly"),
    ("degree", "almost", 0, "almost nearly practically virtually"),
    ("degree", "mostly", 1, "mostly mainly largely chiefly primarily"),
    # frequency adverbs short of always ("never" is a negation)
    ("frequency", "seldom", -1, "seldom rarely"),
    ("frequency", "sometimes", 0, "sometimes occasionally"),
    ("frequency", "often", 1, "often frequently"),
    ("frequency", "usually", 1, "usually typically generally normally"),
    # the deictic words of time, only before a word of the calendar (``CALENDAR``: "last
    # week" / "next week"; "the last item" and "it will last" are other words)
    ("time", "last", -1, "last previous past"),
    ("time", "next", 1, "next coming upcoming following"),
)
CALENDAR = _set(
    """day days week weeks weekend weekends month months quarter quarters year years
    decade century night morning evening afternoon season spring summer autumn fall
    winter monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december"""
)
"""The words of the calendar a deictic word of time (``HEDGES``, scale "time") goes with."""
HEDGES: dict[str, Hedge] = {
    w: (scale, name, lean) for scale, name, lean, words in _HEDGE_CLASSES for w in words.split()
}
"""The hedges, each word to its ``Hedge``: the closed classes (modal verbs, quantifiers,
degree and frequency adverbs) whose word, added to a statement or swapped for another,
changes what it claims ("the tank is almost empty" says it is not empty)."""

_THOUSANDS = re.compile(r"^\d{1,3}(?:,\d{3})+$")

NUMBER_WORDS = _NUMBER_WORDS
MULTIPLIERS = _MULTIPLIERS
UNITS = _UNITS
BARE_ONLY = _BARE_ONLY
NEGATIONS = _NEGATIONS
NEGATING_VERBS = _NEGATING_VERBS
STOPWORDS = _STOPWORDS
_LEAST = ("at least", "no fewer than", "no less than", "not fewer than", "not less than")
_MOST = ("at most", "no more than", "not more than")
BOUNDS: dict[tuple[str, ...], tuple[str, int]] = {
    **{tuple(p.split()): ("more", 1) for p in ("more than", "greater than", "over", "above")},
    **{tuple(p.split()): ("less", -1) for p in ("less than", "fewer than", "under", "below")},
    **{tuple(p.split()): ("least", 1) for p in (*_LEAST, "a minimum of")},
    **{tuple(p.split()): ("most", -1) for p in (*_MOST, "a maximum of")},
}
"""The words that put a bound on the quantity right after them, each phrase to its bound
and lean ("more than half" / "over 50 percent", "fewer than 10" / "under ten", "at least
three" / "no fewer than three"): one bound said either way; the bounds up and the
bounds down lean opposite ways, and a strict bound is not an inclusive one."""
BOUNDS_AFTER: dict[tuple[str, ...], tuple[str, int]] = {
    **{("or", w): ("least", 1) for w in ("more", "greater", "higher", "above", "over")},
    **{("or", w): ("most", -1) for w in ("fewer", "less", "lower", "below", "under")},
}
"""The words that bound the quantity right before them: "three or more" is "at least
three", "ten or fewer" is "at most ten"."""
FRACTIONS = {"half": 0.5, "quarter": 0.25, "quarters": 0.25, "fifth": 0.2, "fifths": 0.2}
"""The fractions of a whole that are a whole number of percent ("half of the seedlings" is
"50 percent of the seedlings"; a third is no whole percent, and is left a word)."""
NUMBER_START = frozenset([*NUMBER_WORDS, "one", *FRACTIONS, *INDEFINITE])
"""The words a quantity can start with besides digits and "twenty-one" ("a minute")."""


def unknown_base(word: str) -> str:
    """One key for the regular inflections of a word no lexicon knows: the suffix ("-s",
    "-es", "-ed", "-ing") off, then a doubled last consonant made single and a final "e"
    dropped, alike for the base form ("mislabel", "mislabels", "mislabelled",
    "mislabeling" -> "mislabel"; "requeue", "requeues", "requeued" -> "requeu"). Why:
    agents write their tools' and trades' verbs, which WordNet lacks, in every tense.
    Words of fewer than four letters, or not all letters, stay as written."""
    if len(word) < 4 or not word.isalpha():
        return word
    w = word
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            if suffix == "s" and w.endswith(("ss", "us", "is")):
                break
            if suffix == "es" and not w[:-2].endswith(("s", "x", "z", "ch", "sh")):
                continue  # ("requeues": the "s" of "requeue"+"s")
            w = w[: -len(suffix)]
            break
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiousy":
        w = w[:-1]
    return w[:-1] if len(w) >= 4 and w.endswith("e") else w


@functools.lru_cache(maxsize=1 << 14)
def stem(word: str) -> str:
    """A crude stem (the fallback when WordNet is not installed)."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith("ss"):
                break
            word = word[: -len(suffix)]
            break
    return word[:-1] if len(word) > 3 and word.endswith("e") else word


def number_of(token: str) -> float | None:
    """The value of a digit token ("10,000", "1.5"), None for times and versions."""
    if _THOUSANDS.match(token):
        token = token.replace(",", "")
    try:
        return float(token.replace(",", "."))
    except ValueError:
        return None


def canon(value: float) -> str:
    """A canonical spelling of a quantity."""
    return f"{value:.6g}"


# Connectives of cause and result (grammar, not topic). Each joins two clauses; what a
# statement claims is which clause is the cause, whichever is written first: "A because
# B" = "B, so A" = "B causes A". A pattern is matched on the folded, lowercased text at
# a word boundary; those that open the effect are followed by the cause, and the other
# way round. "so" counts only after a comma ("so slow" is a degree, "so that" a purpose).
CAUSE_BEFORE = (
    r",\s*(?:and\s+)?so(?!\s+that\b)",
    r"[,;]\s*(?:and\s+)?(?:therefore|thus|hence|consequently)\b",
    r",?\s*which\s+(?:makes|made|causes|caused|leads\s+to|led\s+to|results\s+in|resulted\s+in)",
    r",\s*which\s+(?=\w+(?:ed|es|s)\b)",  # ", which doubled the load": the clause's effect
    r",\s*(?=\w+ing\b)",  # ", killing the cultures": a participle after a clause, its result
    r"\s(?:causes|caused|leads\s+to|led\s+to|results\s+in|resulted\s+in|makes|made)",
)
"""Connectives written after the cause and before the effect."""
EFFECT_BEFORE = (
    r"\s(?:because\s+of|because|due\s+to|owing\s+to|as\s+a\s+result\s+of|thanks\s+to)",
    r"\s(?:is|are|was|were|has\s+been|have\s+been)\s+(?:caused\s+by|due\s+to)",
    r"\s(?:results\s+from|resulted\s+from|stems\s+from|stemmed\s+from)",
)
"""Connectives written after the effect and before the cause."""
LIGHT_VERBS = _set(
    "make makes made making take takes took taken taking give gives gave given"
    " giving have has had do does did done perform performs performed carry"
    " carries carried conduct conducts conducted undergo undergoes underwent"
    " stay stays stayed remain remains remained happen happens happened occur occurs"
    " occurred"
)
"""Verbs of little meaning of their own, carried by the word after them ("made a decision"
= "decided", "stayed shut" = "did not open"): dropped when that word is matched."""
PREPOSITIONS = _set(
    """about above across after against along amid among around as at before behind below
    beneath beside besides between beyond by despite during except following for from in
    inside into near of on once outside over past per since through throughout till to
    under unlike until upon via with within without"""
)
"""Prepositions and subordinators (a closed class) that open a phrase a writer may front."""
