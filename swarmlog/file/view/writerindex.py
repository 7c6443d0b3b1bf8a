"""The shared writer index: the log's end, id -> seq and key -> version in one mapped file.

Layout, protocol and why it is safe: docs/architecture.md, "The shared writer index
(FileLog)". In short: ``index`` beside the segments holds what a writer needs to append
(the end, the chain head, the last ts, the swarm clock's ceiling, an open-addressing id
table and key table over 64-bit hashes, and a heap of the exact strings); the writer
holding the append lock reads it instead of parsing the other writers' records, and
updates it in O(1) per record. It is derived data: ``gen`` (odd during an update), a
CRC of the header, the swarm's identity and the machine's boot id tell a torn, foreign
or stale file, which the caller rebuilds from the segments (``build``).

This module only reads and writes the file; ``index.IndexedAppend`` decides when to
trust, catch up or rebuild it.
"""

from __future__ import annotations

import errno
import math
import mmap
import os
import struct
import sys
import time
import zlib
from collections.abc import Callable
from hashlib import blake2b

from swarmlog.file.fsguard import FILE_MODE, open_nofollow
from swarmlog.file.view import mapguard
from swarmlog.file.view.columns import Table, str_hash

NAME = "index"
MAGIC = b"SWLIDX01"
PAGE = 4096
SLOT = 24  # hash u64, seq u64, heap offset u64
MIN_SLOTS = 1 << 13
MIN_HEAP = 1 << 18

_HEAD = struct.Struct("<8sQQ16s16s")  # magic, gen, retired, swarm, boot (0..56)
_END = struct.Struct("<QQQQd32sQQQQQQdQ")  # next .. cap_at (136 bytes)
_END_AT = (64, 256)  # two end records: gen // 2 % 2 names the committed one
_CRC_OFF = _END.size  # each record's CRC follows it
_GEN = struct.Struct("<Q")
_CRC = struct.Struct("<I")
_SLOTS = struct.Struct("<QQQ")
_LEN = struct.Struct("<I")
_Q = struct.Struct("<Q")
_HINT = struct.Struct("<dQ")  # at 208: a lagging writer's clock ceiling (alone.py)
_HINT_AT = 208
_GOLD = 0x9E3779B97F4A7C15
_M64 = (1 << 64) - 1


def _boot_id() -> bytes:
    """16 bytes naming this boot of the machine (the index is trusted within one only)."""
    try:
        with open("/proc/sys/kernel/random/boot_id", "rb") as f:
            return bytes.fromhex(f.read().strip().decode().replace("-", ""))[:16].ljust(16, b"\0")
    except (OSError, ValueError):  # elsewhere: the boot time, to the second
        booted = round(time.time() - time.monotonic())
        return blake2b(str(booted).encode(), digest_size=16).digest()


BOOT = _boot_id()
BOOTTIME = getattr(time, "CLOCK_BOOTTIME", time.CLOCK_MONOTONIC)


def boottime_ns() -> int:
    """Nanoseconds since boot, suspend included, moved by no wall-clock step (>= 1)."""
    return max(1, time.clock_gettime_ns(BOOTTIME))


def swarm_key(swarm_id: str) -> bytes:
    """The 16 bytes of the header's ``swarm`` field for a log's identity."""
    return blake2b(swarm_id.encode(), digest_size=16).digest()


def _h(s: str) -> int:
    return str_hash(s) or 1  # (0 marks an empty slot)


