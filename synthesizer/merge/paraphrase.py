"""Paraphrase evidence the word-for-word alignment cannot see (``rule`` asks it last).

Two readings, each of which shows a rewording or finds nothing (never a guess):

- **Cause and result** (``causal``): a statement joined by a connective of cause
  (``wordclass.CAUSE_BEFORE``, ``EFFECT_BEFORE``) is two clauses, a cause and an effect,
  whichever is written first. Two such statements are the same when cause matches cause
  and effect matches effect (each pair compared by the whole rule); they are different
  statements when each one's cause is the other's effect.
- **The same content words in another grammar** (``regrouped``): every content word of
  one statement is matched to one of the other's — the same lemma, a synonym or a
  derivation (WordNet: "deploy" / "deployment", "decide" / "decision"), or an antonym
  under a negation ("did not succeed" / "failed") — with names, quantities and hedges
  equal, a light verb left over only beside a derivation ("made a decision" / "decided"),
  an of-phrase read as a possessive ("the cookie of the handler" = "the handler's
  cookie"), and who does what kept: each matched word on the same side of the verb
  (a passive read agent first), in the same order but for one moved block (a fronted
  phrase). The polarity, with each antonym match flipping it once, decides ``same``
  against ``contradicts``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from synthesizer.merge.lexicon import lexicon
from synthesizer.merge.statement import Parsed, Tok, active, key_base, parse
from synthesizer.merge.wordclass import (
    ARTICLES,
    CAUSE_BEFORE,
    CLAUSES,
    EFFECT_BEFORE,
    LIGHT_OBJECTS,
    LIGHT_PARTICLES,
    LIGHT_VERBS,
    NEGATIONS,
    PREPOSITIONS,
)
from synthesizer.merge.wordrel import relation

__all__ = [
    "Clauses",
    "causal",
    "cause_and_effect",
    "content_count",
    "joined",
    "regrouped",
    "unfronted",
]

_CAUSE_BEFORE = re.compile("|".join(f"(?:{p})" for p in CAUSE_BEFORE))
_EFFECT_BEFORE = re.compile("|".join(f"(?:{p})" for p in EFFECT_BEFORE))
_EDGE = " \t,;:.!?-\u2013\u2014"


@dataclass(frozen=True)
class Clauses:
    """A statement read as a cause and its effect."""

    cause: str
    effect: str


def causal(text: str) -> Clauses | None:
    """The statement's cause and effect when one connective of cause joins two clauses
    (the first connective; each clause must hold a word), else None."""
    low = text.lower()
    found = []
    for pattern, cause_first in ((_CAUSE_BEFORE, True), (_EFFECT_BEFORE, False)):
        m = pattern.search(low)
        if m is not None:
            found.append((m.start(), m.end(), cause_first))
    if not found:
        return None
    start, end, cause_first = min(found)
    left, right = text[:start].strip(_EDGE), text[end:].strip(_EDGE)
    if not re.search(r"\w", left) or not re.search(r"\w", right):
        return None
    if not cause_first and start == 0:
        return None
    return Clauses(left, right) if cause_first else Clauses(right, left)


Compare = Callable[[str, str], str]
"""The rule's verdict kind for two statements (``same``, ``contradicts``, …)."""


def cause_and_effect(a: str, b: str, kind_of: Compare) -> str | None:
    """``same`` when both statements state one cause and one effect in either order;
    ``contradicts`` when the causes are the same and the effects conflict (also against
    a concession: "A because B" / "B, yet not A"); ``swapped`` when each one's cause is
    the other's effect; None when this reading shows nothing."""
    ja, jb = joined(a), joined(b)
    if ja is None or jb is None:
        return None
    (ca, concede_a), (cb, concede_b) = ja, jb
    cause = kind_of(ca.cause, cb.cause)
    if cause == "same":
        effect = kind_of(ca.effect, cb.effect)
        if effect == "contradicts":
            return "contradicts"
        if effect == "same" and not (concede_a or concede_b):
            return "same"
    if concede_a or concede_b:
        return None
    if kind_of(ca.cause, cb.effect) == "same" and kind_of(ca.effect, cb.cause) == "same":
        return "swapped"
    return None


_CONCEDE = re.compile(r",\s*(?:yet|but|but\s+still|and\s+yet|though)\b")


def joined(text: str) -> tuple[Clauses, bool] | None:
    """The statement as a cause and its effect, or as a concession ("A, yet B": both hold,
    B against what A would bring; read as cause A, effect B, flagged True)."""
    c = causal(text)
    if c is not None:
        return c, False
    m = _CONCEDE.search(text.lower())
    if m is None:
        return None
    left, right = text[: m.start()].strip(_EDGE), text[m.end() :].strip(_EDGE)
    if not re.search(r"\w", left) or not re.search(r"\w", right):
        return None
    return Clauses(left, right), True


# ------------------------------------------------------------------ regrouped words


def _of_as_possessive(p: Parsed) -> Parsed:
    """``p`` with each "Y of X" (one content word each side, nothing else between but
    determiners) read as "X Y", the order a possessive or a compound writes."""
    toks = list(p.toks)
    words = p.words
    k = 0
    while k + 1 < len(toks):
        y, x = toks[k], toks[k + 1]
        between = words[y.pos + 1 : x.pos]
        if between and between[0] == "of" and all(w == "of" or w in ARTICLES for w in between):
            toks[k] = Tok(x.key, x.text, x.name, y.pos)
            toks[k + 1] = Tok(y.key, y.text, y.name, x.pos)
            k += 2
            continue
        k += 1
    return Parsed(tuple(toks), words, p.negated, p.verb_at, p.by_at)


def _plain(t: Tok) -> bool:
    """A content word (not a name, quantity or hedge)."""
    return not t.name and t.key[0] not in "#~^"


Matched = tuple[list[tuple[int, int]], int, "tuple[int, int] | None"]


def _match(xs: tuple[Tok, ...], ys: tuple[Tok, ...], slot: bool = False) -> Matched | None:
    """Pairs (index in xs, index in ys) matching every content word one to one, the
    number of antonym pairs, and with ``slot`` the one pair of words left over (another
    measure, or another kind of one thing); None when more is left over (light verbs
    aside) or, without ``slot``, names, quantities and hedges differ."""
    if not slot and sorted(t.key for t in xs if not _plain(t)) != sorted(
        t.key for t in ys if not _plain(t)
    ):
        return None
    pairs: list[tuple[int, int]] = []
    free_x = list(range(len(xs)))
    free_y = list(range(len(ys)))
    antonyms = 0
    for want in ("equal", "synonym", "antonym"):
        for i in list(free_x):
            for j in free_y:
                x, y = xs[i], ys[j]
                if want == "equal":
                    ok = x.key == y.key
                elif not (_plain(x) and _plain(y)) or key_base(x.key) == key_base(y.key):
                    ok = False
                else:
                    bx, by = key_base(x.key), key_base(y.key)
                    ok = (
                        relation(bx, by) == want
                        or relation(x.text, y.text) == want  # the words as written
                        or (want == "synonym" and bx.split("_")[0] == by.split("_")[0])
                    )  # (a collocation beside its verb alone: "fall in" / "fall")
                if ok:
                    pairs.append((i, j))
                    free_x.remove(i)
                    free_y.remove(j)
                    antonyms += want == "antonym"
                    break
    left_x = set(free_x) - _light(xs, free_x, {i for i, _ in pairs})
    left_y = set(free_y) - _light(ys, free_y, {j for _, j in pairs})
    if not left_x and not left_y:
        return sorted(pairs), antonyms, None
    if not slot or len(left_x) != 1 or len(left_y) != 1:
        return None
    (i,), (j,) = left_x, left_y
    return (sorted(pairs), antonyms, (i, j)) if _rivals(xs[i], ys[j]) else None


def _rivals(x: Tok, y: Tok) -> bool:
    """Two words that are two values of one slot: two measures of one dimension ("40 ms"
    / "400 ms"; a bare number or a name may as well name another thing: "kernel 6.8" /
    "kernel 6.6"), or two kinds of one thing (WordNet siblings)."""
    if x.key[0] == "#" and y.key[0] == "#":
        dim = x.key.partition(":")[0]
        return dim != "#" and dim == y.key.partition(":")[0]
    if _plain(x) and _plain(y):
        return relation(key_base(x.key), key_base(y.key)) == "sibling"
    return False


