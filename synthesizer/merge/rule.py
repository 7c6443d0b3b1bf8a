"""The merge rule: are two statements one fact, rival facts, or different facts?

Cosine similarity only proposes candidates: embedders place "The build is green" next to
"The build is red", and "consumer lag" next to "producer lag". ``compare(a, b)`` decides,
the same way whatever the embedder:

1. Both statements become token sequences: content words as lemmas (WordNet's morphology,
   two-word WordNet collocations joined: "log in"), quantities in base units ("five
   minutes" = "300 seconds"), negations counted (their parity is the statement's
   polarity) and function words dropped.
2. The two sequences are aligned (longest matching blocks, ``difflib``); what is equal is
   the shared *frame*, each differing span is judged:
   - a *rewording* when it cannot change the meaning: an inflection, a word order (one
     moved block; a passive beside an active is read agent first), a quantity written
     another way, a WordNet synonym in one of either word's main senses, a derivation,
     or, for words WordNet does not tell apart as rivals, an embedder similarity of the
     two spans of at least ``SPAN_SAME``;
   - a *slot* otherwise: another name or identifier, another number or unit, an antonym
     (WordNet's, also through a similar adjective or one hypernym step: "reduces" is a
     kind of "decreases", the antonym of "increases"), a co-hyponym ("green" / "red":
     two kinds of one thing) or co-meronym ("weekdays" / "weekends": two parts of a
     week), a word added or dropped.
3. Verdict: all spans rewordings and the polarity equal -> ``same``. One slot after the
   statement's verb, or the polarity alone differs -> ``contradicts`` (same subject,
   incompatible value: both cannot be true). A slot before the verb (the subject:
   "consumer lag" / "producer lag"), or more than one slot -> ``different``, except
   two holders of one thing ("Alice owns the service" / "Bob owns the service": the
   whole subject differs before a verb of possessing or controlling with a definite
   object) -> ``contradicts``. A pair
   decided only by a span the lexicon cannot place is ``unsure``: kept apart unless a
   configured judge (``judge``) says otherwise.

Without WordNet installed (``lexicon``) no two different words are synonyms and no
antonyms are known: fewer merges, none wrong (the safe side).
"""

from __future__ import annotations

import difflib
import functools
from collections import Counter
from dataclasses import dataclass

from synthesizer.merge.paraphrase import (
    cause_and_effect,
    content_count,
    joined,
    regrouped,
    unfronted,
)
from synthesizer.merge.span import SPAN_SAME, Span, SpanSim, judge_span
from synthesizer.merge.statement import (
    Parsed,
    Tok,
    active,
    key_base,
    parse,
    path_end,
    with_value,
)
from synthesizer.merge.wordclass import (
    CLAUSES,
    DEFINITE,
    NEGATING_VERBS,
    NEGATIONS,
)
from synthesizer.merge.wordrel import holding_verb, relation

__all__ = [
    "CONTRADICTS",
    "DIFFERENT",
    "SAME",
    "SPAN_SAME",
    "UNSURE",
    "Span",
    "Verdict",
    "compare",
    "may_bind",
    "settle",
]

SAME, CONTRADICTS, DIFFERENT, UNSURE = "same", "contradicts", "different", "unsure"


@dataclass(frozen=True)
class Verdict:
    """The rule's answer for one pair: ``kind`` and a short ``reason``."""

    kind: str  # same | contradicts | different | unsure
    reason: str  # a category, never the statements' words (it goes into the log)
    detail: str = ""  # the differing spans, for people reading a verdict (not logged)


# ------------------------------------------------------------------ the verdict


def compare(
    a: str, b: str, span_sim: SpanSim | None = None, *, exhaustive: bool = False
) -> Verdict:
    """The rule's verdict on statements ``a`` and ``b`` (see module docstring).

    ``span_sim(x, y)`` is the embedder's cosine of two differing spans; without it no
    span the lexicon cannot place is a rewording. Symmetric, deterministic.
    ``exhaustive`` asks the embedder about every span even where the verdict cannot
    depend on it: the plain reference the shortcut is tested against (same verdicts).
    """
    pa, pb = parse(a), parse(b)
    first, second = (pa, pb) if [t.key for t in pa.toks] <= [t.key for t in pb.toks] else (pb, pa)
    return _restated(a, b, _compare(first, second, span_sim, exhaustive), span_sim)


@functools.lru_cache(maxsize=1 << 14)
def _bag(text: str) -> tuple[Counter[str], tuple[str, ...]]:
    """The statement's token keys as a multiset and sorted (cached with ``parse``)."""
    keys = [key_base(t.key) for t in parse(text).toks]  # (as aligned: ``_judge_pair``)
    return Counter(keys), tuple(sorted(keys))


def may_bind(a: str, b: str) -> bool:
    """False only when ``compare(a, b)`` is certainly neither ``same`` nor ``contradicts``.

    Why: the synthesizer acts on those two verdicts only (without a judge), and most
    candidates of a busy swarm share a topic, not a frame. The rule needs the same tokens
    in another order, or an alignment covering half of the longer statement's tokens; an
    alignment never covers more than the two multisets share, so fewer shared tokens than
    that settles it without aligning or judging a span. Exact, not a heuristic (a test
    checks it against ``compare`` on every labelled pair)."""
    (ca, sa), (cb, sb) = _bag(a), _bag(b)
    if sa == sb:
        return True
    if 2 * (sum((ca & cb).values()) + 1) >= max(len(sa), len(sb)):
        return True  # (+ 1: one quantity apart is compared with that quantity made equal)
    # the paraphrase readings: two clauses each, or as many content words
    if joined(a) is not None and joined(b) is not None:
        return True
    (na, la), (nb, lb) = content_count(a), content_count(b)
    return abs(na - nb) <= la + lb


def settle(a: str, b: str, span_sim: SpanSim | None = None) -> Verdict:
    """``compare(a, b, span_sim)`` for a caller that acts only on ``same`` and
    ``contradicts`` (the synthesizer without a judge): the same verdict whenever it is one
    of those two, else a ``different`` or ``unsure`` one, found sooner. Why: most
    candidates differ in two slots or more; the first two settle it, and a quantity is
    checked before any word reaches the lexicon or the embedder. A test checks it against
    ``compare`` on every labelled pair and on the benchmark's."""
    pa, pb = parse(a), parse(b)
    first, second = (pa, pb) if [t.key for t in pa.toks] <= [t.key for t in pb.toks] else (pb, pa)
    return _restated(a, b, _compare(first, second, span_sim, False, settle=True), span_sim)


_ANOTHER = Verdict(UNSURE, "settled: neither same nor contradicts")


def _restated(a: str, b: str, v: Verdict, span_sim: SpanSim | None) -> Verdict:
    """``v``, or when it is neither ``same`` nor ``contradicts``, what the paraphrase
    readings show (``paraphrase``): one cause and one effect stated either way, or the
    same content words in another grammar."""
    if v.kind == SAME:
        return v
    if v.kind == CONTRADICTS:  # a content word as the slot, yet every word is matched,
        # roles kept: the alignment misread a regrouping ("made a payment" / "paid")
        if v.reason == "word" and regrouped(a, b) == SAME:
            return Verdict(SAME, "the same words regrouped")
        return v
    ua, ub = unfronted(a), unfronted(b)
    if (ua, ub) != (a, b):  # a fronted phrase read in its place ("Since May, X" = "X since May")
        again = compare(ua, ub, span_sim)
        if again.kind in (SAME, CONTRADICTS):
            return again
    ce = cause_and_effect(a, b, lambda x, y: compare(x, y, span_sim).kind)
    if ce == "same":
        return Verdict(SAME, "cause and result")
    if ce == CONTRADICTS:
        return Verdict(CONTRADICTS, "one cause, conflicting effects")
    if ce == "swapped":
        return Verdict(DIFFERENT, "cause and effect swapped")
    reading = regrouped(a, b)
    if reading == SAME:
        return Verdict(SAME, "the same words regrouped")
    if reading == CONTRADICTS:
        return Verdict(CONTRADICTS, "the same words regrouped, one slot or the polarity apart")
    return _reworded_but_one_quantity(a, b, span_sim) or v


