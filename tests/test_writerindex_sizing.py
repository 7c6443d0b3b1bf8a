"""The writer index's geometry: tables and heap grow by doubling (write-path work).

A table is grown when it would pass half full, and a grown or rebuilt one starts with at
least three slots an entry, so it never holds more than six (powers of 4 allowed 16);
the heap gets twice its strings, whole ``MIN_HEAP`` units (powers of 4 allowed 8x). And
on a real log the file stays within those bounds while every id is still found.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swarmlog import Event, FileLog
from swarmlog.file.view import writerindex as wi


@given(st.integers(min_value=0, max_value=1 << 26))
def test_a_table_has_three_to_six_slots_an_entry(n: int) -> None:
    cap = wi._cap_for(n)
    assert cap & (cap - 1) == 0  # (a power of two: the probe masks with cap - 1)
    assert cap >= 3 * n and cap >= wi.MIN_SLOTS
    assert cap < 6 * n or cap == wi.MIN_SLOTS


@given(st.integers(min_value=0, max_value=1 << 34))
def test_the_heap_is_twice_its_strings(used: int) -> None:
    cap = wi._heap_cap_for(used)
    assert cap % wi.MIN_HEAP == 0 and cap >= wi.MIN_HEAP
    assert 2 * used <= cap < 2 * used + wi.MIN_HEAP or cap == wi.MIN_HEAP


@pytest.mark.slow
def test_a_grown_index_stays_within_its_bounds_and_finds_every_id(tmp_path: Path) -> None:
    a, b = FileLog(tmp_path, notify=False), FileLog(tmp_path, notify=False)
    ids = []
    for i in range(40):  # 40,000 ids: the id table grown 8,192 -> .. -> 131,072 slots
        evs = [Event(agent="w", type="t", id=f"id-{i}-{j}") for j in range(1000)]
        ids += [e.id for e in evs]
        (a, b)[i % 2].append_many(evs)
    ix = b._wview()
    assert ix is not None
    assert 2 * ix.id_count <= ix.id_cap < 12 * ix.id_count  # (half full at most; 6x + growth)
    assert ix.heap_used <= ix.heap_cap < 4 * ix.heap_used + wi.MIN_HEAP
    size = os.path.getsize(tmp_path / wi.NAME)
    assert size == wi.PAGE + wi.SLOT * (ix.id_cap + ix.key_cap) + ix.heap_cap
    assert all(ix.find_id(s) == n + 1 for n, s in enumerate(ids))
    a.close()
    b.close()