def _light(toks: tuple[Tok, ...], free: list[int], matched: set[int]) -> set[int]:
    """The unmatched light verbs (and their particle: "carried out") whose object, the
    next content word, is matched: "made a decision" beside "decided"."""
    out: set[int] = set()
    for i in free:
        if toks[i].text not in LIGHT_VERBS:
            continue
        k = i + 1
        if k in free and toks[k].text in LIGHT_PARTICLES | LIGHT_OBJECTS:
            out.add(k)
            k += 1
        if k in matched:
            out.add(i)
    return out


def _one_block_moved(order: list[int]) -> bool:
    """``order`` is increasing, or increasing once one block is moved."""
    want = sorted(order)
    if order == want:
        return True
    n = len(order)
    for i in range(n):
        for j in range(i + 1, n + 1):
            block, rest = order[i:j], order[:i] + order[j:]
            for at in range(len(rest) + 1):
                if rest[:at] + block + rest[at:] == want:
                    return True
    return False


def regrouped(a: str, b: str) -> str | None:
    """``same`` when the two statements hold the same content words in another grammar
    (module docstring), ``contradicts`` when they do but for a flipped polarity or one
    slot after the verb holding rival values; None when this reading shows nothing."""
    if lexicon() is None:
        return None
    (na, la), (nb, lb) = content_count(a), content_count(b)
    if abs(na - nb) > la + lb:
        return None  # (cheap: a word would be left over whatever the matching)
    pa, pb = parse(a), parse(b)
    if (pa.by_at < 0) != (pb.by_at < 0):
        pa, pb = active(pa), active(pb)
    if not pa.toks or not pb.toks:
        return None
    oa, ob = _of_as_possessive(pa), _of_as_possessive(pb)
    readings = [
        (oa, ob),
        *((x, ob) for x in _denominalised(pa, pb)),
        *((oa, y) for y in _denominalised(pb, pa)),
    ]
    for x, y in readings:
        if x is None or y is None:
            continue
        got = _match(x.toks, y.toks)
        if got is not None:
            verdict = _read(x, y, got)
            if verdict is not None:
                return verdict
        got = _match(x.toks, y.toks, slot=True)
        if got is not None and _read(x, y, got) == "same":
            return "contradicts"
    return None


def _denominalised(p: Parsed, other: Parsed) -> list[Parsed]:
    """``p`` with a nominalised subject read as a clause, when its head is derived from
    ``other``'s verb: "the delivery of the servers by the vendor (was late)" as "the
    vendor delivery the servers (late)", "the board's approval of the budget" as "the
    board approval the budget": the agent (after "by", or before the noun) first, the
    noun in the verb's place, what follows "of" after it. With no agent named, the
    of-phrase may as well be the subject of a verb without an object ("the collapse of
    the colony" as "the colony collapse"): both readings. None when there is no such
    noun, or a negation (kept out: what it denies would move)."""
    if p.negated or any(w in NEGATIONS for w in p.words):
        return []
    verb = next((t for t in other.toks if t.pos >= other.verb_at), None)
    if verb is None or verb.name:
        return []
    subject = [t for t in p.toks if t.pos < p.verb_at]
    head = next(
        (
            k
            for k, t in enumerate(subject)
            if _plain(t)
            and (
                key_base(t.key) == key_base(verb.key)
                or relation(key_base(t.key), key_base(verb.key)) == "synonym"
            )
            and p.words[t.pos + 1 : t.pos + 2] in (("of",), ("by",))
        ),
        None,
    )
    if head is None:
        return []
    noun = subject[head]
    words = p.words
    by = next((k for k in range(noun.pos, p.verb_at) if words[k] == "by"), p.verb_at)
    agent = [t for t in subject if t.pos > by] + subject[:head]
    patient = [t for t in subject[head + 1 :] if t.pos < by]
    rest = [t for t in p.toks if t.pos >= p.verb_at]
    out = [_clause([*agent, noun, *patient, *rest], len(agent))]
    if not agent and patient:  # (no agent: the of-phrase may be the subject)
        out.append(_clause([*patient, noun, *rest], len(patient)))
    return out


def _clause(order: list[Tok], verb_at: int) -> Parsed:
    """The tokens ``order`` as a statement read in that order, its verb at ``verb_at``."""
    toks = tuple(Tok(t.key, t.text, t.name, k) for k, t in enumerate(order))
    return Parsed(toks, tuple(t.text for t in order), False, verb_at, -1)


def _read(pa: Parsed, pb: Parsed, got: Matched) -> str | None:
    """The verdict of a match: None when roles, order or what is denied differ."""
    xs, ys = pa.toks, pb.toks
    pairs, antonyms, slot = got
    verbs = pa.verb_at < len(pa.words) and pb.verb_at < len(pb.words)
    every = pairs + ([slot] if slot else [])
    if verbs:
        for i, j in every:  # who does what: each word on its side of the verb
            if (xs[i].pos < pa.verb_at) != (ys[j].pos < pb.verb_at):
                return None
    if slot and (not verbs or xs[slot[0]].pos < pa.verb_at):
        return None  # a slot in the subject names another thing
    if not _one_block_moved([j for _, j in sorted(every)]):
        return None
    ant = {
        (i, j)
        for i, j in pairs
        if key_base(xs[i].key) != key_base(ys[j].key)
        and relation(key_base(xs[i].key), key_base(ys[j].key)) == "antonym"
    }
    if ant and not verbs:
        return None
    if any(xs[i].pos < pa.verb_at for i, _ in ant):
        return None  # an antonym in the subject names another thing ("north" / "south")
    if (pa.negated != pb.negated) != (antonyms % 2 == 1):
        return None if slot else "contradicts"  # the same words, the polarity flipped
    partner = dict(pairs)
    back = {j: i for i, j in pairs}
    neg_a, neg_b = _denied(pa), _denied(pb)
    for i in neg_a:  # what is denied is the same word, or its antonym under one negation
        if partner.get(i) not in neg_b and (i, partner.get(i)) not in ant:
            return None
    for j in neg_b:
        if back.get(j) not in neg_a and (back.get(j), j) not in ant:
            return None
    return "same"


def _denied(p: Parsed) -> set[int]:
    """Indices of the tokens right after each negation (what it denies)."""
    out = set()
    for k, w in enumerate(p.words):
        if w in NEGATIONS:
            nxt = next((n for n, t in enumerate(p.toks) if t.pos > k), None)
            if nxt is not None:
                out.add(nxt)
    return out


@functools.lru_cache(maxsize=1 << 14)
def content_count(text: str) -> tuple[int, int]:
    """(content words, light verbs and their particles): ``regrouped`` can match two
    statements only when their first counts differ by no more than their second."""
    toks = parse(text).toks
    light = sum(
        1
        for k, t in enumerate(toks)
        if t.text in LIGHT_VERBS
        or (t.text in LIGHT_PARTICLES and k and toks[k - 1].text in LIGHT_VERBS)
    )
    return len(toks) - light, light


_FRONTED = re.compile(r"^\s*([A-Za-z]+\b[^,;:]*?),\s+(.+?)\s*[.!?]?\s*$", re.S)


def unfronted(text: str) -> str:
    """The statement with a fronted phrase set off by a comma moved to its end ("Since
    the upgrade, the job fails" -> "the job fails since the upgrade"): a phrase opened by
    a preposition or a subordinator (``wordclass.PREPOSITIONS``, ``CLAUSES``), never a
    clause of cause."""
    m = _FRONTED.match(text)
    if m is None or causal(text) is not None:
        return text
    head, rest = m.group(1), m.group(2)
    first = head.split()[0].lower()
    if first not in PREPOSITIONS and first not in CLAUSES:
        return text  # (a determiner or a name opens the subject, not a fronted phrase)
    return f"{rest} {head[0].lower()}{head[1:]}"
