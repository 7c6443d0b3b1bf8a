"""Stored bytes never change by accident: a fixed corpus against tests/data/golden_records.jsonl.

Each corpus entry is a stored event given field by field (seq, id, ts and swarm explicit:
nothing here goes through ``append``, whose ts the log stamps) plus its ``more`` count.
``envelope.encode`` must turn it into the golden line byte for byte, and decoding that
line must give the entry back. A deliberate format change (say, a hash chain) regenerates
the file on purpose: ``python -m tests.test_golden --regenerate``, and says so in its commit.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from swarmlog.envelope import Event, check_crc, decode, encode

GOLDEN = Path(__file__).parent / "data" / "golden_records.jsonl"

_BASE = {"swarm": "golden", "agent": "a1", "type": "test.event"}

CORPUS: list[tuple[dict[str, Any], int]] = [
    # the smallest record: no optional field, empty body
    ({**_BASE, "seq": 1, "id": "e1", "ts": 1700000000.0, "body": {}}, 0),
    # every optional field; body keys out of order (stored sorted, nested too)
    (
        {
            **_BASE,
            "seq": 2,
            "id": "e2",
            "ts": 1700000000.25,
            "session": "s-1",
            "thread": "t.main",
            "type": "memory.shared",
            "key": "f2",
            "body": {
                "importance": 0.8,
                "content": "The dataset has a 12-month cycle",
                "category": "discovery",
                "meta": {"z": 1, "a": [3, {"y": True, "b": None}]},
            },
            "causes": [1],
        },
        0,
    ),
    # text that must be escaped or is not ASCII
    (
        {
            **_BASE,
            "seq": 3,
            "id": "e3",
            "ts": 1700000001.5,
            "body": {"content": 'quote " backslash \\ tab \t newline \n bell \x07',
                     "unicode": "café Ω 東京 🐝", "empty": ""},
        },
        0,
    ),
    # numbers: float forms, big and negative integers, booleans
    (
        {
            **_BASE,
            "seq": 4,
            "id": "e4",
            "ts": 1700000002.0,
            "body": {
                "tiny": 1e-07, "third": 1 / 3, "big": 1.5e300, "neg": -0.0, "whole": 3.0,
                "int": 9007199254740993, "negint": -42, "yes": True, "no": False,
            },
            "causes": [2, 3],
        },
        0,
    ),
    # a batch of three: ``more`` counts the records of the batch still to come
    ({**_BASE, "seq": 5, "id": "b1", "ts": 1700000003.0, "key": "k", "body": {"i": 1}}, 2),
    ({**_BASE, "seq": 6, "id": "b2", "ts": 1700000003.0, "agent": "a2", "body": {"i": 2}}, 1),
    ({**_BASE, "seq": 7, "id": "b3", "ts": 1700000003.0, "body": {"i": 3, "list": []}}, 0),
    # an unknown type is carried through untouched
    ({**_BASE, "seq": 8, "id": "e8", "ts": 1700000004.0, "type": "x.future.kind",
      "body": {"anything": {"goes": [1, "two", 3.5]}}}, 0),
]


def encoded() -> list[bytes]:
    """The corpus through the envelope's encoder."""
    return [encode(Event(**d), more=more) for d, more in CORPUS]


def test_encoder_writes_the_golden_bytes() -> None:
    golden = GOLDEN.read_bytes().splitlines(keepends=True)
    lines = encoded()
    assert len(golden) == len(lines)
    for i, (want, got) in enumerate(zip(golden, lines, strict=True)):
        assert got == want, f"record {i + 1} changed:\n  golden {want!r}\n  now    {got!r}"


def test_golden_lines_decode_to_the_corpus() -> None:
    for line, (d, more) in zip(GOLDEN.read_bytes().splitlines(keepends=True), CORPUS, strict=True):
        assert check_crc(line)
        ev, n = decode(line)
        assert n == more
        assert ev.to_dict() == Event(**d).to_dict()
        assert list(ev.to_dict()) == list(Event(**d).to_dict())  # key order too


if __name__ == "__main__" and sys.argv[1:] == ["--regenerate"]:
    GOLDEN.write_bytes(b"".join(encoded()))
    print(f"wrote {len(CORPUS)} records to {GOLDEN}")
