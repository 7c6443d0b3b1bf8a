"""Read descriptors of segments, opened on demand and kept in a small LRU cache.

A log may hold any number of segments, far more than a process may keep open
(``ulimit -n``), so a handle keeps at most ``keep`` segment descriptors. One in use (a
reader between two chunks, a follower waiting for the next record) is pinned and never
closed under it: a closed number could be reused by another open and the reader would
read the wrong file. Segments are opened without following symlinks (see fsguard).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from swarmlog.file.fsguard import open_nofollow

KEEP = 16
"""Segment descriptors a handle keeps open at most (beyond those pinned right now)."""


class Pinned:
    __slots__ = ("closed", "fd", "pins")

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.pins = 0
        self.closed = False


class SegmentFiles:
    """Descriptors of the segments in ``segdir`` by first seq (see module docstring)."""

    def __init__(self, segdir: str, keep: int = KEEP) -> None:
        self.segdir = segdir
        self.keep = keep
        self._lock = threading.Lock()
        self._cache: OrderedDict[int, Pinned] = OrderedDict()
        self.opened = 0
        """How many times a segment was opened (each miss of the cache)."""

    def __len__(self) -> int:
        return len(self._cache)

    def acquire(self, first: int, name: str) -> Pinned:
        """The pinned entry of segment ``first`` (file ``name``), opening it if needed."""
        with self._lock:
            path = os.path.join(self.segdir, name)
            e = self._cache.get(first)
            if e is not None and os.fstat(e.fd).st_nlink == 0:
                # unlinked: replaced by a redaction (redact.py), then the file by that name
                # is the one to read; or removed by compaction (archive.py), then there is
                # none and the old inode still holds the segment's bytes, unchanged
                try:
                    fresh: Pinned | None = Pinned(open_nofollow(path, os.O_RDONLY))
                except FileNotFoundError:
                    fresh = None
                if fresh is not None:
                    del self._cache[first]
                    e.closed = True
                    if e.pins == 0:
                        _close(e.fd)
                    e = fresh
                    self.opened += 1
                    self._cache[first] = e
            if e is None:
                e = Pinned(open_nofollow(path, os.O_RDONLY))
                self.opened += 1
                self._cache[first] = e
            else:
                self._cache.move_to_end(first)
            e.pins += 1
            self._evict()
            return e

    def release(self, e: Pinned) -> None:
        """Unpin ``e``; close it if the handle was closed meanwhile, trim the cache."""
        with self._lock:
            e.pins -= 1
            if e.closed and e.pins == 0:
                _close(e.fd)
            else:
                self._evict()

    def swap(self, old: Pinned | None, first: int, name: str) -> Pinned:
        """Pin segment ``first`` and unpin ``old`` (a reader moving on)."""
        e = self.acquire(first, name)
        if old is not None:
            self.release(old)
        return e

    def after_fork(self) -> None:
        """In a forked child: a fresh lock (the parent's may have been held at the fork)."""
        self._lock = threading.Lock()

    @contextmanager
    def pinned(self, first: int, name: str) -> Iterator[int]:
        """``with files.pinned(first, name) as fd:`` — the descriptor, open for the block."""
        e = self.acquire(first, name)
        try:
            yield e.fd
        finally:
            self.release(e)

    def _evict(self) -> None:
        if len(self._cache) <= self.keep:
            return
        for first, e in list(self._cache.items()):
            if len(self._cache) <= self.keep:
                return
            if e.pins == 0:
                del self._cache[first]
                _close(e.fd)

    def close(self) -> None:
        """Close every descriptor (a pinned one once its user lets go of it)."""
        with self._lock:
            for e in self._cache.values():
                e.closed = True
                if e.pins == 0:
                    _close(e.fd)
            self._cache.clear()


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass
