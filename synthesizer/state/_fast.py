"""The fold's CPython speed tricks, kept in one place.

Each function here does exactly what a plain version does (``tests/
test_synth_fast_reference.py`` checks each against its reference on generated input),
only faster on CPython. Everything else in the fold reads as plain Python and calls
these where the event rate makes a difference. Change one only together with its
reference test; the comment on each says what it saves.
"""

from __future__ import annotations

import gc
import math
import operator
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import starmap
from typing import Any

from synthesizer.config import SynthConfig
from synthesizer.state.facts import (
    ACTIVE,
    FACT_FIELDS,
    LONG_TERM,
    SHORT_TERM,
    WORKING,
    Evidence,
    Fact,
    RawMemory,
)

_HOUR = 3600.0  # tiers.HOUR (tiers imports facts only; kept literal to stay a leaf)


class Knobs:
    """The config numbers the hot handlers read, copied into plain slots.

    Saves ~half of each read: a slot read against a pydantic model field read (and a
    second attribute hop for ``config.tiers.x``), several reads per event.
    """

    __slots__ = (
        "access_energy",
        "boost",
        "capacity",
        "long_decay",
        "max_strength",
        "promote_long",
        "promote_short",
        "short_decay",
        "working_decay",
    )

    def __init__(self, cfg: SynthConfig) -> None:
        p = cfg.pool
        t = cfg.tiers
        self.capacity = p.capacity
        self.boost = p.boost
        self.max_strength = p.max_strength
        self.working_decay = t.working_decay
        self.short_decay = t.short_decay
        self.long_decay = t.long_decay
        self.access_energy = t.access_energy
        self.promote_short = t.promote_short
        self.promote_long = t.promote_long


_PLAIN_BODY = frozenset(("content", "category", "importance"))
_tuple_new = tuple.__new__


def raw_memory(d: dict[str, Any]) -> RawMemory:
    """``RawMemory.from_shared(d)``: the raw memory of a stored ``memory.shared`` dict.

    The usual body (content, category, importance only) is built with ``tuple.__new__``:
    saves ~1 µs per shared memory against the NamedTuple's keyword constructor.
    """
    b = d["body"]
    if len(b) > 3 or not _PLAIN_BODY.issuperset(b):
        return RawMemory.from_shared(d)
    importance = b.get("importance", 0.5)
    if type(importance) is not float:
        importance = float(importance)
    return _tuple_new(
        RawMemory,
        (
            d["seq"],
            d["agent"],
            d.get("session"),
            d.get("thread"),
            d["ts"],
            b["content"],
            b.get("category", "general"),
            importance,
            None,
            None,
            None,
            None,
            None,
            None,
            None,  # client
        ),
    )


def fact_from_raw(
    fid: str, raw: RawMemory, seq: int, ts: float, signature: str | None, strength: float
) -> Fact:
    """``facts.new_fact`` for a fact created at ``seq``/``ts`` from raw memory ``raw``.

    Positional arguments in field order: saves ~1 µs per fact.created against the
    keyword call (30 fields).
    """
    (rseq, ragent, session, thread, rts, content, category, imp, subject, value, ttl, emb,
     embedder, _origins, client) = raw  # fmt: skip
    return Fact(
        fid,
        content,
        category,
        imp,
        seq,  # created_seq
        ts,  # created_ts
        seq,  # version
        subject,
        value,
        ACTIVE,
        [_tuple_new(Evidence, (rseq, ragent, session, rts, client))],
        [],  # cited
        strength,
        0,  # reinforcements
        [],  # reinforced_by
        1.0,  # energy
        WORKING,
        ts,  # energy_ts
        0.0,  # feedback_sum
        0,  # feedback_count
        0,  # access_count
        None,  # last_access
        None if ttl is None else rts + ttl,  # expires_at
        thread,
        session,
        None,  # cluster
        signature,
        emb,
        embedder,
        [],  # history
    )


def access(f: Fact, ts: float, k: Knobs) -> bool:
    """``tiers.access(f, ts, config.tiers)``; True if the fact was promoted.

    Inlined (decay, add energy, promote) with the knobs in slots: saves four Python
    calls and a dozen pydantic reads per recall hit.
    """
    tier = f.tier
    dt = ts - f.energy_ts
    if dt > 0.0:
        if tier == WORKING:
            lam = k.working_decay
        elif tier == SHORT_TERM:
            lam = k.short_decay
        else:
            lam = k.long_decay
        f.energy = f.energy * math.exp(-lam * (dt / _HOUR))
        f.energy_ts = ts
    f.energy += k.access_energy
    e = f.energy
    moved = tier
    if moved == WORKING and e > k.promote_short:
        moved = SHORT_TERM
    if moved == SHORT_TERM and e > k.promote_long:
        moved = LONG_TERM
    if moved != tier:
        f.tier = moved
        return True
    return False


def column(dicts: list[dict[str, Any]], key: str) -> list[Any]:
    """``[d[key] for d in dicts]``; ``map`` + ``itemgetter`` run the loop in C (~2x)."""
    return list(map(operator.itemgetter(key), dicts))


def tally(counts: dict[str, int], keys: list[str]) -> None:
    """Add one to ``counts[k]`` for each ``k`` in ``keys`` (new keys in first-seen order).

    ``Counter`` counts a chunk in C, then one Python step per distinct key: saves a
    dict update per event.
    """
    if len(keys) == 1:
        k = keys[0]
        counts[k] = counts.get(k, 0) + 1
        return
    for k, n in Counter(keys).items():
        counts[k] = counts.get(k, 0) + n


_ROW = operator.attrgetter(*FACT_FIELDS)
_EVIDENCE_AT = FACT_FIELDS.index("evidence")


def fact_rows(facts: Iterable[Fact]) -> list[list[Any]]:
    """``[f.to_row() for f in facts]``: every field in one ``attrgetter`` call instead of
    a ``getattr`` each (30 per fact, at checkpoint save)."""
    out = []
    for f in facts:
        row = list(_ROW(f))
        row[_EVIDENCE_AT] = [e.serial() for e in f.evidence]
        out.append(row)
    return out


def facts_from_rows(rows: list[list[Any]]) -> dict[str, Fact]:
    """``{row[0]: Fact.from_row(row)}`` for ``to_row`` rows (consumes them).

    Positional construction in one tight loop: the checkpoint load's hot path (~2x
    against keyword construction). Evidence rows have four fields, or five with a client
    (``Evidence.serial``): ``starmap`` over the constructor takes both.
    """
    out: dict[str, Fact] = {}
    for row in rows:
        row[_EVIDENCE_AT] = list(starmap(Evidence, row[_EVIDENCE_AT]))
        out[row[0]] = Fact(*row)
    return out


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic GC inside the block (re-entrant; restores the prior state).

    Loading a checkpoint or folding a long log builds millions of small containers that
    hold no reference cycles; the collector would traverse the growing heap again and
    again (seconds, for nothing). On the way out everything built meanwhile moves to the
    oldest generation (``gc.freeze()`` + ``gc.unfreeze()``, two list splices) while
    collection is still off, so the next allocation does not start a young-generation
    collection over the whole new state only to promote it. Skipped when the program has
    frozen objects of its own (unfreezing would release them).
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