def _reworded_but_one_quantity(a: str, b: str, span_sim: SpanSim | None) -> Verdict | None:
    """``contradicts`` when ``b`` with its one differing quantity written as ``a``'s is
    the same statement as ``a`` by any reading (a paraphrase, not only the words as
    written: "the trustee made a payment of 12,000 euros" / "the trustee paid 21,000
    euros"); ``different`` when that quantity stands in a subject; None otherwise, and
    for a bare number (no unit: it may name the thing, as a version or a pump's does)."""
    pa, pb = parse(a), parse(b)
    apart = _quantities_apart(pa, pb)
    if apart is None:
        return None
    at_a, at_b = apart
    if at_a.key.partition(":")[0] == "#":
        return None  # a bare number may as well name another thing ("kernel 6.8" / "6.6")
    given = with_value(b, pb.words[at_b.pos : at_b.pos + len(at_b.text.split())], at_a.text)
    if given is None or compare(a, given, span_sim).kind != SAME:
        return None
    if at_a.pos < pa.verb_at or at_b.pos < pb.verb_at:
        return Verdict(DIFFERENT, "number in the subject")
    return Verdict(CONTRADICTS, "number")


def _compare(
    pa: Parsed, pb: Parsed, span_sim: SpanSim | None, exhaustive: bool, settle: bool = False
) -> Verdict:
    """The verdict (``_as_written``), or ``contradicts`` when the two are the same
    statement but for one quantity of one dimension: with that quantity given the other
    side's value they are ``same`` ("during peak hours the gateway drops about 2 percent
    of calls" / "the gateway drops about 12 percent of calls during peak hours"), so that
    value is the one conflicting slot; ``different`` when it stands in the subject."""
    v = _as_written(pa, pb, span_sim, exhaustive, settle)
    if v.kind in (SAME, CONTRADICTS):
        return v
    one = _one_quantity_apart(pa, pb)
    if one is None:
        return v
    given, subject = one
    if _as_written(pa, given, span_sim, exhaustive, settle).kind != SAME:
        return v
    if subject:
        return Verdict(DIFFERENT, "number in the subject")
    return Verdict(CONTRADICTS, "number")


def _quantities_apart(pa: Parsed, pb: Parsed) -> tuple[Tok, Tok] | None:
    """The one quantity of each that the other lacks, when exactly one each differs and
    both are of one dimension (a count against a count, a duration against a duration)."""
    qa = Counter(key_base(t.key) for t in pa.toks if t.key[0] == "#")
    qb = Counter(key_base(t.key) for t in pb.toks if t.key[0] == "#")
    only_a, only_b = list((qa - qb).elements()), list((qb - qa).elements())
    if len(only_a) != 1 or len(only_b) != 1:
        return None
    ka, kb = only_a[0], only_b[0]
    if ka.partition(":")[0] != kb.partition(":")[0]:
        return None  # another dimension: another quantity, not another value of it
    at_a = next(t for t in pa.toks if key_base(t.key) == ka)
    at_b = next(t for t in pb.toks if key_base(t.key) == kb)
    return at_a, at_b


def _one_quantity_apart(pa: Parsed, pb: Parsed) -> tuple[Parsed, bool] | None:
    """``pb`` with its one differing quantity given ``pa``'s value, and whether that
    quantity stands in either subject; None unless exactly one quantity each differs, of
    one dimension (``_quantities_apart``)."""
    apart = _quantities_apart(pa, pb)
    if apart is None:
        return None
    at_a, at_b = apart
    ka, kb = key_base(at_a.key), key_base(at_b.key)
    toks = tuple(
        Tok(ka + t.key[len(kb) :], t.text, t.name, t.pos) if t is at_b else t for t in pb.toks
    )
    given = Parsed(toks, pb.words, pb.negated, pb.verb_at, pb.by_at)
    return given, at_a.pos < pa.verb_at or at_b.pos < pb.verb_at


