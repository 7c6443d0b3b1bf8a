"""Flat combining on the indexed append path : fewer lock hand-offs among many writers.

With many writers each append takes the append flock once, holds it ~10 us with cold
caches and hands it on (flock wakes every waiter). Here a writer that is not alone
(view/alone.py) and appends a plain event (no ``expect``, a record that fits a slot)
and finds the lock busy at its first try *publishes* it, serialized outside the lock, in
its own slot of the shared file ``combine`` beside the segments, then goes for the lock.
Whoever holds the lock (the combiner) appends every other posted slot it can validate,
with its own record (one ``write()``) and again after it (the posts made while it held
the lock): each record the bytes a single append would have written (its own seq, the
batch's one ts, its chain link, no ``more``). It enters them in the index, marks each
slot done with its seq, ts and segment, and lets go. A writer whose slot is marked done
returns without holding the lock at all (it sees the mark between its tries), or, if it
slept in flock, releases at once. Under ``durability="fsync"`` each writer still returns
only once a completed fdatasync covers its seq (group commit, sync.py), so the batch's
one sync serves everyone in it.

File ``combine``: a 64-byte header (at 8: u64 the slots in use, a high-water mark; at 16:
u64 the post hint, set by each post after its word, cleared by a holder before it scans:
a hint lost to a race only means that post's writer appends itself) and
``SLOTS`` slots of ``SLOT_BYTES``, little-endian:

    0   u64  word: ticket << 2 | state (0 free, 1 posted, 2 done, 3 done: the id was known)
    8   u64  seq (written by the combiner before the word)
    16  f64  ts
    24  u64  first seq of the segment the record went to
    32  u32  CRC-32 of bytes 36.. of the slot's body, seeded with the ticket's CRC
    36  u32  id length, key length (0xFFFFFFFF: no key), pre length, post length, 0
    56  u64  the id's index hash (``view.columns.str_hash``)
    64       id, key, pre, post (UTF-8 / the serialized members around ts)

A slot belongs to one open handle: it holds an OFD lock (``F_OFD_SETLK``) on the slot's
first byte, which the kernel drops when the handle's descriptor closes or its process
dies. A ticket is the handle's random 32-bit nonce and a counter, so a mark meant for a
slot's dead former owner never reads as the new owner's.

Why it is safe:

* A combiner takes a slot only if its word says posted, its CRC matches the ticket and
  body, and the word is unchanged after the copy: a half-written, stale or reused slot
  is never appended. Each taken id is looked up in the index first (and deduplicated in
  the batch), so an id posted twice, or by two processes, is appended once; the later
  poster gets "known" and returns the stored record (``idreuse``), as a retry does.
* A writer returns only on a "done" word carrying its own ticket, written after the
  records are in the segment and the index. A combiner killed before its write leaves
  the slots posted: their writers take the lock and append themselves. Killed after the
  write, before marking: the index (caught up from the segments if the kill left it
  behind) knows the ids, so those writers get the stored records. Nothing is ever
  acknowledged that is not written; nothing is written twice.
* A writer holding the lock whose slot is not done appends its own event itself (from
  its own memory, not the slot) and sets the slot free before it lets go.

``COMBINING`` (on by default; ``SWARMLOG_COMBINE=0`` in the environment switches it off;
off, the append path is round 4's).
"""

from __future__ import annotations

import fcntl
import mmap
import os
import signal
import struct
import time
import zlib
from typing import TYPE_CHECKING

import orjson

from swarmlog._fast import encode_one
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import FILE_MODE, open_nofollow
from swarmlog.file.lockfile import SPIN_MAX
from swarmlog.file.view import _fast as ixfast
from swarmlog.file.view import mapguard, slotfile

if TYPE_CHECKING:
    from swarmlog.file.view import writerindex as wi
    from swarmlog.file.view.index import IndexedView

SWITCH_ENV = "SWARMLOG_COMBINE"
COMBINING = os.environ.get(SWITCH_ENV, "1") != "0"
"""The switch, ON by default. ``SWARMLOG_COMBINE=0`` in a process's environment turns it
off: then appends go as in round 4 (every writer writes its own record). On since
session 5: with the later rounds' changes it measured faster at 16 writers on 2 cores
(process 1.06-1.29x, fsync 1.04-1.26x off's rows in the same runs, four runs) and within noise at 1
and 4; on 16 cores 1.51x at 64 writers, 0.95x at 16 (docs/benchmarks.md)."""

WAIT_ENV = "SWARMLOG_POST_WAIT"
MANY_CORES = 8
"""From this many usable CPUs on, a posted writer waits awake (``WAIT_MANY``)."""
WAIT_MANY = 16384
"""Tries (a look at the slot, a non-blocking flock, a ``sched_yield``: 1-2 us each) a
posted writer makes before it sleeps in flock, where the process may run on
``MANY_CORES`` or more CPUs; on fewer, ``SPIN_MAX`` as before. Why: a writer asleep in
flock is woken by the kernel on whatever core is free, its caches cold, so every hand-off
of the lock costs a wake-up and a cold holder (16 cores, 16 writers: 4.6 sleeps per
append, the lock held 74 us on average). Awake, the posters are served by the holder's
batches (84-97 % of appends) and hardly sleep. Measured (``lock_hold_probe``, the device
machine, 16 writers; docs/benchmarks.md, session 6): 16 CPUs 18.8k -> 38.3k appends/s
(64 writers 14.8k -> 41.9k); 8 CPUs (``taskset``) 15.2k -> 28.3k; but 4 CPUs 37.6k ->
34.5k and 2 cores 0.94x: with few cores the yields take the holder's CPU.
``SWARMLOG_POST_WAIT=N`` in the environment sets the tries (benchmarks)."""


CROWD_ENV = "SWARMLOG_POST_CROWD"
CROWD_MANY = 6
"""From how many live writers a waiter posts on ``MANY_CORES`` or more (``crowd_at``):
between the 4 writers that measured faster not posting and the 8 that measured faster
posting (16 cores, docs/benchmarks.md, session 9)."""
LIVE_EVERY = 0.05
"""Seconds between two counts of the live writers (``Slots.crowded``)."""


def usable_cores() -> int:
    """The CPUs this process may run on (Linux: its affinity; elsewhere all of them)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


def _many(cores: int | None) -> bool:
    """Whether a process that may use ``cores`` CPUs (None: this one) has ``MANY_CORES``."""
    return (usable_cores() if cores is None else cores) >= MANY_CORES


def _setting(env: str, default: int) -> int:
    """The whole number set in the environment variable ``env``, else ``default``
    (benchmarks and tests set the tunings below this way)."""
    value = os.environ.get(env, "")
    return int(value) if value.isdigit() else default


def wait_tries(cores: int | None = None) -> int:
    """The posted writer's tries before it sleeps, for a process that may use ``cores``
    CPUs (default: this one's; see ``WAIT_MANY``)."""
    return _setting(WAIT_ENV, WAIT_MANY if _many(cores) else SPIN_MAX)


def crowd_at(cores: int | None = None) -> int:
    """From how many live writers on one log a writer that finds the lock busy posts its
    record for the holder (0: always), for a process that may use ``cores`` CPUs.

    Why: with no more writers than about two per core, the holder is rarely descheduled
    and a lock hand-off is cheap, while a small batch costs the holder more per record
    than the poster's own fused append would (one or three posts: 14-17 us a record
    against 10-14 for its own, ``scripts/bench/combine_cost_probe.py``) and the poster
    idles meanwhile: 2 writers on 2 cores, 33-37k appends/s posting against 42-57k not
    (docs/benchmarks.md, session 7). With more writers, posting pays (8 and 16 writers:
    within noise of always posting, above not posting at 16). On ``MANY_CORES`` or more,
    from ``CROWD_MANY`` writers on: there (16 cores, session 9) 2 writers appended
    37-42k/s not posting against 21-26k posting, 4 writers 35-40k against 28-36k, and 8
    writers 42-43k posting against 29-30k not. ``SWARMLOG_POST_CROWD=N`` in the
    environment sets it (tests, benchmarks)."""
    if cores is None:
        cores = usable_cores()
    return _setting(CROWD_ENV, CROWD_MANY if _many(cores) else 2 * cores + 1)


STICKY_ENV = "SWARMLOG_COMBINE_STICKY"


STICKY_MANY = 64
"""The holder's extra rounds (``sticky_rounds``) where the process may use ``MANY_CORES``
or more CPUs."""
NAP_MANY = 20
"""A posted writer's nap in microseconds (``nap_seconds``) on ``MANY_CORES`` or more
(Linux's default timer slack adds up to 50 more). Of 20, 50, 100 and 200 the best at
16 writers on 16 cores, two rounds each (docs/benchmarks.md, session 9)."""


def sticky_rounds(cores: int | None = None) -> int:
    """How many more times a holder that combined looks for the posts made meanwhile and
    appends them too, before it lets go of the lock, for a process that may use ``cores``
    CPUs (default: this one's): ``STICKY_MANY`` on ``MANY_CORES`` or more, else 0 (one
    look after its own record).

    Why: on many cores a new holder starts each batch cold, its code and the index out of
    its caches; a holder that stays while posts keep coming does not (16 cores, with
    ``nap_seconds``: docs/benchmarks.md, session 9). On 2 cores four rounds measured
    0.93-0.97x at 16 writers (session 8). ``SWARMLOG_COMBINE_STICKY=N`` sets it."""
    return _setting(STICKY_ENV, STICKY_MANY if _many(cores) else 0)


STICKY_FOR = 0.01
"""Seconds after which a staying holder begins no more rounds (``more``): a bound on how
long its own append serves the others. At 16 writers on 16 cores the holds lasted 5 ms
at the median and 19 ms at p99 before it (docs/benchmarks.md, session 9; the bound came
after those runs, unmeasured there, and cuts only their tail)."""

NAP_ENV = "SWARMLOG_POST_NAP"


def nap_seconds(cores: int | None = None) -> float:
    """How long a posted writer sleeps between its tries, for a process that may use
    ``cores`` CPUs: ``NAP_MANY`` microseconds on ``MANY_CORES`` or more, else 0 (it calls
    ``sched_yield`` instead).

    Why: fifteen posters that yield in a loop keep fifteen cores busy with system calls
    beside the one holder every append waits on; asleep, they leave the machine to it
    (16 cores: docs/benchmarks.md, session 9). On few cores the yield is what lets the
    holder run. ``SWARMLOG_POST_NAP=N`` (microseconds) sets it."""
    return _setting(NAP_ENV, NAP_MANY if _many(cores) else 0) / 1e6


STICKY = sticky_rounds()
NAP = nap_seconds()


NAME, SLOTS, SLOT_BYTES, _HEAD = slotfile.NAME, slotfile.SLOTS, slotfile.SLOT_BYTES, slotfile.HEAD
_BODY = 64  # where a slot's id, key, pre and post start
MAX_BODY = SLOT_BYTES - _BODY
SIZE = _HEAD + SLOTS * SLOT_BYTES
FREE, POSTED, DONE, KNOWN = 0, 1, 2, 3
_ZERO = bytes(SLOT_BYTES - 32)
_ZEROS = memoryview(_ZERO)
_W0, _WSTEP = _HEAD // 8, SLOT_BYTES // 8  # (slot words in the file as machine words)
_NOKEY = 0xFFFFFFFF

_Q = struct.Struct("<Q")
_META = struct.Struct("<IIIIIIQ")  # crc, id, key, pre, post lengths, 0, hash (at 32)
_LENS = struct.Struct("<IIIIIQ")  # the same without the crc (at 36: the CRC'd part)
_DONE = struct.Struct("<QdQ")  # seq, ts, segment (at 8)
_EX_NB = fcntl.LOCK_EX | fcntl.LOCK_NB

CRASH_ENV = "SWARMLOG_TEST_COMBINE_CRASH_AT"
"""Test hook: ``"N:S"`` makes the process SIGKILL itself in its Nth combined batch (one
with another writer's slot in it) at step S: 1 before the write, 2 after the write and
the index update before any slot is marked, 3 after marking before the lock is let go
(tests/test_combine_crash.py)."""
_crash = [int(x) for x in os.environ.get(CRASH_ENV, "0:0").split(":")][:2]


def _crash_step(s: int) -> None:
    if s == 1:
        _crash[0] -= 1
    if _crash[0] == 0 and _crash[1] == s:
        os.kill(os.getpid(), signal.SIGKILL)


Done = tuple[int, bool, float, int]
"""A combined post's (seq, known, ts, first seq of its segment)."""


class Posted:
    """A slot's posted record as a combiner took it."""

    __slots__ = ("end", "h", "key", "off", "post", "pre", "s", "ticket")

    def __init__(
        self,
        off: int,
        ticket: int,
        s: bytes,
        h: int,
        key: str | None,
        pre: bytes,
        post: bytes,
        end: int = SLOT_BYTES,
    ) -> None:
        self.off, self.ticket, self.s, self.h = off, ticket, s, h
        self.key, self.pre, self.post = key, pre, post
        self.end = end  # (where the post's bytes end in its slot: what a mark wipes)


class Slots:
    """This handle's view of the ``combine`` file: its own slot, and the others'."""

    def __init__(self, fd: int, m: mmap.mmap, index: int, guard: int = 0) -> None:
        self.fd, self.m, self.index = fd, m, index
        self._guard = guard  # (mapguard: a cut file is extended back, its slots free)
        self.words = memoryview(m).cast("Q")  # (the slots' words at a stride: one C call)
        self.off = _HEAD + index * SLOT_BYTES
        self.nonce = int.from_bytes(os.urandom(4), "little") << 24
        self.count = 0
        self.ticket = 0
        self.combined = 0  # (others' posts this handle took as a combiner: tests, benches)
        self.wait_max = wait_tries()
        self.wait = self.wait_max  # (halved after each sleep, back to the max when awake)
        self.crowd = crowd_at()
        self._crowded = self.crowd <= 1
        self._live_next = 0.0  # (when to count the live writers again)

    @classmethod
    def open(cls, root: str, lock_fd: int) -> Slots | None:
        """Map ``combine`` and claim a free slot (None: no slot free, or no file to be had)."""
        try:
            fd = open_nofollow(os.path.join(root, NAME), os.O_RDWR | os.O_CREAT, FILE_MODE)
        except OSError:
            return None
        try:
            if os.fstat(fd).st_size < SIZE:  # (a cut or new file: recreated, blocks and
                os.posix_fallocate(fd, 0, SIZE)  # all: a full disk fails here, not as SIGBUS)
            m = mmap.mmap(fd, SIZE)
        except (OSError, ValueError):
            os.close(fd)
            return None
        guard = mapguard.guard(m, fd)  # (before the first touch: it may be cut already)
        fcntl.flock(lock_fd, fcntl.LOCK_EX)  # (the high-water mark: one claimer at a time)
        try:
            for i in range(SLOTS):
                off = _HEAD + i * SLOT_BYTES
                try:
                    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, slotfile.slot_lock(off))
                except OSError:
                    continue
                _Q.pack_into(m, off, 0)  # (a dead owner's post: nobody's any more,
                m[off + 32 : off + SLOT_BYTES] = _ZERO  # and none of its bytes)
                if _Q.unpack_from(m, 8)[0] < i + 1:
                    _Q.pack_into(m, 8, i + 1)
                return cls(fd, m, i, guard)
        finally:
            fcntl.flock(lock_fd, fcntl.LOCK_UN)
        mapguard.unguard(guard)
        m.close()
        os.close(fd)
        return None

    def close(self, scrub: bool = True) -> None:
        """Unmap and close (the kernel drops the slot's OFD lock with the last descriptor);
        ``scrub``: wipe the slot first (not in a forked child: the slot is its parent's)."""
        self.words.release()
        if scrub and self.ticket == 0:  # (no post in flight: a post stays for a combiner)
            off = self.off
            _Q.pack_into(self.m, off, 0)
            self.m[off + 32 : off + SLOT_BYTES] = _ZERO
        mapguard.unguard(self._guard)  # (after the last touch: the scrub may meet a cut)
        self.m.close()
        os.close(self.fd)

    def live(self) -> int:
        """How many handles hold a slot now, this one included (an OFD lock query per
        slot in use: the kernel drops a slot's lock when its handle closes or dies)."""
        n = min(self.words[1], SLOTS)
        count = 1
        getlk = fcntl.fcntl
        for i in range(n):
            if i == self.index:
                continue
            got = getlk(self.fd, fcntl.F_OFD_GETLK, slotfile.slot_lock(_HEAD + i * SLOT_BYTES))
            if struct.unpack_from("h", got)[0] != fcntl.F_UNLCK:
                count += 1
        return count

    def crowded(self) -> bool:
        """Whether enough writers share the log for posting to pay (``crowd_at``); the
        live count is taken again at most every ``LIVE_EVERY`` seconds."""
        if self.crowd <= 1:
            return True
        now = time.monotonic()
        if now >= self._live_next:
            self._live_next = now + LIVE_EVERY
            self._crowded = self.live() >= self.crowd
        return self._crowded

    def post(self, s: bytes, h: int, key: str | None, pre: bytes, post: bytes) -> bool:
        """Publish a record (outside the lock); False if it does not fit a slot."""
        kb = b"" if key is None else key.encode("utf-8", "surrogatepass")
        n = len(s) + len(kb) + len(pre) + len(post)
        if n > MAX_BODY:
            return False
        self.count = (self.count + 1) & 0xFFFFFF
        ticket = self.nonce | self.count
        body = (
            _LENS.pack(len(s), _NOKEY if key is None else len(kb), len(pre), len(post), 0, h)
            + s
            + kb
            + pre
            + post
        )
        crc = zlib.crc32(body, zlib.crc32(_Q.pack(ticket)))
        off = self.off
        m = self.m
        m[off + 32 : off + 36 + len(body)] = struct.pack("<I", crc) + body
        _Q.pack_into(m, off, ticket << 2 | POSTED)  # (after the body: a combiner reads it first)
        self.words[2] = 1  # (the hint, after the word: a holder then scans the slots)
        self.ticket = ticket
        return True

    def result(self) -> Done | None:
        """(seq, known, ts, segment) if a combiner marked this handle's post done."""
        m, off = self.m, self.off
        w = _Q.unpack_from(m, off)[0]
        if w >> 2 != self.ticket or w & 3 < DONE:
            return None
        seq, ts, segf = _DONE.unpack_from(m, off + 8)
        return seq, w & 3 == KNOWN, ts, segf

    def clear(self) -> None:
        """Under the lock, not done: the owner appends itself; nobody may take the post
        (nor read its bytes later: an erasure must find them nowhere)."""
        off = self.off
        _Q.pack_into(self.m, off, 0)
        self.m[off + 32 : off + SLOT_BYTES] = _ZERO
        self.ticket = 0

    def lock_or_done(self, lock_fd: int, budget: int) -> tuple[int, Done | None]:
        """Take the append lock as ``lockfile.lock_spinning`` does, but yielding the CPU
        between tries and watching the slot: (budget, the result) with the lock *not* held
        if the post was done, (budget, None) holding the lock otherwise.

        Why yield: on a machine with fewer cores than writers the holder, busy with our
        record, needs the CPU more than a spinner does (2 cores, 16 writers: spinning
        31-34k appends/s, yielding 34-41k, round 5), and a done post keeps its budget.
        How long: ``self.wait`` tries (``WAIT_MANY`` on a machine with many cores,
        halved after each sleep, back to the most once a try or the post succeeds)."""
        flock = fcntl.flock
        nap = NAP
        for _ in range(self.wait + 1):
            r = self.result()
            if r is not None:
                self.ticket = 0
                self.wait = self.wait_max
                return budget, r
            try:
                flock(lock_fd, _EX_NB)
            except BlockingIOError:
                pass
            else:
                budget = SPIN_MAX
                self.wait = self.wait_max
                break
            if nap:
                time.sleep(nap)
            else:
                os.sched_yield()
        else:
            flock(lock_fd, fcntl.LOCK_EX)
            budget = max(1, budget // 2)
            self.wait = max(budget, self.wait // 2)
        r = self.result()
        if r is not None:
            flock(lock_fd, fcntl.LOCK_UN)
            self.ticket = 0
        return budget, r

    def others(self) -> list[Posted]:
        """The other slots' valid posts (under the lock)."""
        words = self.words
        if not words[2]:
            return []  # (nobody posted since the last scan: no slot to read)
        words[2] = 0  # (before the scan: a post after it sets the hint again)
        m = self.m
        out: list[Posted] = []
        own = self.index
        n = min(words[1], SLOTS)
        for i, w in enumerate(words[_W0 : _W0 + n * _WSTEP : _WSTEP].tolist()):
            if w & 3 != POSTED or i == own:
                continue
            off = _HEAD + i * SLOT_BYTES
            crc, ni, nk, npre, npost, _, h = _META.unpack_from(m, off + 32)
            n = ni + (0 if nk == _NOKEY else nk) + npre + npost
            if n > MAX_BODY:
                continue
            body = m[off + 36 : off + _BODY + n]
            ticket = w >> 2
            if (
                zlib.crc32(body, zlib.crc32(_Q.pack(ticket))) != crc
                or _Q.unpack_from(m, off)[0] != w
            ):
                continue
            p = _BODY - 36
            s = body[p : p + ni]
            p += ni
            key = None
            if nk != _NOKEY:
                key = body[p : p + nk].decode("utf-8", "surrogatepass")
                p += nk
            pre = body[p : p + npre]
            out.append(Posted(off, ticket, s, h, key, pre, body[p + npre :], _BODY + n))
        return out

    def mark(self, p: Posted, seq: int, known: bool, ts: float, segf: int) -> None:
        """Tell a post's writer its seq (under the lock, after the write and index)."""
        m, off = self.m, p.off
        if _Q.unpack_from(m, off)[0] != p.ticket << 2 | POSTED:
            return  # (a new owner's slot by now: it appends itself)
        # (taken: its bytes are the log's now only; the rest of the slot is zero already)
        m[off + 32 : off + p.end] = _ZEROS[: p.end - 32]
        _DONE.pack_into(m, off + 8, seq, ts, segf)
        _Q.pack_into(m, off, p.ticket << 2 | (KNOWN if known else DONE))


def batch(
    log: IndexedView,
    ix: wi.WriterIndex,
    slots: Slots,
    own: Posted | None,
    others: list[Posted],
) -> tuple[int, bool, float, int]:
    """Append ``own`` (if any: the holder's record, else it has appended its own already)
    and ``others`` as one write (under the lock, ``ix`` the index, current): (own seq, own
    known, ts, last seq written or 0).

    Each id is looked up once (``ixfast.find``, from the bytes and hash its writer computed
    before posting); where the batch fits the index, the ids are entered from those
    (``ixfast.record_many``) and never decoded: a batch's fixed cost is the serial section
    every other writer waits on (docs/benchmarks.md, session 7)."""
    first = log._end.last + 1
    assigned: dict[bytes, int] = {}
    fresh: list[Posted] = []
    entries: list[tuple[bytes, int, int]] = []  # (id bytes, hash, the slot find gave)
    seqs: list[tuple[int, bool]] = []
    find = ixfast.find
    for p in (own, *others) if own is not None else others:
        seq, slot = find(ix, p.s, p.h)
        if not seq:
            seq = assigned.get(p.s, 0)
        if seq:
            seqs.append((seq, True))
            continue
        seq = assigned[p.s] = first + len(fresh)
        fresh.append(p)
        entries.append((p.s, p.h, slot))
        seqs.append((seq, False))
    ts = 0.0
    last = 0
    if fresh:
        keys = [p.key for p in fresh]
        # (a bound on the heap from the bytes: at least the reference's from the strings)
        heap = sum(4 * len(p.s) + 4 for p in fresh) + sum(
            4 * len(k) + 4 for k in keys if k is not None
        )
        ids: list[str] | None = None
        if not ix.fits(len(fresh), len(keys), heap):
            ids = [p.s.decode("utf-8", "surrogatepass") for p in fresh]
            grown = log._ix_room(ix, ids, keys)
            if grown is not ix:  # (a new file: find's slots are not its slots)
                ix = grown
                entries = []
        ts, cap = ixfast.stamp(log, ix)
        tsb = orjson.dumps(ts)
        tip = log._end.tip
        lines = []
        for k, p in enumerate(fresh, first):
            line, tip = encode_one(k, p.pre, tsb, p.post, tip)
            lines.append(line)
        last = first + len(fresh) - 1
        if _crash[1]:
            _crash_step(1)
        log._write(b"".join(lines), last, len(fresh))
        log._end.sealed(ts, tip)
        if not entries or not ixfast.record_many(log, ix, first, entries, keys, cap):
            if ids is None:
                ids = [p.s.decode("utf-8", "surrogatepass") for p in fresh]
            log._ix_record(ix, first, ids, keys, cap, alone=False)
        if _crash[1]:
            _crash_step(2)
    segf = log._end.seg_first
    theirs = seqs[1:] if own is not None else seqs
    for p, (seq, known) in zip(others, theirs, strict=True):
        slots.mark(p, seq, known, ts, segf)
    slots.combined += len(others)
    if _crash[1]:
        _crash_step(3)
    seq, known = seqs[0] if own is not None else (0, True)
    return seq, known, ts, last


def more(
    log: IndexedView,
    ix: wi.WriterIndex,
    slots: Slots,
    last: int,
    rounds: int,
    for_s: float = STICKY_FOR,
) -> int:
    """Up to ``rounds`` more batches of the posts made while the holder combined (under
    the lock, after ``batch``), none begun once ``for_s`` seconds have passed: the last
    seq written, ``last`` if none (``STICKY``, ``STICKY_FOR``)."""
    stop = time.monotonic() + for_s
    for _ in range(rounds):
        others = slots.others()
        if not others:
            break
        last = batch(log, log._wix or ix, slots, None, others)[3] or last
        if time.monotonic() >= stop:
            break
    return last


def sync_done(log: IndexedView, seq: int, segf: int) -> None:
    """Under fsync, a combined writer's wait for a completed fdatasync covering ``seq``
    (written by the combiner to the segment starting at ``segf``)."""
    if log._end.seg_fd >= 0 and log._end.seg_first == segf:
        log._group_sync(seq, log._end.seg_fd, segf)
        return
    try:
        path = os.path.join(log._segdir_s, seg.segment_name(segf))
        fd = open_nofollow(path, os.O_RDONLY, writing=False)
    except FileNotFoundError:  # (rotated out, so fdatasynced, then compacted away)
        return
    try:
        log._group_sync(seq, fd, segf)
    finally:
        os.close(fd)