class WriterIndex:
    """One mapping of the ``index`` file (see module docstring)."""

    __slots__ = (
        "_guard",
        "_heap_at",
        "_ids_at",
        "_keys_at",
        "_seed",
        "cap_at",
        "cap_ts",
        "end",
        "fd",
        "heap_cap",
        "heap_used",
        "id_cap",
        "id_count",
        "key_cap",
        "key_count",
        "m",
        "miss",
        "path",
        "recovered",
        "seen",
        "seen_crc",
    )

    def __init__(self, path: str, m: mmap.mmap, fd: int) -> None:
        self.path = path
        self.m = m
        self.fd = fd
        self.end: tuple[int, int, int, int, float, bytes] = (1, 1, 0, 0, 0.0, b"")
        self.id_cap = self.key_cap = self.heap_cap = 0
        self.id_count = self.key_count = self.heap_used = 0
        self.cap_ts, self.cap_at = 0.0, 0
        self._ids_at = self._keys_at = self._heap_at = PAGE
        self.recovered = False
        self.seen = -1
        self.seen_crc = -1  # (the committed end's CRC word when ``seen`` was set)
        self.miss: tuple[str, int, bytes, int] | None = None
        self._guard = mapguard.guard(m, fd, mapguard.zero_magic)  # (cut: healed, rebuilt)
        self._seed = zlib.crc32(m[24:56]) if len(m) >= 56 else 0

    # ------------------------------------------------------------------ opening

    @classmethod
    def open(cls, root: str) -> WriterIndex:
        """Map ``<root>/index``, creating an empty (untrusted) one if there is none.

        (On a big-endian machine: OSError, so writers append without it: the slot copies
        of ``grown`` and ``_recount`` read the little-endian words as native ones.)
        """
        if sys.byteorder != "little":
            raise OSError(errno.ENOTSUP, "the writer index is little-endian only")
        path = os.path.join(root, NAME)
        fd = open_nofollow(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size < PAGE:
                os.posix_fallocate(fd, 0, PAGE)
                size = PAGE
            m = mmap.mmap(fd, size)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, m, fd)

    def close(self) -> None:
        mapguard.unguard(self._guard)
        try:
            self.m.close()
        except (BufferError, ValueError):
            pass
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def _whole(self) -> bool:
        """The file still spans the mapping (a mapped page past a cut file is SIGBUS)."""
        return os.lseek(self.fd, 0, os.SEEK_END) >= len(self.m)

    def retired(self) -> bool:
        """A grown or rebuilt file replaced this one: reopen ``index`` by name (also
        when the file was cut under the mapping: it is not touched again)."""
        return not self._whole() or _Q.unpack_from(self.m, 16)[0] != 0

    def unretire(self) -> None:
        """Clear ``retired`` on the file now named ``index`` (under the append lock): a
        writer that grew or rebuilt the index retires the old file just before renaming
        the new one over it, so finding the name's own file retired means that writer
        died in between, and the file is as sound as before (nothing else changed)."""
        if self._whole() and len(self.m) >= PAGE and _Q.unpack_from(self.m, 16)[0]:
            _Q.pack_into(self.m, 16, 0)

    def load(self, swarm: bytes) -> bool:
        """Read the header; True if this file can be trusted now (see the docs): magic,
        swarm, boot, not retired, the committed end's CRC, the tables inside the file.

        An odd ``gen`` (a writer died inside an update) is recovered here: the end is
        the last committed one (the other record was being written), the counts and the
        heap's end are taken from the slots themselves (the dead update may have stored
        some, all for records on disk already), and ``recovered`` is set so that the
        caller reads the records past that end and commits.

        The file proves whose it is at every load, whatever its ``gen`` says: another
        swarm's index written over this one's in place with an equal counter, or a torn
        copy, fails here (swarm, boot, CRC) and is rebuilt.
        """
        m = self.m
        magic, gen, retired, sw, boot = _HEAD.unpack_from(m, 0)
        if magic != MAGIC or retired or sw != swarm or boot != BOOT or gen < 2:
            return False
        at = _END_AT[((gen - (gen & 1)) >> 1) & 1]
        crc = _CRC.unpack_from(m, at + _CRC_OFF)[0]
        if crc != zlib.crc32(m[at : at + _CRC_OFF], self._seed):
            return False
        self._read_end(at)
        ids, keys, heap = self.id_cap, self.key_cap, self.heap_cap
        if ids & (ids - 1) or keys & (keys - 1) or not ids or not keys:
            return False
        if PAGE + SLOT * (ids + keys) + heap > len(m) or self.heap_used > heap:
            return False
        self.recovered = bool(gen & 1)
        if self.recovered:
            self._recount()
        else:
            self.seen, self.seen_crc = gen, crc
        return True

    def _recount(self) -> None:
        """Counts and heap end from the slots (after a writer died inside an update)."""
        used = self.heap_used
        counts = []
        for at, cap in ((self._ids_at, self.id_cap), (self._keys_at, self.key_cap)):
            with memoryview(self.m) as mv, mv[at : at + SLOT * cap].cast("Q") as words:
                hashes, soffs = words[0::3].tolist(), words[2::3].tolist()
            occ = [so for h, so in zip(hashes, soffs, strict=True) if h]
            counts.append(len(occ))
            if occ:
                so = max(occ)
                used = max(used, so + 4 + _LEN.unpack_from(self.m, self._heap_at + so)[0])
        self.id_count, self.key_count = counts
        self.heap_used = used

    def _read_end(self, at: int) -> None:
        (
            nxt,
            seg,
            off,
            ino,
            last_ts,
            tip,
            self.id_cap,
            self.id_count,
            self.key_cap,
            self.key_count,
            self.heap_cap,
            self.heap_used,
            self.cap_ts,
            self.cap_at,
        ) = _END.unpack_from(self.m, at)
        self.end = (nxt, seg, off, ino, last_ts, tip.rstrip(b"\0"))
        self._shape()

    def _shape(self) -> None:
        """Where the tables start, from the capacities (ids, then keys, then the heap)."""
        self._ids_at = PAGE
        self._keys_at = PAGE + SLOT * self.id_cap
        self._heap_at = self._keys_at + SLOT * self.key_cap

    def sized(self, id_cap: int, key_cap: int, heap_cap: int) -> None:
        """A new file's capacities (its header just written: the crc seed read from it)."""
        self._seed = zlib.crc32(self.m[24:56])
        self.id_cap, self.key_cap, self.heap_cap = id_cap, key_cap, heap_cap
        self._shape()

    @property
    def ids_at(self) -> int:
        """Where the id table starts in the file."""
        return self._ids_at

    @property
    def keys_at(self) -> int:
        """Where the key table starts in the file."""
        return self._keys_at

    def snapshot_at(self) -> int:
        """The last seq of the newest view snapshot a writer saved (a hint at byte 56)."""
        return int(_Q.unpack_from(self.m, 56)[0])

    def set_snapshot_at(self, seq: int) -> None:
        _Q.pack_into(self.m, 56, seq)

    def clock(self, swarm: bytes) -> tuple[float, int]:
        """The swarm clock's ceiling and when it was set (0: unknown), trusted or not, if
        this file is from this boot and this swarm (a rebuild keeps it): the committed
        one, or the clock hint of a writer alone (alone.py) where that one is newer.
        (Another swarm's index copied over this one's says nothing of this swarm's clock.)"""
        if not self._whole() or len(self.m) < PAGE:
            return 0.0, 0
        magic, _, _, sw, boot = _HEAD.unpack_from(self.m, 0)
        if magic != MAGIC or boot != BOOT or sw != swarm:
            return 0.0, 0
        gen = _Q.unpack_from(self.m, 8)[0]
        at = _END_AT[((gen - (gen & 1)) >> 1) & 1] + _END.size - 16
        cap_ts, cap_at = struct.unpack_from("<dQ", self.m, at)
        if not math.isfinite(cap_ts):
            cap_ts, cap_at = 0.0, 0
        hint_ts, hint_at = _HINT.unpack_from(self.m, _HINT_AT)
        if cap_at < hint_at <= boottime_ns() and math.isfinite(hint_ts):
            return hint_ts, hint_at
        return cap_ts, cap_at

    def set_clock_hint(self, cap: tuple[float, int]) -> None:
        """Publish a lagging writer's ceiling (under the append lock; a hint outside the
        CRC: a torn one is at worst an older or a later anchor, both sound bounds)."""
        if self._whole():
            _HINT.pack_into(self.m, _HINT_AT, *cap)

    def gen(self) -> int:
        """The update counter as the file holds it now."""
        return int(_Q.unpack_from(self.m, 8)[0])

    # ------------------------------------------------------------------ lookups

    def _find(self, at: int, cap: int, s: bytes, h: int) -> tuple[int, int]:
        """(slot offset, seq) of ``s`` in the table at ``at``; seq 0 with the offset of
        the empty slot where it would go if absent. Equal hashes compare the strings."""
        m, mask, heap = self.m, cap - 1, self._heap_at
        # Fibonacci hashing: the top bits of h times 2**64 / phi (the low bits of a
        # default id's hash hold the uuid's fixed version digit: they would cluster)
        i = ((h * _GOLD) & _M64) >> (65 - cap.bit_length())
        while True:
            off = at + SLOT * i
            hh, seq, soff = _SLOTS.unpack_from(m, off)
            if hh == 0:
                return off, 0
            if hh == h:
                p = heap + soff
                n = _LEN.unpack_from(m, p)[0]
                if m[p + 4 : p + 4 + n] == s:
                    return off, seq
            i = (i + 1) & mask

    def find_id(self, eid: str) -> int:
        """The seq of the stored event with id ``eid`` (0: none). A miss is remembered
        (the empty slot, the bytes, the hash) for ``add_id`` of the same id."""
        s, h = _enc(eid), _h(eid)
        off, seq = self._find(self._ids_at, self.id_cap, s, h)
        if not seq:
            self.miss = (eid, off, s, h)
        return seq

    def version(self, key: str) -> int:
        """The seq of the last event carrying ``key`` (0: none)."""
        return self._find(self._keys_at, self.key_cap, _enc(key), _h(key))[1]

    # ------------------------------------------------------------------ updates

    def fits(self, n_ids: int, n_keys: int, heap_bytes: int) -> bool:
        """Whether this many new entries keep both tables at most half full and fit the heap."""
        return (
            2 * (self.id_count + n_ids) <= self.id_cap
            and 2 * (self.key_count + n_keys) <= self.key_cap
            and self.heap_used + heap_bytes <= self.heap_cap
        )

    def fits_one(self, eid: str, key: str | None) -> bool:
        """``fits`` for one event (the single append's check, kept short)."""
        heap = 4 * len(eid) + 8 + (0 if key is None else 4 * len(key))
        return (
            2 * self.id_count + 2 <= self.id_cap
            and 2 * self.key_count + 2 <= self.key_cap
            and self.heap_used + heap <= self.heap_cap
        )

    def begin(self) -> int:
        """Make ``gen`` odd (an update in progress); returns the even value to end on."""
        gen = _GEN.unpack_from(self.m, 8)[0] | 1
        _GEN.pack_into(self.m, 8, gen)
        return gen + 1

    def _put(self, s: bytes) -> int:
        """Append ``s`` to the heap; its offset there."""
        at = self.heap_used
        p = self._heap_at + at
        n = len(s)
        _LEN.pack_into(self.m, p, n)
        self.m[p + 4 : p + 4 + n] = s
        self.heap_used = at + 4 + n
        return at

    def add_id(self, eid: str, seq: int) -> None:
        """Enter a new id (the caller found it absent under the same lock): at the first
        empty slot of its probe sequence: the one ``find_id`` just found for it if that
        is still empty (slots are only ever filled, so it is still the first)."""
        m = self.m
        miss, self.miss = self.miss, None
        if miss is not None and miss[0] is eid and not _Q.unpack_from(m, miss[1])[0]:
            _, off, s, h = miss
        else:
            s = eid.encode("utf-8", "surrogatepass")
            h = str_hash(eid) or 1
            cap, at = self.id_cap, self._ids_at
            mask = cap - 1
            i = ((h * _GOLD) & _M64) >> (65 - cap.bit_length())
            unpack = _Q.unpack_from
            while unpack(m, at + SLOT * i)[0]:
                i = (i + 1) & mask
            off = at + SLOT * i
        p = self._heap_at + self.heap_used
        n = len(s)
        _LEN.pack_into(m, p, n)
        m[p + 4 : p + 4 + n] = s
        _SLOTS.pack_into(m, off, 0, seq, self.heap_used)  # seq first: empty or whole
        _Q.pack_into(m, off, h)
        self.heap_used += 4 + n
        self.id_count += 1

    def set_key(self, key: str, seq: int) -> None:
        """``key``'s version is now ``seq``."""
        s, h = _enc(key), _h(key)
        off, had = self._find(self._keys_at, self.key_cap, s, h)
        if had:
            _Q.pack_into(self.m, off + 8, seq)
            return
        soff = self._put(s)
        _SLOTS.pack_into(self.m, off, 0, seq, soff)
        _Q.pack_into(self.m, off, h)
        self.key_count += 1

    def commit(
        self, gen: int, end: tuple[int, int, int, int, float, bytes], cap: tuple[float, int]
    ) -> None:
        """Store the new end and clock ceiling, then the even ``gen`` and the CRC."""
        nxt, seg, off, ino, last_ts, tip = end
        self.end = end
        self.cap_ts, self.cap_at = cap
        m = self.m
        at = _END_AT[(gen >> 1) & 1]  # (not the committed record: a kill leaves that one)
        _END.pack_into(
            m,
            at,
            nxt,
            seg,
            off,
            ino,
            last_ts,
            tip,
            self.id_cap,
            self.id_count,
            self.key_cap,
            self.key_count,
            self.heap_cap,
            self.heap_used,
            *cap,
        )
        crc = zlib.crc32(m[at : at + _CRC_OFF], self._seed)
        _CRC.pack_into(m, at + _CRC_OFF, crc)
        _GEN.pack_into(m, 8, gen)
        self.recovered = False
        self.seen, self.seen_crc = gen, crc

    def entries(self, at: int, cap: int) -> list[tuple[str, int]]:
        """Every (string, seq) of the table at ``at`` (for growing the file)."""
        m, heap, out = self.m, self._heap_at, []
        for i in range(cap):
            hh, seq, soff = _SLOTS.unpack_from(m, at + SLOT * i)
            if hh:
                p = heap + soff
                n = _LEN.unpack_from(m, p)[0]
                out.append((m[p + 4 : p + 4 + n].decode("utf-8", "surrogatepass"), seq))
        return out

    def grown(
        self, root: str, swarm: bytes, n_ids: int, n_keys: int, heap_bytes: int
    ) -> WriterIndex:
        """A new file holding this one's entries with room for this many more (this one
        retired); under the append lock (module function ``grown``)."""
        return grown(self, root, swarm, n_ids, n_keys, heap_bytes)


