"""The indexed single append's critical section, fused: the speed tricks only.

With many writers no handle is alone (view/alone.py), so every append goes through the
shared writer index under the append flock: ``IndexedView._wview`` (trust the index,
adopt its end), ``WriterIndex.find_id``, the stamp and the record, then
``IndexedView._ix_record_one``. Those are a dozen method calls, tuples and re-hashings of
the id, all while every other writer waits; a holder descheduled inside the lock stalls
all of them, so each microsecond held costs the whole swarm. The functions here do the
same work for the common case (the index trusted and current, its end on the handle's
open segment, nothing written past it, not full, no crash-test hook) with the id's
bytes and hash computed before the lock and no intermediate objects, and say "not the
common case" (None / False) *before* changing anything, so the caller runs the plain
reference code instead. tests/test_file_fast.py checks that both leave the same log and
the same index bytes.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
import zlib

from swarmlog._fast import bounded_stamp as _bounded_stamp
from swarmlog.file.view import index, mapguard, snapshot
from swarmlog.file.view import writerindex as wi
from swarmlog.file.view.columns import str_hash
from swarmlog.file.view.index import IndexedView

_Q = struct.Struct("<Q")
_unpack_q = _Q.unpack_from  # (bound methods: no attribute lookup per call)
_pack_q = _Q.pack_into
_unpack_qq = struct.Struct("<QQ").unpack_from  # (gen and retired, one call)
_SLOTS = struct.Struct("<QQQ")
_unpack_slot = _SLOTS.unpack_from
_pack_slot = _SLOTS.pack_into
_LEN = struct.Struct("<I")
_unpack_len = _LEN.unpack_from
_END = wi._END
_pack_end = _END.pack_into
_CRC = wi._CRC
_unpack_crc = _CRC.unpack_from
_END_AT = wi._END_AT
_CRC_OFF = wi._CRC_OFF
_MAGIC = wi.MAGIC
_BOOT = wi.BOOT
_GOLD = wi._GOLD
_M64 = wi._M64
_SLOT = wi.SLOT
_lseek = os.lseek
_boot_ns = time.clock_gettime_ns
_BOOTTIME = wi.BOOTTIME
_SEEK_END = os.SEEK_END
_crc32 = zlib.crc32
_cut = mapguard.CUT


def id_key(eid: str) -> tuple[bytes, int, bytes]:
    """The id's UTF-8 bytes, index hash (``WriterIndex.find_id``'s) and heap entry
    (u32 length, the bytes), computed before the lock."""
    s = eid.encode("utf-8", "surrogatepass")
    return s, str_hash(eid) or 1, _LEN.pack(len(s)) + s


def stamp(log: IndexedView, ix: wi.WriterIndex) -> tuple[float, tuple[float, int]]:
    """``IndexedView._ix_stamp`` in one frame (``boottime_ns`` inlined)."""
    return _bounded_stamp(
        log._clock(), log._end.last_ts, ix.cap_ts, ix.cap_at, _boot_ns(_BOOTTIME) or 1
    )


def view(log: IndexedView) -> wi.WriterIndex | None:
    """``IndexedView._wview`` in its common case, else None having changed nothing
    (the caller then runs ``_wview``). Under the append lock."""
    ix = log._wix
    if ix is None or not log._ix_ready or index._crash[1]:
        return None
    m = ix.m
    if _lseek(ix.fd, 0, _SEEK_END) < len(m):
        return None  # (cut under the mapping: ``_ix_mapped`` reopens it)
    gen, retired = _unpack_qq(m, 8)
    if retired:
        return None
    if gen == ix.seen and (
        _unpack_crc(m, _END_AT[(gen >> 1) & 1] + _CRC_OFF)[0] != ix.seen_crc
        or m[24:56] != log._swarm16 + _BOOT
    ):
        return None  # (other bytes under the same ``gen``: written over in place; load's)
    if (
        gen != ix.seen
        and not _reload(ix, m, gen, log._swarm16)
        and (gen & 1 or not ix.load(log._swarm16) or ix.recovered)
    ):
        return None  # (load sets ``seen`` to an even, trusted gen: as in _wview)
    nxt, seg_first, off, ino, last_ts, tip = ix.end
    end = log._end
    fd = end.seg_fd
    if seg_first != end.seg_first or fd < 0 or ino != end.seg_ino:
        return None  # (another segment)
    last = nxt - 1
    if off >= log.segment_bytes or _lseek(fd, 0, _SEEK_END) != off:
        return None  # (full, or written past the index's end, or cut under it)
    if last != end.last:
        at = max(log._view_at, ix.snapshot_at())
        if last - at >= snapshot.SAVE_AFTER and snapshot.due(last, at):
            return None  # (time for a view snapshot: _wview's)
        end.adopt(last, off, last_ts, tip)
        log._partial = True  # private: IndexedView._wview's own step, fused in one frame
    elif off != end.seg_end:
        return None  # (this handle rewrote the segment: an erasure, or adopted at its end)
    return ix


def _reload(ix: wi.WriterIndex, m: mmap.mmap, gen: int, swarm: bytes) -> bool:
    """``WriterIndex.load`` of a file this handle trusted before (``seen`` set) whose
    ``gen`` moved to an even value: the header and the committed end record checked
    as there, the end and counts taken; False (nothing set) if anything differs from
    the common case (the tables grown in place are not: a grown index is a new file)."""
    if gen & 1 or ix.seen < 2 or m[0:8] != _MAGIC or m[24:56] != swarm + _BOOT:
        return False
    at = _END_AT[(gen >> 1) & 1]
    body = m[at : at + _CRC_OFF]
    crc = _CRC.unpack_from(m, at + _CRC_OFF)[0]
    if crc != _crc32(body, ix._seed):
        return False
    nxt, seg, off, ino, last_ts, tip, idc, idn, kc, kn, hc, used, cap_ts, cap_at = _END.unpack(body)
    if idc != ix.id_cap or kc != ix.key_cap or hc != ix.heap_cap or used > hc:
        return False
    ix.end = (nxt, seg, off, ino, last_ts, tip.rstrip(b"\0"))
    ix.id_count, ix.key_count, ix.heap_used = idn, kn, used
    ix.cap_ts, ix.cap_at = cap_ts, cap_at
    ix.recovered = False
    ix.seen, ix.seen_crc = gen, crc
    return True


def write_one(log: IndexedView, line: bytes, seq: int) -> None:
    """``SegmentWriter._write_one`` (the record at the open segment's known end) in one
    frame: a short or failed write goes to ``_write_all``'s own handling."""
    if _cut[0]:
        mapguard.check_cut()
    end = log._end
    try:
        written = os.write(end.seg_fd, line)
    except OSError as e:
        log._undo_write(e)  # (nothing of it stays: as ``_write_all``)
    if written != len(line):  # (a short write: the rest, or an undo, as the reference)
        log._write_all(line[written:], seq)
    end.seg_end += written  # (WriterEnd.advance, inlined: the lock's hottest line)
    end.last = seq
    if log.durability == "fsync":
        log._sync.note_written(seq, end.seg_first)
    if seq % 65536:
        end.offs.append(end.seg_end)
    else:
        end.offs_new()


def find(ix: wi.WriterIndex, s: bytes, h: int, entry: bytes = b"") -> tuple[int, int]:
    """(seq, slot offset) of the id with bytes ``s`` and hash ``h``: seq 0 and the
    empty slot it would go to if it is absent (``WriterIndex._find``; ``entry`` unused:
    ``id_key``'s third part)."""
    m, cap, at, heap = ix.m, ix.id_cap, ix._ids_at, ix._heap_at
    mask = cap - 1
    i = ((h * _GOLD) & _M64) >> (65 - cap.bit_length())
    while True:
        off = at + _SLOT * i
        hh, seq, soff = _unpack_slot(m, off)
        if hh == 0:
            return 0, off
        if hh == h:
            p = heap + soff
            n = _unpack_len(m, p)[0]
            if m[p + 4 : p + 4 + n] == s:
                return seq, off
        i = (i + 1) & mask


def record_one(
    log: IndexedView,
    ix: wi.WriterIndex,
    seq: int,
    s: bytes,
    h: int,
    entry: bytes,
    slot: int,
    key: str | None,
    cap: tuple[float, int],
) -> bool:
    """``IndexedView._ix_record_one`` of a record whose id ``find`` placed at ``slot``
    (under the same lock), by a handle whose dicts are partial; False (nothing done)
    otherwise, for the reference code."""
    if not log._partial or index._crash[1]:
        return False
    m = ix.m
    gen = _unpack_q(m, 8)[0] | 1
    _pack_q(m, 8, gen)  # (odd: an update in progress)
    used = ix.heap_used
    p = ix._heap_at + used
    n = len(entry)
    m[p : p + n] = entry  # (length and bytes: one store)
    _pack_slot(m, slot, 0, seq, used)  # seq first: the slot is empty or whole
    _pack_q(m, slot, h)
    ix.heap_used = used + n
    ix.id_count += 1
    if key is not None:
        ix.set_key(key, seq)
    used = ix.heap_used
    own = log._end
    end = ix.end
    if own.seg_first != end[1] or not end[3]:  # (a new segment file)
        own.note_ino()
    gen += 1
    end = (seq + 1, own.seg_first, own.seg_end, own.seg_ino, own.last_ts, own.tip)
    ix.end = end
    ix.cap_ts, ix.cap_at = cap
    at = _END_AT[(gen >> 1) & 1]  # (not the committed record: a kill leaves that one)
    _pack_end(
        m,
        at,
        *end,
        ix.id_cap,
        ix.id_count,
        ix.key_cap,
        ix.key_count,
        ix.heap_cap,
        used,
        *cap,
    )
    crc = _crc32(m[at : at + _CRC_OFF], ix._seed)
    _CRC.pack_into(m, at + _CRC_OFF, crc)
    _pack_q(m, 8, gen)
    ix.recovered = False
    ix.seen, ix.seen_crc = gen, crc
    return True


def record_many(
    log: IndexedView,
    ix: wi.WriterIndex,
    first: int,
    entries: list[tuple[bytes, int, int]],
    keys: list[str | None],
    cap: tuple[float, int],
) -> bool:
    """``IndexedView._ix_record(ix, first, ids, keys, cap, alone=False)`` of a batch just
    written (a combined one), from each id's bytes, hash and the slot ``find`` gave it
    (``entries``), by a handle whose dicts are partial: no id decoded, hashed or looked up
    again. False (nothing done) otherwise, for the reference code. The ids go in first,
    then the keys, as there: the same slots and heap, byte for byte."""
    if not log._partial or index._crash[1]:
        return False
    m = ix.m
    gen = _unpack_q(m, 8)[0] | 1
    _pack_q(m, 8, gen)  # (odd: an update in progress)
    at, heap = ix._ids_at, ix._heap_at
    mask = ix.id_cap - 1
    shift = 65 - ix.id_cap.bit_length()
    used = ix.heap_used
    for seq, (s, h, slot) in enumerate(entries, first):
        if _unpack_q(m, slot)[0]:  # (taken by an earlier id of this batch: probe on)
            i = ((h * _GOLD) & _M64) >> shift
            while _unpack_q(m, at + _SLOT * i)[0]:
                i = (i + 1) & mask
            slot = at + _SLOT * i
        p = heap + used
        n = len(s)
        m[p : p + 4 + n] = _LEN.pack(n) + s
        _pack_slot(m, slot, 0, seq, used)  # seq first: the slot is empty or whole
        _pack_q(m, slot, h)
        used += 4 + n
    ix.heap_used = used
    ix.id_count += len(entries)
    for seq, key in enumerate(keys, first):
        if key is not None:
            ix.set_key(key, seq)
    own = log._end
    end = ix.end
    ino = own.note_ino() if own.seg_first != end[1] or not end[3] else own.seg_ino
    ix.commit(gen + 1, own.for_index(ino), cap)  # (note_ino: a new segment file)
    return True