def _as_written(
    pa: Parsed, pb: Parsed, span_sim: SpanSim | None, exhaustive: bool, settle: bool = False
) -> Verdict:
    """The verdict; a passive beside an active is compared with who did what to whom
    aligned (``active``): the same statement only that way. Compared as written, the
    two may still contradict ("the bacteria need oxygen" / "the bacteria are killed by
    oxygen"), and a "by" that names no agent ("given by injection") is read as written."""
    if (pa.by_at < 0) == (pb.by_at < 0):
        return _judge_pair(pa, pb, span_sim, exhaustive, settle)
    aligned = _judge_pair(active(pa), active(pb), span_sim, exhaustive, settle)
    if aligned.kind == SAME:
        return aligned
    written = _judge_pair(pa, pb, span_sim, exhaustive, settle)
    return written if written.kind == CONTRADICTS else aligned


def _judge_pair(
    pa: Parsed, pb: Parsed, span_sim: SpanSim | None, exhaustive: bool, settle: bool
) -> Verdict:
    """The verdict on two parsed statements as they stand (``_compare`` settles passives):
    the same words first, then the aligned frame's differing spans, each judged."""
    pb = _subject_as_in(pb, pa)
    ka, kb = [t.key for t in pa.toks], [t.key for t in pb.toks]
    polarity = pa.negated != pb.negated
    if ka == kb:
        return Verdict(CONTRADICTS, "negation") if polarity else Verdict(SAME, "rewording")
    if sorted(ka) == sorted(kb) and _reordered(ka, kb) and _negated(pa) == _negated(pb):
        return Verdict(CONTRADICTS, "negation") if polarity else Verdict(SAME, "word order")
    ba, bb = [key_base(k) for k in ka], [key_base(k) for k in kb]  # (aligned without the ends)
    reversed_path = _swapped_ends(pa, pb, ka, kb, ba, bb, polarity)
    if reversed_path is not None:
        return reversed_path
    common = sum((Counter(ba) & Counter(bb)).values())  # bounds the aligned words
    if common * 3 < max(len(ka), len(kb)):  # hardly a shared frame: a paraphrase, or not
        return _little_shared(pa, pb, polarity)
    matcher = difflib.SequenceMatcher(None, ba, bb, autojunk=False)
    shared = sum(size for _, _, size in matcher.get_matching_blocks())
    little = shared * 2 < max(len(ka), len(kb))
    if little and settle:
        return _ANOTHER  # "different" or "unsure" below, whatever the spans
    if little and not exhaustive:
        # the verdict below reads only the number/unit/name/antonym slots, which the
        # lexicon decides before any span reaches the embedder: skip embedding spans
        span_sim = None
    spans = _differing(matcher, ka, kb)
    if settle:  # a differing quantity first: the cheapest slot to find
        spans.sort(key=lambda op: _same_quantities(pa.toks[op[1] : op[2]], pb.toks[op[3] : op[4]]))
    found = _slots(pa, pb, spans, span_sim, settle, polarity)
    if found is None:
        return _ANOTHER
    if little:  # little shared frame: a paraphrase, or not
        return _little_shared(pa, pb, polarity)  # (spans of a poor alignment prove little)
    return _verdict(pa, pb, found, polarity)


def _swapped_ends(
    pa: Parsed,
    pb: Parsed,
    ka: list[str],
    kb: list[str],
    ba: list[str],
    bb: list[str],
    polarity: bool,
) -> Verdict | None:
    """The verdict when the two hold the same words with the ends of a path swapped
    ("from Oslo to Rome" / "from Rome to Oslo": reversed), else None."""
    swapped = sorted(map(path_end, ka)) == sorted(map(path_end, kb))
    if not (sorted(ba) == sorted(bb) and sorted(ka) != sorted(kb) and swapped):
        return None
    ends = [t for t in (*pa.toks, *pb.toks) if path_end(t.key)]
    if all(t.pos < p.verb_at for t in ends for p in (pa, pb)):
        return Verdict(DIFFERENT, "direction in the subject")
    if any(path_end(t.key) in CLAUSES.values() for t in ends):
        return Verdict(DIFFERENT, "clauses swapped")  # (both may hold: not rivals)
    return Verdict(DIFFERENT if polarity else CONTRADICTS, "direction")


