"""Segment files: naming, scanning records out of raw bytes, and seeking by seq.

A segment is a file ``<first seq, 20 digits>.jsonl`` holding complete record lines (see
``envelope``). Records of one ``append_many`` batch carry ``"more": n`` (records of the
batch still to come), so a reader can tell a whole batch from the front of a torn one.
A writer rotates to a new segment only once the current one has reached the log's
segment size, so a segment below that size is always the last one.

Torn versus rot: one ``write()`` that stopped early leaves a *prefix* of its bytes, so
every line it left terminated (``\n``) is whole and CRC-valid, and only the bytes after
the last newline (an unterminated final record) or the missing end of a batch (its
``more`` countdown not reaching 0) can be incomplete. That is a torn tail, and may be
cut. A terminated line that fails its CRC, does not parse or breaks the seq/``more``
order was written whole and changed later: corruption, fail-stop, wherever it is. A
zero-filled unterminated tail (a file system extended the file past the last synced
byte before a power loss) is torn too, and reported as such.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from swarmlog._fast import parse_chunk
from swarmlog.codec import CRC_SEP
from swarmlog.errors import CorruptionError

SEGMENT_SUFFIX = ".jsonl"
CHUNK = 1 << 18
"""Bytes read and parsed at a time: a quarter MiB keeps a chunk's lines, parse and CRCs
in the CPU caches (1 MiB chunks read the same log markedly slower)."""
_SEQ_PREFIX = b'{"seq":'
TORN_RECORD = "incomplete final record"
TORN_ZEROS = "zero-filled tail (bytes never written before a power loss)"


def tail_reason(tail: bytes) -> str:
    """Why the unterminated bytes after the last newline are torn (see module docstring)."""
    return TORN_ZEROS if not tail.strip(b"\0") else TORN_RECORD


def rotted_tail(tail: bytes) -> dict[str, Any] | None:
    """The record of an unterminated tail that is complete and CRC-valid but for its
    final byte, which should have been the newline (and is neither it nor a power
    loss's zero fill): rot, not a torn write, since a write that stops early leaves a
    prefix of ``record\n`` and no prefix ends in another byte. None otherwise.
    """
    if len(tail) < 2 or tail[-1] in (0x0A, 0x00) or tail[-2] != 0x7D:  # (ends "}" + byte)
        return None
    return parse_record(tail[:-1])


def segment_name(first_seq: int) -> str:
    """File name of the segment whose first record has ``first_seq``."""
    return f"{first_seq:020d}{SEGMENT_SUFFIX}"


def list_segments(directory: str | os.PathLike[str]) -> list[int]:
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
    """The seq at the head of a record line, read without parsing the rest (None if absent).

    ``line`` may be just the first bytes of a record; a head cut before the comma that
    ends the seq gives None rather than a wrong, shortened number.
    """
    if not line.startswith(_SEQ_PREFIX):
        return None
    end = line.find(b",", 7)
    if end < 0:
        return None
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
    """Why bytes after ``end`` were not taken (an incomplete tail), if there are any."""
    pending: list[dict[str, Any]] = field(default_factory=list)
    """Records of a batch still incomplete at the end of ``data`` (carried to the next chunk)."""
    left: int = 0
    """How many records that batch still owes after ``pending``."""
    line_end: int = 0
    """Offset just past the last complete, valid line (>= ``end``)."""
    chain: str | None = None
    """The ``chain`` value of the last record in ``records`` (None: none or unchained)."""


def scan(
    data: bytes,
    base: int,
    expect_seq: int | None,
    segment: str,
    pending: list[dict[str, Any]] | None = None,
    left_in: int = 0,
) -> Scan:
    """Parse complete, CRC-valid batches from ``data`` (which starts at file offset ``base``).

    Stops at the first incomplete line or incomplete batch. A bad *terminated* record is
    corruption wherever it is and raises CorruptionError naming segment, offset and seq
    (only the unterminated bytes after the last newline can be a torn write).
    ``expect_seq`` (if given) is the seq the first record must have; seqs must be
    gapless, ``more`` must count down. ``pending``/``left_in`` continue a batch begun in
    the previous chunk.

    The common case (every complete line a good record) takes a fast path: the whole
    chunk is parsed by one ``orjson.loads`` of its lines joined into a JSON array, and
    each line's CRC-32 is checked against the ``crc`` parsed from it (the bytes up to its
    ``,"crc":`` separator). Anything unusual (a line that does not parse on its own, a
    CRC or seq mismatch, a broken ``more`` count) falls back to the line-by-line scan,
    which finds and reports the bad spot exactly as before.
    """
    lines = data.split(b"\n")
    tail = lines.pop()  # bytes after the last newline: b"" or an incomplete record
    if lines:
        fast = _scan_fast(data, lines, tail, base, expect_seq, pending, left_in)
        if fast is not None:
            return fast
    return _scan_lines(data, lines, tail, base, expect_seq, segment, pending, left_in)


def _scan_fast(
    data: bytes,
    lines: list[bytes],
    tail: bytes,
    base: int,
    expect_seq: int | None,
    pending: list[dict[str, Any]] | None,
    left_in: int,
) -> Scan | None:
    """``scan`` when every complete line is a good record (``_fast.parse_chunk``); None
    to fall back to the line-by-line scan otherwise."""
    if pending and not left_in:
        return None  # (never written so) left to the line-by-line scan
    if tail and rotted_tail(tail) is not None:
        return None  # the line-by-line scan names it
    chunk = parse_chunk(lines, expect_seq, left_in if pending else 0)
    if chunk is None:
        return None
    ds, done, n = chunk.records, chunk.done, len(lines)
    line_end = len(data) - len(tail)
    out = Scan(end=base, line_end=base + line_end)
    if pending and not done:  # the batch begun before is still unfinished: carry it on
        pending.extend(ds)  # in place (the caller hands it over): no copy per chunk
        out.pending = pending
        out.left = chunk.left
        out.torn = "incomplete batch"
        return out
    if pending:
        out.records = [*pending, *ds[:done]]
    else:
        out.records = ds if done == n else ds[:done]
    out.chain = chunk.last_chain
    if chunk.batch_start >= 0:
        out.pending = ds[chunk.batch_start :]
        out.left = chunk.left
        out.torn = "incomplete batch"
    if out.torn is None and tail:
        out.torn = tail_reason(tail)
    if done == n:
        out.end = base + line_end
    elif done:
        out.end = base + sum(len(line) + 1 for line in lines[:done])
    return out


def _scan_lines(
    data: bytes,
    lines: list[bytes],
    tail: bytes,
    base: int,
    expect_seq: int | None,
    segment: str,
    pending: list[dict[str, Any]] | None,
    left_in: int,
) -> Scan:
    """``scan`` line by line: one ``orjson.loads`` and one CRC-32 per line."""
    out = Scan(end=base)
    records = out.records
    mv = memoryview(data)
    pos = 0
    end = 0
    nxt = expect_seq
    batch_start = -1  # index in records where an unfinished batch starts
    left = 0  # records the unfinished batch still owes
    if pending:
        records.extend(pending)
        batch_start = 0
        left = left_in
    for line in lines:
        ln = len(line)
        i = line.rfind(CRC_SEP)
        try:
            d = orjson.loads(line)
            ok = i > 0 and d.pop("crc") == zlib.crc32(mv[pos : pos + i])
            s = d["seq"]
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
            ok = False
            s = None
        if ok and nxt is not None and s != nxt:
            ok = False
        if ok:
            more = d.pop("more", 0) if "more" in d else 0
            link = d.pop("chain", None) if "chain" in d else None
            if batch_start >= 0 and more != left - 1:
                ok = False
        if not ok:
            reason = (
                f"expected seq {nxt}, found {s}"
                if s is not None and nxt is not None and s != nxt
                else "checksum mismatch or unparsable record"
            )
            # a terminated line is never the prefix of a write: rot, not a torn tail
            hint = nxt if nxt is not None else record_seq(line)
            raise CorruptionError(segment, base + pos, hint, reason)
        records.append(d)
        nxt = s + 1
        pos += ln + 1
        if more:
            if batch_start < 0:
                batch_start = len(records) - 1
            left = more
        else:
            batch_start = -1
            end = pos
            out.chain = link
    out.line_end = base + pos
    bad = rotted_tail(tail) if tail else None
    if bad is not None:  # a complete record whose newline rotted: not torn (rotted_tail)
        reason = "complete, CRC-valid final record not ended by a newline (rot)"
        raise CorruptionError(segment, base + pos, bad.get("seq"), reason)
    if batch_start >= 0:
        out.pending = records[batch_start:]
        out.left = left
        del records[batch_start:]
        out.torn = "incomplete batch"
    elif tail:
        out.torn = tail_reason(tail)
    out.end = base + end
    return out


def read_records(
    fd: int | bytes, start: int, stop: int, first_seq: int | None, segment: str
) -> Iterator[tuple[list[dict[str, Any]], Scan]]:
    """Scan [start, stop) of a segment in chunks; yield each chunk's complete batches.

    ``fd`` is an open segment or the segment's bytes (an archive's, in memory). A chunk
    that holds no complete batch (a long record, a batch across the cut) is grown until
    one fits. Ends at the torn tail, if any, and where the data ends before ``stop`` (a
    short file is never re-read forever); raises CorruptionError at a bad terminated
    record. The last Scan yielded tells where the valid prefix ends.
    """
    pos = start
    nxt = first_seq
    size = CHUNK
    pending: list[dict[str, Any]] = []
    left = 0
    done = start  # just past the last complete batch seen so far
    while pos < stop:
        want = min(size, stop - pos)
        buf = os.pread(fd, want, pos) if isinstance(fd, int) else fd[pos : pos + want]
        if not buf:
            return
        if len(buf) < want:
            stop = pos + len(buf)  # the data ends before stop: what is there is all
        sc = scan(buf, pos, nxt, segment, pending, left)
        if sc.records:
            nxt = sc.records[-1]["seq"] + 1
            done = sc.end
        else:
            # a chunk read on from inside an unfinished batch: its own start is mid-batch,
            # so the valid prefix still ends where the last complete batch ended
            sc.end = done
        yield sc.records, sc
        if sc.torn is None:
            pos = sc.end
            pending, left, size = [], 0, CHUNK
            continue
        if pos + len(buf) >= stop:
            return  # torn at the very end: incomplete, or being written right now
        # (scan raised on any bad terminated line: what is left is incomplete)
        if sc.line_end == pos:
            size *= 2  # not one complete line fitted in the window: grow it
            continue
        # carry the unfinished batch's parsed records on; read on from the next line
        pending, left = sc.pending, sc.left
        if pending:
            nxt = pending[-1]["seq"] + 1
        pos, size = sc.line_end, CHUNK


def tail_seq(fd: int) -> int | None:
    """Seq of the last complete batch of a segment, reading only its tail."""
    size = os.fstat(fd).st_size
    window = 65536
    while True:
        start = max(0, size - window)
        buf = os.pread(fd, size - start, start)
        lines = buf.split(b"\n")
        lines.pop()  # after the last newline: empty or incomplete
        if start > 0:
            lines = lines[1:]
        for line in reversed(lines):
            d = parse_record(line)
            if d is not None and not d.get("more"):
                return int(d["seq"])
        if start == 0:
            return None
        window *= 4


def _find_line_start(fd: int, pos: int, limit: int) -> int:
    """Offset just past the first newline at or after ``pos`` (``limit`` if none before it)."""
    while pos < limit:
        buf = os.pread(fd, min(65536, limit - pos), pos)
        if not buf:
            return limit
        nl = buf.find(b"\n")
        if nl >= 0:
            return pos + nl + 1
        pos += len(buf)
    return limit


def _valid_hint(fd: int, off: int, s: int) -> bool:
    head = os.pread(fd, 48, off - 1) if off > 0 else b"\n" + os.pread(fd, 47, 0)
    return head[:1] == b"\n" and record_seq(head[1:]) == s


def seek_seq(fd: int, size: int, first_seq: int, target: int, hints: dict[int, int]) -> int:
    """Byte offset of the record with seq ``target`` (or where it would start) by bisection.

    ``hints`` is a sparse seq->offset index (filled as we probe, kept by the caller) that
    narrows later searches; records are probed by reading only a few bytes after a
    newline, so a seek costs O(log size) small reads instead of a scan. A hint is checked
    before it is trusted (a torn tail it pointed into may have been cut and rewritten).
    """
    if target <= first_seq:
        return 0
    lo_seq, lo = first_seq, 0
    hi = size
    # a snapshot (one C call, atomic under the GIL): another thread of the same handle
    # may add or clear hints while this one walks them
    for s, off in list(hints.items()):
        if s <= target and s > lo_seq and off < size:
            lo_seq, lo = s, off
        elif s > target and off < hi:
            hi = off
    if lo and not _valid_hint(fd, lo, lo_seq):
        hints.clear()
        return seek_seq(fd, size, first_seq, target, hints)
    if lo_seq == target:
        return lo
    while hi - lo > 65536:
        mid = (lo + hi) // 2
        b = _find_line_start(fd, mid, hi)
        if b >= hi:
            hi = mid
            continue
        probe = record_seq(os.pread(fd, 48, b))
        if probe is None:
            break
        hints[probe] = b
        if probe <= target:
            lo, lo_seq = b, probe
            if probe == target:
                return b
        else:
            hi = b
    # short linear walk from lo
    pos = lo
    while pos < size:
        buf = os.pread(fd, min(CHUNK, size - pos), pos)
        if not buf:
            break
        start = 0
        while True:
            got = record_seq(buf[start : start + 48])
            if got is not None and got >= target:
                return pos + start
            nl = buf.find(b"\n", start)
            if nl < 0:
                break
            start = nl + 1
        if start == 0:  # one record longer than the window: skip to its end
            pos = _find_line_start(fd, pos + len(buf), size)
        else:
            pos += start
    return size
