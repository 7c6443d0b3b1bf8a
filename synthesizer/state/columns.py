"""A few fields of every checkpointed fact as numpy columns, for statistics without parsing.

A checkpoint saves, beside the fact rows (``synthesizer/state/payload.py``), per row: strength,
reinforcements, created seq, support, and codes of tier, status, category and first
agent, plus who reinforced it (``rb_row``/``rb_agent``: one entry per reinforcing agent,
the row it belongs to and the agent's code). Rows a reader never parsed are unchanged
since the checkpoint, so their columns are still exact; ``frame`` combines them with the
fields of the facts that were parsed (and perhaps changed) into one array per field, in
the table's iteration order. ``SwarmState.stats`` and ``metrics`` compute from a frame
exactly what their plain per-fact loops compute (tests/test_lazy_state.py checks it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, repeat
from operator import not_
from typing import Any

import numpy as np

from synthesizer.state.facts import Fact

NUMERIC: tuple[tuple[str, str], ...] = (
    ("strength", "<f8"),
    ("reinforcements", "<i8"),
    ("created_seq", "<i8"),
    ("support", "<i8"),
)
CODED = ("tier", "status", "category", "agent")
"""Fields saved as int32 codes into a table of their strings (agent None: code -1)."""


class Codes:
    """Strings <-> small ints, in order of first use (existing codes never change)."""

    __slots__ = ("_index", "names")

    def __init__(self, names: Iterable[str] = ()) -> None:
        self.names: list[str] = list(names)
        self._index = {s: i for i, s in enumerate(self.names)}

    def code(self, s: str | None) -> int:
        """The code of ``s`` (-1 for None), adding it when new."""
        if s is None:
            return -1
        i = self._index.get(s)
        if i is None:
            i = self._index[s] = len(self.names)
            self.names.append(s)
        return i


@dataclass
class Columns:
    """Per-row field arrays of a block of fact rows and their code tables."""

    arrays: dict[str, np.ndarray]
    rb_row: np.ndarray  # int32: the row of each (fact, reinforcing agent) pair
    rb_agent: np.ndarray  # int32: the agent's code (table "agent")
    codes: dict[str, Codes]

    def __len__(self) -> int:
        return len(self.arrays["strength"])


def _fields(facts: list[Fact], codes: dict[str, Codes]) -> dict[str, list[Any]]:
    """Each column's values for ``facts`` (coded fields as codes)."""
    return {
        "strength": [f.strength for f in facts],
        "reinforcements": [f.reinforcements for f in facts],
        "created_seq": [f.created_seq for f in facts],
        "support": [f.support for f in facts],
        "tier": [codes["tier"].code(f.tier) for f in facts],
        "status": [codes["status"].code(f.status) for f in facts],
        "category": [codes["category"].code(f.category) for f in facts],
        "agent": [codes["agent"].code(f.agent) for f in facts],
    }


def _dtype(name: str) -> str:
    return dict(NUMERIC).get(name, "<i4")


def build(entries: list[Fact | int], old: Columns | None) -> Columns:
    """The columns of ``entries`` (a table's facts in order: a ``Fact``, or the number of
    an unparsed row of ``old``), for a checkpoint written in that order."""
    n = len(entries)
    codes = {k: Codes(old.codes[k].names if old is not None else ()) for k in CODED}
    flags = list(map(isinstance, entries, repeat(int)))  # C loops: ~100 ns a fact
    is_row = np.array(flags, dtype=bool)
    rows = np.array(list(compress(entries, flags)), dtype=np.int64)
    facts: list[Fact] = list(compress(entries, map(not_, flags)))  # type: ignore[arg-type]
    if old is None and len(rows):
        raise ValueError("unparsed rows without their columns")
    values = _fields(facts, codes)
    arrays = {}
    for name in (*(k for k, _ in NUMERIC), *CODED):
        a = np.empty(n, dtype=_dtype(name))
        if old is not None and len(rows):
            a[is_row] = old.arrays[name][rows]
        a[~is_row] = values[name]
        arrays[name] = a
    # reinforcing agents: those of unparsed rows moved to their new row numbers, then
    # the parsed facts' own (the pairs' order is irrelevant: only counted)
    rb_row: list[np.ndarray] = []
    rb_agent: list[np.ndarray] = []
    if old is not None and len(rows):
        new_of_old = np.full(len(old), -1, dtype=np.int64)
        new_of_old[rows] = np.flatnonzero(is_row)
        moved = new_of_old[old.rb_row]
        keep = moved >= 0
        rb_row.append(moved[keep])
        rb_agent.append(old.rb_agent[keep])
    agent = codes["agent"]
    pairs = [
        (p, agent.code(r))
        for p, f in zip(np.flatnonzero(~is_row).tolist(), facts, strict=True)
        for r in f.reinforced_by
    ]
    if pairs:
        arr = np.array(pairs, dtype=np.int64)
        rb_row.append(arr[:, 0])
        rb_agent.append(arr[:, 1])
    return Columns(
        arrays,
        np.concatenate(rb_row).astype(np.int32) if rb_row else np.zeros(0, np.int32),
        np.concatenate(rb_agent).astype(np.int32) if rb_agent else np.zeros(0, np.int32),
        codes,
    )


@dataclass
class Frame:
    """Fields of every fact of a table, in its iteration order (see ``frame``)."""

    arrays: dict[str, np.ndarray]
    codes: dict[str, Codes]
    reinforced: dict[str, int]  # agent -> facts it reinforced (``_agent_rows``)

    def __len__(self) -> int:
        return len(self.arrays["strength"])

    def names(self, field: str, codes: np.ndarray) -> list[str | None]:
        """The strings of ``codes`` of a coded field (None for -1)."""
        table = self.codes[field].names
        return [table[c] if c >= 0 else None for c in codes.tolist()]


def frame(entries: list[Fact | int], cols: Columns) -> Frame:
    """The fields of ``entries`` (``FactTable.entries()`` of a table whose unparsed rows
    ``cols`` describes), without parsing a row."""
    built = build(entries, cols)
    reinforced: dict[str, int] = {}
    if len(built.rb_agent):
        counts = np.bincount(built.rb_agent)
        names = built.codes["agent"].names
        for code in np.flatnonzero(counts).tolist():
            reinforced[names[code]] = int(counts[code])
    return Frame(built.arrays, built.codes, reinforced)


def ordered_counts(frame_: Frame, field: str, none_as: str | None = None) -> dict[str, int]:
    """Counts of a coded field's values, keys in order of first appearance (as a loop of
    ``bump`` over the facts makes them); code -1 counts as ``none_as``."""
    codes = frame_.arrays[field]
    if not len(codes):
        return {}
    uniq, first, counts = np.unique(codes, return_index=True, return_counts=True)
    out: dict[str, int] = {}
    table = frame_.codes[field].names
    for i in np.argsort(first, kind="stable").tolist():
        c = int(uniq[i])
        key = table[c] if c >= 0 else none_as
        if key is None:
            raise ValueError(f"{field}: None has no key here")
        out[key] = out.get(key, 0) + int(counts[i])
    return out


def sequential_sum(values: np.ndarray) -> float:
    """``0.0 + v0 + v1 + …`` left to right, as a Python loop adds (numpy's ``sum`` pairs)."""
    if not len(values):
        return 0.0
    return float(np.add.accumulate(values)[-1]) + 0.0
