"""The writer view's sorted hash columns (swarmlog/file/view/columns.py): a lookup answers exactly
what a dict of the same entries would, hash collisions included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmlog.file.view import columns
from swarmlog.file.view.columns import BasedDict, Table

_strs = st.text(min_size=1, max_size=12)
_entries = st.dictionaries(_strs, st.integers(1, 10**9), max_size=40)


def _check(table: Table, want: dict[str, int], absent: list[str]) -> None:
    assert len(table) == len(want)
    for s, seq in want.items():
        assert table.find(s) == seq
    for s in absent:
        if s not in want:
            assert table.find(s) is None
    assert table.any_of(list(want)) == bool(want)
    assert not table.any_of([s for s in absent if s not in want])


@settings(max_examples=150, deadline=None)
@given(base=_entries, newer=_entries, absent=st.lists(_strs, max_size=10))
def test_a_merged_table_answers_like_the_dict_it_stands_for(
    base: dict[str, int], newer: dict[str, int], absent: list[str]
) -> None:
    table = Table.build(list(base), base.values())
    _check(table, base, absent)
    merged = table.merged(newer)
    _check(merged, {**base, **newer}, absent)  # a newer entry replaces an equal string's
    view = BasedDict(table)
    view.update(newer)
    for s, seq in {**base, **newer}.items():
        assert view.get(s) == seq and s in view and view[s] == seq
    for s in absent:
        if s not in base and s not in newer:
            assert view.get(s, 0) == 0 and s not in view
            with pytest.raises(KeyError):
                view[s]


def test_colliding_hashes_are_told_apart_by_their_strings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every string hashes alike: lookups still answer from exact string comparison."""
    monkeypatch.setattr(columns, "str_hash", lambda s: 7 if s.startswith("c") else len(s))
    entries = {f"c{i}": i + 1 for i in range(50)} | {"x": 99, "yy": 98}
    table = Table.build(list(entries), entries.values())
    _check(table, entries, ["c", "c50", "c1x", "z", "zz"])
    merged = table.merged({"c7": 500, "c60": 501})
    _check(merged, {**entries, "c7": 500, "c60": 501}, ["c61", "q"])


def test_default_ids_hash_by_their_digits_and_others_by_blake2b() -> None:
    uid = "0123456789abcdef" + "f" * 16
    assert columns.str_hash(uid) == 0x0123456789ABCDEF
    for s in ("key", "z" * 32, "é" * 32, "-123456789abcdef" + "0" * 16, "\ud800"):
        h = columns.str_hash(s)
        assert 0 <= h < 2**64 and h == columns.str_hash(s)
    assert columns.str_hash("a") != columns.str_hash("b")


def test_an_empty_table_knows_nothing() -> None:
    t = Table.build([], [])
    assert len(t) == 0 and t.find("a") is None and not t.any_of(["a"])
    assert t.merged({}).find("a") is None
    assert t.merged({"a": 3}).find("a") == 3
