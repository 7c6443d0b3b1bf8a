"""``columns.gather`` (the sorted snapshot's strings copied by rows, one pass per length)
equals the plain per-byte gather it replaced, for any lengths, order and blob."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from swarmlog.file.view.columns import gather


def _reference(blob: np.ndarray, starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    offs = np.zeros(len(lens) + 1, np.int64)
    np.cumsum(lens, out=offs[1:])
    at = np.arange(offs[-1], dtype=np.int64) + np.repeat(starts - offs[:-1], lens)
    return blob[at]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.binary(min_size=0, max_size=40), min_size=0, max_size=60),
    st.randoms(use_true_random=False),
)
def test_gather_equals_the_per_byte_reference(strings: list[bytes], rnd: object) -> None:
    heap = b"".join(len(x).to_bytes(4, "little") + x for x in strings)
    blob = np.frombuffer(heap, dtype=np.uint8)
    starts, at = [], 0
    for x in strings:
        starts.append(at + 4)
        at += 4 + len(x)
    order = list(range(len(strings)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    s = np.array([starts[i] for i in order], dtype=np.int64)
    n = np.array([len(strings[i]) for i in order], dtype=np.int64)
    offs = np.zeros(len(n) + 1, np.int64)
    np.cumsum(n, out=offs[1:])
    got = gather(blob, s, n, offs)
    assert got.tobytes() == _reference(blob, s, n).tobytes()
    assert got.tobytes() == b"".join(strings[i] for i in order)