Op = tuple[str, int, int, int, int]
"""An alignment opcode: (tag, i1, i2, j1, j2), as ``difflib`` gives it."""


def _differing(matcher: difflib.SequenceMatcher[str], ka: list[str], kb: list[str]) -> list[Op]:
    """The spans the alignment does not match, in order.

    An aligned word at the other end of a path is a span of its own, unless it follows a
    differing word, whose preposition it is ("connected to" / "disconnected from", "close
    to" / "near"): that word decides.
    """
    spans: list[Op] = []
    for op in matcher.get_opcodes():
        if op[0] != "equal":
            spans.append(op)
            continue
        _, i1, _, j1, _ = op
        spans += [
            ("replace", i, i + 1, j, j + 1)
            for i, j in zip(range(i1, op[2]), range(j1, op[4]), strict=True)
            if ka[i] != kb[j] and not (i == i1 and spans and spans[-1][2] == i1)
        ]
    return spans


@dataclass
class _Found:
    """The slots of a pair's differing spans: (reason, in the subject) each, the spans
    the lexicon cannot place (as text), and where the last slot is."""

    slots: list[tuple[Span, bool]]
    unsure: list[str]
    where: tuple[int, int, int, int]


def _slots(
    pa: Parsed,
    pb: Parsed,
    spans: list[Op],
    span_sim: SpanSim | None,
    settle: bool,
    polarity: bool,
) -> _Found | None:
    """Each differing span judged (``judge_span``); None as soon as ``settle`` sees the
    verdict can be neither ``same`` nor ``contradicts``."""
    found = _Found([], [], (0, 0, 0, 0))
    na, nb = len(pa.toks), len(pb.toks)
    for _, i1, i2, j1, j2 in spans:
        xs, ys = pa.toks[i1:i2], pb.toks[j1:j2]
        subject = _in_subject(pa, xs, i1) and _in_subject(pb, ys, j1)
        modifier = (  # it names which of one shared head: "consumer lag" / "producer lag"
            subject
            and i2 < na
            and j2 < nb
            and pa.toks[i2].key == pb.toks[j2].key
            and pa.toks[i2].pos < pa.verb_at
            and pb.toks[j2].pos < pb.verb_at
        )
        kind = judge_span(xs, ys, span_sim, modifier)
        if kind is Span.ADDED and _gap_antonym(pa, i1, i2, pb, j1, j2):
            kind = Span.ANTONYM
        if kind is Span.REWORDING:
            continue
        if kind is Span.UNSURE:
            found.unsure.append(" ".join(t.text for t in xs) + " / " + " ".join(t.text for t in ys))
        else:
            found.slots.append((kind, subject))
            found.where = (i1, i2, j1, j2)
        # never "same" or "contradicts" once: a span the lexicon cannot place, two slots,
        # a slot beside a flipped negation, a word added, a quantity in the subject (any
        # other subject slot may be two holders of one thing: see ``_verdict``)
        if settle and (
            found.unsure
            or len(found.slots) > 1
            or polarity
            or kind in (Span.ADDED, Span.HEDGE)
            or (subject and kind in (Span.NUMBER, Span.UNIT))
        ):
            return None
    return found


def _verdict(pa: Parsed, pb: Parsed, found: _Found, polarity: bool) -> Verdict:
    """The verdict from a shared frame's slots (see the module docstring, step 3)."""
    slots, unsure = found.slots, found.unsure
    if not slots and not unsure:
        return Verdict(CONTRADICTS, "negation") if polarity else Verdict(SAME, "rewording")
    if not slots:  # (a negation beside a paraphrase may be a negated antonym)
        return Verdict(UNSURE, "the lexicon cannot tell", "; ".join(unsure))
    if polarity or len(slots) + len(unsure) > 1:
        return _several(pa, pb, slots)
    reason, subject = slots[0]
    if reason is Span.SCALE:
        return Verdict(CONTRADICTS, "hedge")  # "few" / "many", "seldom" / "usually"
    holder = reason not in (Span.ADDED, Span.NUMBER, Span.UNIT, Span.HEDGE)
    if subject and holder and _one_holder(pa, pb, found.where):
        return Verdict(CONTRADICTS, "another holder")
    if reason is Span.ADDED:  # more said on one side: narrower, not shown to be another thing
        return Verdict(UNSURE, "a word added in the subject" if subject else "a word added")
    if subject or reason is Span.HEDGE:
        return Verdict(
            DIFFERENT, f"{reason.value} in the subject" if subject else "a hedge changed"
        )
    return Verdict(CONTRADICTS, reason.value)


