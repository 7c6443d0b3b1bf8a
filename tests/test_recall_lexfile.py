"""The lexical index's checkpoint file: its terms and fact ids stay in their blobs until
looked up (``swarmlex/2``), and a read index answers as the one built from the same
contents, before and after changes; a file of the format before (``swarmlex/1``, names
as JSON) still loads."""

from __future__ import annotations

import numpy as np
import orjson
import pytest

from synthesizer.search.lexical import LexicalIndex

CONTENTS = {
    f"f{i:03d}": text
    for i, text in enumerate(
        [
            "ORA-00942 table or view does not exist in billing",
            "ORA-00904 invalid identifier in the billing schema",
            "src/billing/invoice.py rounds totals twice",
            "src/billing/invoices.py is the old module",
            "café queue latency on db-prod-03.eu-west-1",
            "naïve retry storm on db-prod-04 after deploy",
            "MaxPoolSize too low for the payments tenant",
            "日本語 note about the search index",
            "deploy v2.14.3 fixes the regression of v2.14.2",
            "budget review for the vector search quota",
        ]
    )
}
QUERIES = [
    "ORA-00942",
    "billing invoice",
    "café latency",
    "db-prod-04 retry",
    "max pool size",
    "日本語",
    "v2.14.2 regression",
    "search quota budget",
    "nothing matches this",
]


def built(contents: dict[str, str]) -> LexicalIndex:
    lex = LexicalIndex()
    for fid, text in contents.items():
        lex.put(fid, text)
    return lex


def same(a: LexicalIndex, b: LexicalIndex) -> None:
    assert len(a) == len(b)
    for q in QUERIES:
        sa, sb = a.scores(q, 5), b.scores(q, 5)
        assert sa.keys() == sb.keys(), q
        assert all(sa[k] == pytest.approx(sb[k]) for k in sa), q
    for t in ("ora-00942", "src/billing/invoice.py", "db-prod-04", "日本語"):
        assert a.holding(t, 10) == b.holding(t, 10)
    assert a.vocabulary() == b.vocabulary()


def test_a_read_index_answers_as_the_built_one() -> None:
    lex = built(CONTENTS)
    read = LexicalIndex.load(lex.dump())
    assert read.frozen == len(CONTENTS)
    same(read, lex)
    assert all(fid in read for fid in CONTENTS) and "f999" not in read
    assert read.scores("ORA-00942", 1) == {
        "f000": pytest.approx(lex.scores("ORA-00942", 1)["f000"])
    }


def test_changes_after_reading_answer_as_a_fresh_build() -> None:
    read = LexicalIndex.load(built(CONTENTS).dump())
    same(read, built(CONTENTS))  # (queried first: what it keeps per term must follow)
    now = dict(CONTENTS)
    del now["f001"]
    read.remove("f001")
    now["f004"] = "café queue latency fixed on db-prod-03.eu-west-1"
    read.put("f004", now["f004"])
    now["f100"] = "ORA-00942 again, in the search schema"
    read.put("f100", now["f100"])
    read.remove("f100")
    read.put("f100", now["f100"])  # an overlay slot freed and reused
    assert "f001" not in read and "f004" in read and "f100" in read
    same(read, built(now))
    again = LexicalIndex.load(read.dump())  # the changed index written and read again
    same(again, built(now))
    read.sync({k: _Doc(v) for k, v in now.items() if k != "f002"})  # full: compacts
    del now["f002"]
    assert read.frozen == len(now)
    same(read, built(now))


def test_a_file_of_the_format_before_still_loads() -> None:
    lex = built(CONTENTS)
    read = LexicalIndex.load(_as_format_1(lex.dump()))
    assert read.frozen == len(CONTENTS)
    same(read, lex)


def test_names_out_of_range_are_refused() -> None:
    data = bytearray(built(CONTENTS).dump())
    hlen = int.from_bytes(data[:8], "little")
    header = orjson.loads(bytes(data[8 : 8 + hlen]))
    off, _, n = header["arrays"]["ids_order"]
    at = 8 + hlen + off
    data[at : at + 8 * n] = np.full(n, 10**6, dtype=np.int64).tobytes()
    with pytest.raises(ValueError, match="names"):
        LexicalIndex.load(bytes(data))


class _Doc:
    def __init__(self, content: str) -> None:
        self.content = content


def _as_format_1(data: bytes) -> bytes:
    """The same index in ``swarmlex/1``'s layout: the arrays, then names as JSON."""
    hlen = int.from_bytes(data[:8], "little")
    header = orjson.loads(data[8 : 8 + hlen])
    base = 8 + hlen
    got = {
        name: np.frombuffer(data, dtype=np.dtype(dt), count=n, offset=base + off)
        for name, (off, dt, n) in header["arrays"].items()
    }

    def strings(blob: str, offs: str) -> list[str]:
        raw, o = got[blob].tobytes(), got[offs].tolist()
        return [raw[o[i] : o[i + 1]].decode() for i in range(len(o) - 1)]

    names = orjson.dumps({"vocab": strings("vocab", "vocab_off"), "ids": strings("ids", "ids_off")})
    arrays = {k: got[k] for k in ("ptr", "slots", "tf", "len", "sig")}
    offsets, at = {}, 0
    for k, arr in arrays.items():
        offsets[k] = [at, arr.dtype.str, int(arr.shape[0])]
        at += arr.nbytes
    head = orjson.dumps({"magic": "swarmlex/1", "arrays": offsets, "names": [at, len(names)]})
    body = b"".join(a.tobytes() for a in arrays.values())
    return len(head).to_bytes(8, "little") + head + body + names


def test_ties_at_the_cut_break_by_fact_id_read_or_built() -> None:
    """Thirty documents alike, added out of id order: the best five are the five lowest
    ids, whether the index was built here, read from its file, or read and then added to."""
    ids = [f"t{(i * 7) % 30:02d}" for i in range(30)]
    lex = built({fid: "alpha beta" for fid in ids})
    want = {f"t{i:02d}" for i in range(5)}
    assert set(lex.scores("alpha", 5)) == want
    read = LexicalIndex.load(lex.dump())
    assert set(read.scores("alpha", 5)) == want
    read.put("t!", "alpha beta")  # an overlay document tied with the base's, lower id
    assert set(read.scores("alpha", 5)) == {"t!", *sorted(want)[:4]}
