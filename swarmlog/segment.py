"""Segment files: naming, scanning records out of raw bytes, and seeking by seq.

A segment is a file ``<first seq, 20 digits>.jsonl`` holding complete record lines (see
``envelope``). Records of one ``append_many`` batch carry ``"more": n`` (records of the
batch still to come), so a reader can tell a whole batch from the front of a torn one.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from .envelope import CRC_SEP
from .errors import CorruptionError

SEGMENT_SUFFIX = ".jsonl"
CHUNK = 1 << 20
_SEQ_PREFIX = b'{"seq":'


def segment_name(first_seq: int) -> str:
    """File name of the segment whose first record has ``first_seq``."""
    return f"{first_seq:020d}{SEGMENT_SUFFIX}"


def list_segments(directory: Path) -> list[int]:
    """First seqs of the segments in ``directory``, ascending."""
    out = []
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        return []
    for n in names:
        if n.endswith(SEGMENT_SUFFIX) and len(n) == 20 + len(SEGMENT_SUFFIX) and n[:20].isdigit():
            out.append(int(n[:20]))
    out.sort()
    return out


def record_seq(line: bytes) -> int | None:
    """The seq at the head of a record line, read without parsing the rest (None if absent)."""
    if not line.startswith(_SEQ_PREFIX):
        return None
    end = line.find(b",", 7)
    digits = line[7:end]
    return int(digits) if digits.isdigit() else None


def parse_record(line: bytes) -> dict[str, Any] | None:
    """The record's dict (crc removed) if the line parses and its crc holds, else None."""
    i = line.rfind(CRC_SEP)
    if i < 0:
        return None
    try:
        d = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(d) is not dict or d.pop("crc", None) != zlib.crc32(memoryview(line)[:i]):
        return None
    return d


@dataclass
class Scan:
    """Complete batches found in a byte range, and where the valid prefix ends."""

    records: list[dict[str, Any]] = field(default_factory=list)
    end: int = 0
    """Offset just past the last complete batch (relative to the file)."""
    torn: str | None = None
    """Why bytes after ``end`` were not taken (an incomplete or bad tail), if there are any."""


def scan(
    data: bytes, base: int, expect_seq: int | None, segment: str, strict_tail: bool = False
) -> Scan:
    """Parse complete, CRC-valid batches from ``data`` (which starts at file offset ``base``).

    Stops at the first incomplete line or incomplete batch. A bad record *followed by a
    complete good one* is corruption and raises CorruptionError naming segment, offset, seq.
    ``expect_seq`` (if given) is the seq the first record must have; seqs must be gapless.
    """
    out = Scan(end=base)
    records = out.records
    pending: list[dict[str, Any]] = []
    pos = 0
    n = len(data)
    nxt = expect_seq
    while pos < n:
        nl = data.find(b"\n", pos)
        if nl < 0:
            out.torn = "incomplete final record"
            break
        line = data[pos:nl]
        d = parse_record(line)
        if d is None or (nxt is not None and d.get("seq") != nxt):
            reason = (
                "checksum mismatch or unparsable record"
                if d is None
                else (f"expected seq {nxt}, found {d.get('seq')}")
            )
            if _good_record_follows(data, nl + 1):
                raise CorruptionError(segment, base + pos, _seq_hint(line, nxt), reason)
            out.torn = reason
            break
        nxt = d["seq"] + 1
        more = d.pop("more", 0)
        pending.append(d)
        pos = nl + 1
        if not more:
            records.extend(pending)
            pending.clear()
            out.end = base + pos
    if pending and out.torn is None:
        out.torn = "incomplete batch"
    return out


def _seq_hint(line: bytes, nxt: int | None) -> int | None:
    s = record_seq(line)
    return s if s is not None else nxt


def _good_record_follows(data: bytes, pos: int) -> bool:
    while pos < len(data):
        nl = data.find(b"\n", pos)
        if nl < 0:
            return False
        if parse_record(data[pos:nl]) is not None:
            return True
        pos = nl + 1
    return False


def read_records(
    fd: int, start: int, stop: int, first_seq: int | None, segment: str
) -> Iterator[tuple[list[dict[str, Any]], Scan]]:
    """Scan [start, stop) of a segment in chunks; yield each chunk's complete batches.

    A chunk that holds no complete batch (a long record, a batch across the cut) is grown
    until one fits. Ends at the first torn spot; if good records follow it, raises
    CorruptionError. The last Scan yielded tells where the valid prefix ends.
    """
    pos = start
    nxt = first_seq
    size = CHUNK
    while pos < stop:
        buf = os.pread(fd, min(size, stop - pos), pos)
        if not buf:
            return
        sc = scan(buf, pos, nxt, segment)
        if sc.records:
            nxt = sc.records[-1]["seq"] + 1
            size = CHUNK
        yield sc.records, sc
        if sc.torn is None:
            pos = sc.end
            continue
        if pos + len(buf) >= stop:
            return  # torn at the very end: incomplete or being written
        if sc.torn in ("incomplete final record", "incomplete batch"):
            if sc.end == pos:
                size *= 2  # nothing fitted in the window: grow it
            else:
                pos = sc.end
            continue
        # a bad record with bytes after it: corruption if a good record follows
        scan(os.pread(fd, stop - sc.end, sc.end), sc.end, nxt, segment)
        return


def seek_seq(fd: int, size: int, first_seq: int, target: int, hints: dict[int, int]) -> int:
    """Byte offset of the record with seq ``target`` (or where it would start) by bisection.

    ``hints`` is a sparse seq->offset index (filled as we probe, kept by the caller) that
    narrows later searches; the segment's records are probed by reading only the few bytes
    after a newline, so a seek costs O(log size) small reads instead of a scan.
    """
    if target <= first_seq:
        return 0
    lo_seq, lo = first_seq, 0
    hi = size
    for s, off in hints.items():
        if s <= target and s > lo_seq:
            lo_seq, lo = s, off
        elif s > target and off < hi:
            hi = off
    if lo_seq == target:
        return lo
    while hi - lo > 65536:
        mid = (lo + hi) // 2
        buf = os.pread(fd, 4096, mid)
        nl = buf.find(b"\n")
        if nl < 0 or mid + nl + 1 >= hi:
            hi = mid
            continue
        b = mid + nl + 1
        probe = record_seq(buf[nl + 1 :] if len(buf) - nl > 30 else os.pread(fd, 64, b))
        if probe is None:
            break
        s = probe
        hints[s] = b
        if s <= target:
            lo, lo_seq = b, s
            if s == target:
                return b
        else:
            hi = b
    # short linear walk
    pos = lo
    while pos < size:
        buf = os.pread(fd, CHUNK, pos)
        if not buf:
            break
        start = 0
        while True:
            got = record_seq(buf[start : start + 40])
            if got is not None and got >= target:
                return pos + start
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            start = nl + 1
        if start == 0:
            break
        pos += start
    return size