def _enc(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def _cap_for(n: int) -> int:
    """Slots for a table of ``n`` entries: a power of two, at least 3n. A table is grown
    when half full, so a grown one starts a quarter full and doubles each time (the
    growth is O(n) under the append lock, so geometric: O(1) per append); at least 3n,
    not 4n, because with powers of two 4n meant quadrupling, up to 16 slots an entry."""
    cap = MIN_SLOTS
    while cap < 3 * n:
        cap *= 2
    return cap


def table_entries(t: Table) -> list[tuple[str, int]]:
    """(string, seq) of every entry of an index table."""
    blob = bytes(t.blob)
    offs = t.offs.tolist()
    return [
        (blob[offs[i] : offs[i + 1]].decode("utf-8", "surrogatepass"), int(s))
        for i, s in enumerate(t.seqs.tolist())
    ]


def _heap_cap_for(used: int) -> int:
    """Heap bytes for ``used`` bytes of strings: twice that, in whole ``MIN_HEAP`` units
    (so it doubles each time it fills; powers of 4 left up to 8 bytes per byte used)."""
    return max(MIN_HEAP, -(-2 * used // MIN_HEAP) * MIN_HEAP)


def build(
    root: str,
    swarm: bytes,
    ids: list[tuple[str, int]],
    keys: list[tuple[str, int]],
    end: tuple[int, int, int, int, float, bytes],
    cap: tuple[float, int],
    old: WriterIndex | None = None,
) -> WriterIndex:
    """Write a new ``index`` holding these entries and this end (under the append lock),
    retire ``old`` and rename the new one over it; the new one, mapped."""
    strs = sum(len(_enc(s)) + 4 for s, _ in ids) + sum(len(_enc(s)) + 4 for s, _ in keys)
    new = _new_file(root, swarm, _cap_for(len(ids)), _cap_for(len(keys)), _heap_cap_for(strs))

    def fill() -> None:
        for s, seq in ids:
            new.add_id(s, seq)
        for s, seq in keys:
            new.set_key(s, seq)

    return _install(new, fill, end, cap, old)


def _new_file(root: str, swarm: bytes, id_cap: int, key_cap: int, heap_cap: int) -> WriterIndex:
    """An empty index file of this geometry at a temporary name, mapped."""
    size = PAGE + SLOT * (id_cap + key_cap) + heap_cap
    tmp = os.path.join(root, f".{NAME}.{os.getpid()}.tmp")
    fd = open_nofollow(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.posix_fallocate(fd, 0, size)  # (blocks now: a full disk fails here, not as SIGBUS)
        m = mmap.mmap(fd, size)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    new = WriterIndex(tmp, m, fd)
    _HEAD.pack_into(m, 0, MAGIC, 1, 0, swarm, BOOT)
    new.sized(id_cap, key_cap, heap_cap)
    return new


def _install(
    new: WriterIndex,
    fill: Callable[[], None],
    end: tuple[int, int, int, int, float, bytes],
    cap: tuple[float, int],
    old: WriterIndex | None,
) -> WriterIndex:
    """Fill ``new``, commit it, retire ``old`` and rename ``new`` over ``index``."""
    tmp = new.path
    new.path = os.path.join(os.path.dirname(tmp), NAME)
    try:
        fill()
        new.commit(2, end, cap)
        if old is not None and old.fd >= 0 and old._whole():
            _Q.pack_into(old.m, 16, 1)  # (first: a writer killed before the rename leaves
            # the old file retired at the name, which the next one un-retires)
        os.replace(tmp, new.path)
    except BaseException:
        new.close()
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if old is not None:
        old.close()
    return new


def grown(
    old: WriterIndex, root: str, swarm: bytes, n_ids: int, n_keys: int, heap: int
) -> WriterIndex:
    """A new file holding ``old``'s entries with room for this many more, ``old`` retired
    (under the append lock). The heap is copied as it is (slots keep their offsets) and
    only the slots are placed again: no string is decoded."""
    new = _new_file(
        root,
        swarm,
        _cap_for(old.id_count + n_ids),
        _cap_for(old.key_count + n_keys),
        _heap_cap_for(old.heap_used + heap),
    )

    def fill() -> None:
        m, used = new.m, old.heap_used
        m[new._heap_at : new._heap_at + used] = old.m[old._heap_at : old._heap_at + used]
        new.heap_used = used
        unpack, pack = _Q.unpack_from, _SLOTS.pack_into
        for src, n, dst, cap in (
            (old._ids_at, old.id_cap, new._ids_at, new.id_cap),
            (old._keys_at, old.key_cap, new._keys_at, new.key_cap),
        ):
            if cap > n and (n >= _VECTOR_SLOTS or (n >= PAGE and "numpy" in sys.modules)):
                place(old.m[src : src + SLOT * n], m, dst, cap)
                continue
            with memoryview(old.m) as mv, mv[src : src + SLOT * n].cast("Q") as words:
                flat = words.tolist()
            mask, shift = cap - 1, 65 - cap.bit_length()
            for j in range(0, 3 * n, 3):
                h = flat[j]
                if h:
                    i = ((h * _GOLD) & _M64) >> shift
                    while unpack(m, dst + SLOT * i)[0]:
                        i = (i + 1) & mask
                    pack(m, dst + SLOT * i, h, flat[j + 1], flat[j + 2])
        new.id_count, new.key_count = old.id_count, old.key_count

    return _install(new, fill, old.end, (old.cap_ts, old.cap_at), old)


_VECTOR_SLOTS = 1 << 18
"""Tables of at least this many slots are placed again with numpy when grown (smaller
ones too where numpy is loaded already): the Python loop took 56 ms at 65,536 ids, under
the append lock, and twice that at each growth after."""


def place(slots: bytes, m: mmap.mmap, dst: int, cap: int) -> None:
    """Place the occupied slots of ``slots`` (a table's bytes) by linear probing in the
    empty table of ``cap`` slots (more than there are entries) at ``dst`` of ``m``.

    Any placement in which each entry sits at its home slot or after it with no empty
    slot between is one ``_find`` reads correctly, whatever order the entries went in.
    Sorted by home slot, entry k's place is ``max(home_k, place_(k-1) + 1)`` (a running
    maximum, vectorized); the few pushed past the last slot wrap to the first empty
    slots from 0 (before which every slot is taken, as probing needs).
    """
    from swarmlog.numpyload import np

    words = np.frombuffer(slots, dtype="<u8").reshape(-1, 3)
    words = words[words[:, 0] != 0]
    shift = np.uint64(65 - cap.bit_length())
    with np.errstate(over="ignore"):  # (the product modulo 2**64, as ``(h * _GOLD) & _M64``)
        home = ((words[:, 0] * np.uint64(_GOLD)) >> shift).astype(np.int64)
    order = np.argsort(home, kind="stable")
    words, home = words[order], home[order]
    k = np.arange(len(home), dtype=np.int64)
    at = np.maximum.accumulate(home - k) + k
    out = np.frombuffer(m, dtype="<u8", count=3 * cap, offset=dst).reshape(cap, 3)
    try:
        inside = at < cap
        out[at[inside]] = words[inside]
        i = 0
        for w in words[~inside]:  # (wrapped: the first empty slots from 0)
            while out[i, 0]:
                i += 1
            out[i] = w
    finally:
        del out  # (no view left on the mapping: it can be closed)


def clean_tmp(root: str) -> None:
    """Remove temporaries of builds a killed writer left (under the append lock)."""
    try:
        names = os.listdir(root)
    except OSError:
        return
    for n in names:
        if n.startswith(f".{NAME}.") and n.endswith(".tmp"):
            try:
                os.unlink(os.path.join(root, n))
            except OSError:
                pass