_EVIDENT = frozenset([Span.NUMBER, Span.UNIT, Span.NAME])
"""Slots that show another statement wherever they are: another quantity or name."""
_ANOTHER_THING = frozenset(
    [Span.NAME, Span.SIBLING, Span.WORD, Span.NUMBER, Span.UNIT, Span.DIRECTION, Span.ANTONYM]
)
"""Slots that, in the subject, show another thing is spoken of."""


def _several(pa: Parsed, pb: Parsed, slots: list[tuple[Span, bool]]) -> Verdict:
    """Several slots (or one beside a flipped negation): ``different`` on evidence (a
    quantity or name anywhere, another thing in the subject, a hedge changed), else
    ``unsure`` (words the alignment could not place may still be a paraphrase).

    A quantity or name slot is evidence only when the statements hold other values: when
    both hold the same names and quantities, the slot is the alignment's (the same value
    met at another place: "62 percent of trips over 5 km" / "of the trips over 5 km, 62
    percent"), not another value."""
    reasons = ", ".join(sorted({r for r, _ in slots}))
    moved = _values(pa) == _values(pb)  # every value on both sides: slots of a reordering
    if any((r in _EVIDENT and not moved) or r is Span.HEDGE for r, _ in slots):
        return Verdict(DIFFERENT, reasons + " (several slots)")
    if any(s and r in _ANOTHER_THING and not (moved and r in _EVIDENT) for r, s in slots):
        return Verdict(DIFFERENT, reasons + " (several slots, one in the subject)")
    return Verdict(UNSURE, reasons + " (several slots)")


def _values(p: Parsed) -> tuple[list[str], set[str]]:
    """A statement's quantities (with their units) and names, without the ends of paths
    they stand at ("to Postgres" and "Postgres" name one thing)."""
    nums = sorted(key_base(t.key) for t in p.toks if t.key[0] in "#~")
    return nums, {key_base(t.key) for t in p.toks if t.name}


def _one_holder(pa: Parsed, pb: Parsed, where: tuple[int, int, int, int]) -> bool:
    """Whether the two statements name two holders of one thing: the whole subject differs
    ("Alice" / "Bob"), the rest is the same, and it is a relation one holder has: the
    verb right after the subject means possessing or controlling (in one of its two main
    senses, WordNet's "own" or "control, command", or a kind of either), and its object is
    definite ("owns the billing service"; "owns a bicycle" can be true of both)."""
    i1, i2, j1, j2 = where
    if i1 or j1 or i2 >= len(pa.toks) or j2 >= len(pb.toks):
        return False  # not the whole subject (a modifier, or words before it)
    for p, at in ((pa, i2), (pb, j2)):
        verb = p.toks[at]
        if verb.pos != p.verb_at or verb.pos + 1 >= len(p.words):
            return False  # an auxiliary, or no object after the verb
        nxt = p.words[verb.pos + 1]
        if nxt not in DEFINITE and not (at + 1 < len(p.toks) and p.toks[at + 1].name):
            return False
    return holding_verb(key_base(pa.toks[i2].key))


def _same_quantities(xs: tuple[Tok, ...], ys: tuple[Tok, ...]) -> bool:
    """Whether two spans hold the same quantities (False: a number or unit slot)."""
    return sorted(t.key for t in xs if t.key[0] in "#~") == sorted(
        t.key for t in ys if t.key[0] in "#~"
    )


