"""``FactTable``: facts by id that are parsed from a checkpoint only when first touched.

A checkpoint holds every fact as its canonical row (``orjson.dumps(fact.to_row())``,
see ``payload.py``). Parsing 100,000 rows into ``Fact`` objects took most of a swarm's
open time and most of a reader's private memory, while a reader usually touches a few
facts (recall hits, the facts new events name). So a state loaded from a checkpoint
keeps its facts in a ``FactTable``: per fact id, in insertion order, either the
materialized ``Fact`` or the number of its unparsed row in a ``RowStore`` (a slice of
the checkpoint payload, which a file checkpoint maps read-only so readers share it).

Reading one fact (``table[fid]``, ``get``, ``pop``) parses that row once and keeps the
``Fact``; ``in``, ``len`` and iteration over ids parse nothing. Iterating over *values*
or *items* (``values()``, ``items()``) materializes every fact first: that is the
fallback cost, paid by what touches every fact anyway (a ``pool.tick``, a forget, the
pool at capacity, ``board.list``). Everything else behaves exactly as a ``dict``:
insertion order, a popped and re-inserted id goes last, ``len``, ``in``, ``get`` — the
fold's determinism depends on that order.
"""

from __future__ import annotations

from collections.abc import (
    Callable,
    ItemsView,
    Iterator,
    KeysView,
    Mapping,
    MutableMapping,
    Sequence,
    ValuesView,
)
from typing import TYPE_CHECKING, Any

import orjson

from synthesizer.state._fast import fact_rows, facts_from_rows
from synthesizer.state.facts import Fact

if TYPE_CHECKING:
    from synthesizer.state.columns import Columns

_MISSING: Any = object()


class RowStore:
    """Canonical fact rows in one buffer: row ``i`` is ``buf[starts[i]:starts[i + 1]]``.

    ``buf`` is the checkpoint payload (``bytes``, or a ``memoryview`` of a read-only
    mapping, shared between processes); ``starts`` the rows' offsets in it (a
    ``memoryview`` cast to int64: no numpy needed to load a state). ``columns`` are
    per-row arrays of a few fields saved beside the rows (``columns.py``), so statistics
    need not parse them; ``load_columns`` makes them on first use (numpy), None when the
    block has none.
    """

    __slots__ = ("_columns", "_load_columns", "buf", "starts")

    def __init__(
        self,
        buf: bytes | memoryview,
        starts: Sequence[int],
        load_columns: Callable[[], Columns] | None = None,
    ) -> None:
        self.buf = memoryview(buf)
        self.starts = starts
        self._load_columns = load_columns
        self._columns: Columns | None = None

    @property
    def columns(self) -> Columns | None:
        """The saved columns of these rows (None: not saved)."""
        if self._columns is None and self._load_columns is not None:
            self._columns = self._load_columns()
        return self._columns

    def __len__(self) -> int:
        return max(0, len(self.starts) - 1)

    def row(self, i: int) -> bytes:
        """The canonical JSON bytes of row ``i``."""
        return bytes(self.buf[self.starts[i] : self.starts[i + 1]])

    def fact(self, i: int) -> Fact:
        """Row ``i`` parsed into a new ``Fact``."""
        return next(iter(facts_from_rows([orjson.loads(self.row(i))]).values()))


