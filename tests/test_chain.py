"""The hash chain (trust work, tamper evidence): a record edited with a recomputed CRC, a
record removed with the later seqs renumbered, both named by seq in ``verify``; the chain
holds across rotation and across writer processes; ``verify --anchor`` prints the head."""

from __future__ import annotations

import multiprocessing as mp
import os
import zlib
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, open_log
from swarmlog import chain as hashchain
from swarmlog.envelope import CRC_SEP
from tests.cli_util import run_cli
from tests.logworkers import single_writer


def _fill(root: Path, n: int = 30, segment_bytes: int = 4096) -> None:
    log = open_log(root, segment_bytes=segment_bytes)
    try:
        for i in range(n // 3):
            log.append(Event(agent="a", type="test.event", body={"i": i, "pad": "x" * 80}))
            log.append_many(
                [Event(agent="b", type="test.event", body={"i": i, "j": j}) for j in range(2)]
            )
    finally:
        log.close()


def _lines(root: Path) -> list[tuple[Path, list[bytes]]]:
    segs = sorted((root / "segments").iterdir())
    return [(p, p.read_bytes().split(b"\n")[:-1]) for p in segs]


def _recrc(head: bytes) -> bytes:
    """A line from its bytes before ``,"crc":`` with a freshly computed CRC."""
    return head + b',"crc":%d}' % zlib.crc32(head)


def _write(segs: list[tuple[Path, list[bytes]]]) -> None:
    for p, lines in segs:
        p.write_bytes(b"".join(line + b"\n" for line in lines))


def test_every_record_is_chained_and_verify_is_clean(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    segs = _lines(root)
    assert len(segs) > 1  # rotated: the chain runs across segments
    lines = [line for _, ls in segs for line in ls]
    pairs = [(i + 1, line) for i, line in enumerate(lines)]
    head, broken = hashchain.check(pairs)
    assert broken is None
    rep = open_log(root).verify()
    assert rep.ok and rep.head == head.decode() and rep.head_seq == len(lines) == 30
    # a reader never sees the chain member
    log = open_log(root)
    assert all("chain" not in e.envelope for e in log.read())
    log.close()


def test_an_edit_with_a_recomputed_crc_is_named(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root)
    segs = _lines(root)
    _, lines = segs[1]
    k = 2
    line = lines[k]
    seq = orjson.loads(line)["seq"]
    edited = line.replace(b'"agent":"', b'"agent":"z', 1)
    lines[k] = _recrc(edited[: edited.rindex(CRC_SEP)])
    _write(segs)
    log = open_log(root)
    try:
        assert next(e.agent for e in log.read(seq, seq)).startswith("z")  # the CRC passes
        rep = log.verify()
    finally:
        log.close()
    assert not rep.ok
    assert any(pr.startswith(f"seq {seq}: hash chain broken") for pr in rep.problems)
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1 and f"seq {seq}: hash chain broken" in r.out


def test_a_removed_record_is_detected_even_when_seqs_are_renumbered(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root, segment_bytes=1 << 20)
    ((p, lines),) = _lines(root)
    gone = 10  # a single-record batch (seq 10 = 1 + 3*3)
    assert b'"more"' not in lines[gone - 1]
    del lines[gone - 1]
    fixed = []
    for line in lines:  # renumber and re-CRC: only the chain can tell
        d = orjson.loads(line)
        if d["seq"] > gone:
            old = b'{"seq":%d,' % d["seq"]
            line = b'{"seq":%d,' % (d["seq"] - 1) + line[len(old) :]
            line = _recrc(line[: line.rindex(CRC_SEP)])
        fixed.append(line)
    _write([(p, fixed)])
    log = open_log(root)
    try:
        assert sum(1 for _ in log.read()) == 29  # the log reads as if nothing happened
        rep = log.verify()
    finally:
        log.close()
    assert not rep.ok and any(pr.startswith(f"seq {gone}: hash chain") for pr in rep.problems)


def test_writers_in_other_processes_extend_one_chain(tmp_path: Path) -> None:
    root = tmp_path / "s"
    open_log(root, segment_bytes=4096).close()
    ctx = mp.get_context("spawn")
    with ctx.Pool(3) as pool:
        res = [pool.apply_async(single_writer, (str(root), w, 60)) for w in range(3)]
        seqs = sorted(s for r in res for s in r.get(timeout=120))
    assert seqs == list(range(1, 181))
    rep = open_log(root).verify()
    assert rep.ok and rep.head_seq == 180, rep.problems


def test_verify_anchor_prints_the_head(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root, n=9)
    rep = open_log(root).verify()
    r = run_cli("--root", str(root), "verify", "--anchor")
    assert r.code == 0 and f"anchor: seq 9 {rep.head}" in r.out
    # later appends extend the chain from the anchored head: the prefix is unchanged
    log = open_log(root)
    log.append(Event(agent="c", type="test.event"))
    log.close()
    ((_, lines),) = _lines(root)
    head, broken = hashchain.check([(i + 1, ln) for i, ln in enumerate(lines[:9])])
    assert broken is None and head.decode() == rep.head


def test_records_before_the_chain_are_a_noted_prefix(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root, n=6, segment_bytes=1 << 20)
    ((p, lines),) = _lines(root)
    old = []
    for line in lines[:3]:  # as written before the chain existed
        i = line.rindex(b',"chain":"')
        old.append(_recrc(line[:i]))
    _write([(p, old)])
    log = open_log(root)
    log.append(Event(agent="c", type="test.event"))
    rep = log.verify()
    log.close()
    assert rep.ok and rep.head_seq == 4
    assert any("3 record(s) at the start predate the hash chain" in n for n in rep.notes)
    # an unchained record after a chained one is a break
    log = open_log(root)
    log.append(Event(agent="d", type="test.event"))
    log.close()
    ((p, lines),) = _lines(root)
    i = lines[4].rindex(b',"chain":"')
    _write([(p, [*lines[:4], _recrc(lines[4][:i])])])
    rep = open_log(root).verify()
    assert not rep.ok and any(pr.startswith("seq 5: hash chain") for pr in rep.problems)


@pytest.mark.parametrize("n", [0, 1])
def test_empty_and_single(tmp_path: Path, n: int) -> None:
    root = tmp_path / "s"
    log = open_log(root)
    for _ in range(n):
        log.append(Event(agent="a", type="test.event"))
    rep = log.verify()
    log.close()
    assert rep.ok and rep.head_seq == n and (rep.head != "") == bool(n)
    assert os.path.isdir(root / "segments")