def _subject_as_in(p: Parsed, like: Parsed) -> Parsed:
    """``p`` with its subject's words in ``like``'s order when the two subjects hold the
    same words ("traffic on weekends" / "weekend traffic"): inside a noun phrase the order
    of modifiers and head is a rewording; the predicate's order is left alone."""
    mine = [t for t in p.toks if t.pos < p.verb_at]
    theirs = [t.key for t in like.toks if t.pos < like.verb_at]
    keys = [t.key for t in mine]
    if keys == theirs or sorted(keys) != sorted(theirs) or any(t.name for t in mine):
        return p
    pool = list(mine)
    ordered: list[Tok] = []
    for key, slot in zip(theirs, mine, strict=True):
        t = next(x for x in pool if x.key == key)
        pool.remove(t)
        ordered.append(Tok(t.key, t.text, t.name, slot.pos))
    return Parsed((*ordered, *p.toks[len(mine) :]), p.words, p.negated, p.verb_at, p.by_at)


def _gap(p: Parsed, i1: int, i2: int) -> list[str]:
    """The words between content tokens ``i1 - 1`` and ``i2`` (function words included)."""
    lo = p.toks[i1 - 1].pos + 1 if i1 > 0 else 0
    hi = p.toks[i2].pos if i2 < len(p.toks) else len(p.words)
    return [w for w in p.words[lo:hi] if w not in NEGATIONS]


def _gap_antonym(pa: Parsed, i1: int, i2: int, pb: Parsed, j1: int, j2: int) -> bool:
    """A word added on one side against a function word that is its antonym on the other
    ("on" / "off", "in" / "out" by default)."""
    ga, gb = _gap(pa, i1, i2), _gap(pb, j1, j2)
    return any(relation(x, y) == "antonym" for x in ga for y in gb if x != y)


def _little_shared(pa: Parsed, pb: Parsed, polarity: bool) -> Verdict:
    """Two statements that share less than half their words: another statement when each
    names a value the other lacks (a name, or a number by its value: "2am" and "two in
    the morning" are both 2), else ``unsure``: only a judge can tell."""
    nums_a = {key_base(t.key).partition(":")[2] for t in pa.toks if t.key[0] == "#"}
    nums_b = {key_base(t.key).partition(":")[2] for t in pb.toks if t.key[0] == "#"}
    names_a = {key_base(t.key) for t in pa.toks if t.name}
    names_b = {key_base(t.key) for t in pb.toks if t.name}
    if (names_a - names_b and names_b - names_a) or (
        nums_a - nums_b and nums_b - nums_a
    ):  # a name or quantity on each side that the other lacks (by value, wherever it
        # stands on a path: "to Postgres" / "Postgres"): another value
        return Verdict(DIFFERENT, "little shared wording; another quantity or name")
    return Verdict(UNSURE, "little shared wording")  # (a flipped negation: an antonym?)


def _negated(p: Parsed) -> list[str]:
    """The word each negation of ``p`` comes before (sorted): a block moved past a "not"
    moves what is denied ("applied to staging but not to production" / "… to
    production but not to staging")."""
    words, out = p.words, []
    for k, w in enumerate(words):
        if w in NEGATIONS or (w in NEGATING_VERBS and words[k + 1 : k + 2] == ("to",)):
            after = next((t for t in p.toks if t.pos > k), None)
            out.append(key_base(after.key) if after is not None else "")
    return sorted(out)


def _reordered(ka: list[str], kb: list[str]) -> bool:
    """The same words in another order: one block moved ("on Mondays the team deploys")."""
    for i in range(len(ka)):
        for j in range(i + 1, len(ka) + 1):
            block, rest = ka[i:j], ka[:i] + ka[j:]
            for at in range(len(rest) + 1):
                if rest[:at] + block + rest[at:] == kb:
                    return True
    return False


def _in_subject(p: Parsed, toks: tuple[Tok, ...], at: int) -> bool:
    """Whether the span (or, when empty, the place ``at``) lies before the verb."""
    if toks:
        return toks[0].pos < p.verb_at
    return at < len(p.toks) and p.toks[at].pos < p.verb_at
