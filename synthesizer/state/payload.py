"""The checkpoint payload of a ``SwarmState``: a header, then the fact rows unparsed.

``SwarmState.to_bytes()`` is the state's canonical form (its digest); a checkpoint stores
the same content laid out so that loading it parses no fact (``table.py``)::

    swarmstate-rows 1 <header length, 12 digits>\\n
    <header: JSON, sorted keys>        the state's canonical dict without its fact rows
                                       ("facts"/"evicted" empty), the ids of the facts
                                       and of the evicted facts in order, and where the
                                       parts below are
    <rows>                             each fact's canonical row (orjson.dumps of
                                       Fact.to_row()), facts then evicted, back to back
    <starts>                           int64 offsets of the rows in the payload (n + 1;
                                       native byte order, as the vector files)
    <columns>                          columns' arrays of the fact rows (8-aligned)

Loading = checksum (the store's) + one parse of the header + views of the arrays: a
fact's row is parsed when the fact is first read. A row spliced back into
``to_bytes`` unparsed (``orjson.Fragment``) gives the same bytes as the parsed fact,
so the digest does not depend on what was parsed. ``CHECKPOINT_FORMAT`` names this
layout; checkpoints of an older layout are passed over (the state is replayed once and
the next checkpoint is written in this one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from synthesizer.state.swarmstate import FORMAT, SwarmState
from synthesizer.state.table import FactTable, RowStore, entries_of, rows_bytes

LAYOUT = 1
CHECKPOINT_FORMAT = f"swarmstate/{FORMAT}+rows/{LAYOUT}"
"""The checkpoint store's format tag of these payloads."""

if TYPE_CHECKING:
    from synthesizer.state.columns import Columns

_MAGIC = b"swarmstate-rows %d " % LAYOUT
_PREFIX = len(_MAGIC) + 13  # 12 digits and a newline
_ALIGN = 8


def encode(state: SwarmState) -> bytes:
    """The checkpoint payload of ``state`` (see the module docstring)."""
    from swarmlog.numpyload import np
    from synthesizer.state import columns

    f_entries, e_entries = entries_of(state.facts), entries_of(state.evicted)
    rows = rows_bytes(state.facts, f_entries) + rows_bytes(state.evicted, e_entries)
    facts = state.facts
    old = facts.rows.columns if isinstance(facts, FactTable) and facts.rows else None
    cols = columns.build(f_entries, old)
    rest = state.to_dict(with_facts=False)
    ids = {"facts": list(state.facts), "evicted": list(state.evicted)}

    def header(at: dict[str, Any]) -> bytes:
        return orjson.dumps({"state": rest, "ids": ids, "at": at}, option=orjson.OPT_SORT_KEYS)

    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    arrays: list[tuple[str, np.ndarray]] = [(n, cols.arrays[n]) for n in cols.arrays]
    arrays += [("rb_row", cols.rb_row), ("rb_agent", cols.rb_agent)]
    codes = {k: c.names for k, c in cols.codes.items()}
    # the header holds the offsets of the parts after it: grow it until they fit
    at: dict[str, Any] = {"codes": codes}
    head = header(at)
    while True:
        base = _PREFIX + len(head)
        starts = np.empty(len(rows) + 1, dtype=np.int64)
        starts[0] = base
        np.cumsum(lengths, out=starts[1:])
        starts[1:] += base
        pos = _aligned(int(starts[-1]))
        layout: dict[str, Any] = {"codes": codes, "starts": pos, "columns": {}}
        pos += starts.nbytes
        for name, arr in arrays:
            pos = _aligned(pos)
            layout["columns"][name] = [pos, arr.dtype.str, len(arr)]
            pos += arr.nbytes
        layout["size"] = pos
        new_head = header(layout)
        if len(new_head) == len(head):
            head = new_head
            break
        head = new_head
    out = bytearray(_MAGIC + b"%012d\n" % len(head) + head)
    for r in rows:
        out += r
    _pad(out, layout["starts"])
    out += starts.tobytes()
    for name, arr in arrays:
        _pad(out, layout["columns"][name][0])
        out += np.ascontiguousarray(arr).tobytes()
    if len(out) != layout["size"]:
        raise AssertionError("checkpoint payload layout mismatch")
    return bytes(out)


def _header(mv: memoryview) -> tuple[int, dict[str, Any]]:
    """(header length, header) of a payload; ValueError if it is not this layout."""
    if bytes(mv[: len(_MAGIC)]) != _MAGIC:
        raise ValueError(f"not a {CHECKPOINT_FORMAT} payload")
    n_head = int(bytes(mv[len(_MAGIC) : _PREFIX - 1]))
    h = orjson.loads(mv[_PREFIX : _PREFIX + n_head])
    if not isinstance(h, dict):
        raise ValueError("the payload header is not an object")
    return n_head, h


def state_dict(data: bytes | memoryview) -> dict[str, Any]:
    """The state's canonical dict without its fact rows (configuration, seqs, counters):
    what a reader of a checkpoint needs short of its facts."""
    state: dict[str, Any] = _header(memoryview(data))[1]["state"]
    return state


def decode(data: bytes | memoryview) -> SwarmState:
    """The state of a payload written by ``encode``; rows stay unparsed (ValueError if
    the payload is not this layout or is inconsistent)."""
    mv = memoryview(data)
    n_head, h = _header(mv)
    at = h["at"]
    if at["size"] != len(mv):
        raise ValueError(f"payload is {len(mv)} bytes, its header says {at['size']}")
    fact_ids, ev_ids = h["ids"]["facts"], h["ids"]["evicted"]
    nf, ne = len(fact_ids), len(ev_ids)
    starts = mv[at["starts"] : at["starts"] + 8 * (nf + ne + 1)].cast("q")
    if starts[0] != _PREFIX + n_head or starts[-1] > at["starts"]:
        raise ValueError("row offsets are inconsistent")
    spec = at["columns"]
    if any(spec[name][2] != nf for name in (*_NUMERIC, *_CODED)):
        raise ValueError("columns do not match the fact rows")
    codes = at["codes"]

    def columns() -> Columns:
        return _columns(mv, spec, codes)

    state = SwarmState._from_dict(h["state"])
    state.facts = FactTable(fact_ids, RowStore(mv, starts[: nf + 1], columns))
    state.evicted = FactTable(ev_ids, RowStore(mv, starts[nf:]))
    return state


_NUMERIC = ("strength", "reinforcements", "created_seq", "support")  # columns.NUMERIC
_CODED = ("tier", "status", "category", "agent")  # columns.CODED


def _columns(mv: memoryview, spec: dict[str, Any], codes: dict[str, list[str]]) -> Columns:
    """The saved columns (``columns.py``), as numpy views of the payload."""
    from swarmlog.numpyload import np
    from synthesizer.state import columns

    arr = {
        name: np.frombuffer(mv, dtype=dt, count=n, offset=off)
        for name, (off, dt, n) in spec.items()
    }
    return columns.Columns(
        {k: arr[k] for k, _ in columns.NUMERIC} | {k: arr[k] for k in columns.CODED},
        arr["rb_row"],
        arr["rb_agent"],
        {k: columns.Codes(v) for k, v in codes.items()},
    )


def _aligned(x: int) -> int:
    return (x + _ALIGN - 1) // _ALIGN * _ALIGN


def _pad(out: bytearray, to: int) -> None:
    out += b"\0" * (to - len(out))