class FactTable(MutableMapping[str, Fact]):
    """A ``dict[str, Fact]`` whose checkpointed facts are parsed on first access.

    See the module docstring. ``rows`` is None for a table that never had rows.
    """

    __slots__ = ("_by_id", "rows")

    def __init__(self, ids: list[str] | None = None, rows: RowStore | None = None) -> None:
        # value: a Fact, or (an int) the number of its unparsed row in ``rows``
        self._by_id: dict[str, Fact | int] = (
            {} if ids is None else dict(zip(ids, range(len(ids)), strict=True))
        )
        self.rows = rows

    # ------------------------------------------------------------ the dict interface

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, fid: object) -> bool:
        return fid in self._by_id

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_id)

    def __getitem__(self, fid: str) -> Fact:
        v = self._by_id[fid]
        if v.__class__ is int:
            return self._load(fid, v)
        return v  # type: ignore[return-value]

    def get(self, fid: str, default: Any = None) -> Any:
        v = self._by_id.get(fid, _MISSING)
        if v is _MISSING:
            return default
        if v.__class__ is int:
            return self._load(fid, v)
        return v

    def __setitem__(self, fid: str, f: Fact) -> None:
        self._by_id[fid] = f

    def __delitem__(self, fid: str) -> None:
        del self._by_id[fid]

    def pop(self, fid: str, default: Any = _MISSING) -> Any:
        v = self._by_id.pop(fid, _MISSING)
        if v is _MISSING:
            if default is _MISSING:
                raise KeyError(fid)
            return default
        if v.__class__ is int:
            return self._parse(v)
        return v

    def popitem(self) -> tuple[str, Fact]:
        """The last (id, fact), removed (LIFO, as ``dict.popitem``)."""
        fid, v = self._by_id.popitem()
        if isinstance(v, int):
            return fid, self._parse(v)
        return fid, v

    def clear(self) -> None:
        self._by_id.clear()

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._by_id)

    def keys(self) -> KeysView[str]:
        return self._by_id.keys()

    def values(self) -> ValuesView[Fact]:
        """Every fact, in order (parses every row not parsed yet: see the module doc)."""
        self.materialize()
        return self._by_id.values()  # type: ignore[return-value]

    def items(self) -> ItemsView[str, Fact]:
        """(id, fact) pairs in order (parses every row not parsed yet)."""
        self.materialize()
        return self._by_id.items()  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"FactTable({len(self._by_id)} facts, {self.unparsed()} unparsed)"

    # ------------------------------------------------------------ rows

    def _parse(self, i: int) -> Fact:
        assert self.rows is not None
        return self.rows.fact(i)

    def _load(self, fid: str, i: int) -> Fact:
        f = self._by_id[fid] = self._parse(i)
        return f

    def materialize(self) -> None:
        """Parse every row still unparsed (one bulk parse; order unchanged)."""
        d = self._by_id
        todo = [(fid, v) for fid, v in d.items() if v.__class__ is int]
        if not todo:
            return
        assert self.rows is not None
        rows = self.rows
        blob = b"[" + b",".join(rows.row(i) for _, i in todo) + b"]"
        for (fid, _), f in zip(todo, facts_from_rows(orjson.loads(blob)).values(), strict=True):
            d[fid] = f

    def unparsed(self) -> int:
        """How many facts are still unparsed rows."""
        return sum(1 for v in self._by_id.values() if v.__class__ is int)

    def saved_columns(self) -> Columns | None:
        """The columns saved with the rows while some rows are unparsed, else None (then
        a computation over every fact may as well read the facts)."""
        if self.rows is None or not self.unparsed():
            return None
        return self.rows.columns

    def entries(self) -> list[Fact | int]:
        """Each fact in order as its ``Fact`` or, still unparsed, its row number (for
        serialization and statistics that need not parse)."""
        return list(self._by_id.values())

    def row_bytes(self, i: int) -> bytes:
        """The canonical bytes of unparsed row ``i``."""
        assert self.rows is not None
        return self.rows.row(i)


def entries_of(facts: Mapping[str, Fact]) -> list[Fact | int]:
    """``FactTable.entries()`` of a table; the facts of a plain dict."""
    return facts.entries() if isinstance(facts, FactTable) else list(facts.values())


def rows_bytes(facts: Mapping[str, Fact], entries: list[Fact | int]) -> list[bytes]:
    """The canonical row bytes of each of ``entries`` (``entries_of(facts)``): an
    unparsed row as stored, a ``Fact`` as ``orjson.dumps(fact.to_row())``."""
    out: list[bytes] = []
    dumps, opt = orjson.dumps, orjson.OPT_SORT_KEYS
    parsed = iter(fact_rows([e for e in entries if e.__class__ is not int]))  # type: ignore[misc]
    for e in entries:
        if e.__class__ is int:
            out.append(facts.row_bytes(e))  # type: ignore[attr-defined]
        else:
            out.append(dumps(next(parsed), option=opt))
    return out


def fact_array(facts: Mapping[str, Fact]) -> Any:
    """The canonical JSON array of a state's facts (``SwarmState.to_dict``'s "facts" and
    "evicted"): a list of rows, or, while some rows are unparsed, the same array as an
    ``orjson.Fragment`` of the rows' bytes (so both serialize to the same bytes)."""
    if not isinstance(facts, FactTable) or not facts.unparsed():
        return fact_rows(facts.values())
    rows = rows_bytes(facts, facts.entries())
    return orjson.Fragment(b"[" + b",".join(rows) + b"]")
