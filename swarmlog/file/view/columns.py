"""The writer view's id index and key versions as sorted columns of a mapped snapshot.

A writing handle must know whether each id it appends is stored already (a retry:
idempotency) and, for each key it expects, the seq of that key's last event. Built as
dicts from a snapshot that is O(n) Python work in every fresh process (a quarter of a
second at 200,000 events). Here a snapshot (snapshot.py) holds each as a ``Table``:
stable 64-bit hashes sorted ascending, the seq of each entry and its exact string, read
in place from a read-only mapping. A lookup is one bisection and an exact comparison
of the strings under a matching hash, so a hash collision never gives a wrong answer.
What the handle learns after the snapshot lives in a ``BasedDict`` over the table.

numpy is imported on first use (building, merging, batch lookups): a process that never
maps a snapshot (the CLI, a small log) does not pay for it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

_U64 = "<u8"
_I64 = "<i8"


def gather(
    blob: np.ndarray[Any, Any],
    starts: np.ndarray[Any, Any],
    lens: np.ndarray[Any, Any],
    offs: np.ndarray[Any, Any],
) -> np.ndarray[Any, Any]:
    """The strings ``blob[starts[j] : starts[j] + lens[j]]`` laid end to end (entry j at
    ``offs[j]``; ``offs`` is the cumulative sum of ``lens`` after a 0), as uint8.

    Why by rows: indexing the blob with one index per byte (``np.repeat`` of the starts)
    made a 40-million-entry int64 array for the ids of a 1,000,000-event log (0.6-1.4 s,
    most of a view snapshot's cost). Entries of one length ``w`` are instead copied as
    rows of ``w``-byte windows of the blob, into ``w``-byte windows of the result: one
    copy per entry, one pass per distinct length (ids of one scheme share one)."""
    from swarmlog.numpyload import np

    tricks = np.lib.stride_tricks

    blob = np.ascontiguousarray(blob, dtype=np.uint8)
    out = np.empty(int(offs[-1]), np.uint8)
    for w in np.unique(lens).tolist():
        if w <= 0:
            continue
        sel = np.flatnonzero(lens == w)
        rows = tricks.sliding_window_view(blob, w)[starts[sel]]
        # (the result's windows at the entries' offsets never overlap: entries are disjoint)
        dst = tricks.as_strided(out, shape=(len(out) - w + 1, w), strides=(1, 1), writeable=True)
        dst[offs[:-1][sel]] = rows
    return out


def str_hash(s: str) -> int:
    """A 64-bit hash of an id or key that every process computes alike (``hash`` does not).

    A default id (32 hex digits of a uuid4) is random already: its first 16 characters
    read as a hex number are the hash. Anything else (or what does not read so) goes
    through blake2b. Only equal hashes matter, never what they mean: lookups compare
    the strings.
    """
    if len(s) == 32:
        try:
            h = int(s[:16], 16)
            if h >= 0:
                return h
        except ValueError:
            pass
    return int.from_bytes(blake2b(s.encode("utf-8", "surrogatepass"), digest_size=8).digest())


def _hashes(strs: list[str]) -> np.ndarray[Any, Any]:
    from swarmlog.numpyload import np

    return np.fromiter(map(str_hash, strs), dtype=_U64, count=len(strs))


class Table:
    """Entries (string -> seq) sorted by ``str_hash``: ``hashes[i]``, ``seqs[i]`` and the
    UTF-8 string ``blob[offs[i]:offs[i + 1]]``. The arrays may view a mapped file."""

    __slots__ = ("_bv", "_edges", "_hv", "_ov", "_shift", "blob", "hashes", "offs", "seqs")

    def __init__(
        self,
        hashes: np.ndarray[Any, Any],
        seqs: np.ndarray[Any, Any],
        offs: np.ndarray[Any, Any],
        blob: np.ndarray[Any, Any],
    ) -> None:
        self.hashes, self.seqs, self.offs, self.blob = hashes, seqs, offs, blob
        # plain-int views for the one-entry lookup: bisect over a memoryview beats a
        # numpy call on one value, and its items are Python ints
        self._hv = hashes.astype("=u8", copy=False).data
        self._ov = offs.astype("=i8", copy=False).data
        self._bv = blob.data
        # where each of 2**bits hash ranges starts (about 16 entries each), so a lookup
        # bisects a few entries, not the whole column
        from swarmlog.numpyload import np

        bits = min(24, max(0, (len(hashes) // 16).bit_length() - 1))
        self._shift = 64 - bits
        starts = np.arange(2**bits, dtype=np.uint64) << np.uint64(self._shift % 64)
        edges = np.append(np.searchsorted(hashes, starts), len(hashes))
        self._edges = edges.astype("=i8").data

    def __len__(self) -> int:
        return len(self.seqs)

    @classmethod
    def build(cls, strs: list[str], seqs: Iterable[int]) -> Table:
        """The table of these entries (strings distinct)."""
        from swarmlog.numpyload import np

        enc = [s.encode("utf-8", "surrogatepass") for s in strs]
        lens = np.fromiter(map(len, enc), dtype=_I64, count=len(enc))
        starts = np.zeros(len(enc), _I64)
        np.cumsum(lens[:-1], out=starts[1:])
        blob = np.frombuffer(b"".join(enc), dtype=np.uint8)
        s = np.fromiter(seqs, dtype=_I64, count=len(strs))
        return cls._sorted(_hashes(strs), s, starts, lens, blob)

    @classmethod
    def _sorted(
        cls,
        hashes: np.ndarray[Any, Any],
        seqs: np.ndarray[Any, Any],
        starts: np.ndarray[Any, Any],
        lens: np.ndarray[Any, Any],
        blob: np.ndarray[Any, Any],
    ) -> Table:
        """Entries given in any order (strings at ``blob[starts:starts+lens]``), sorted."""
        from swarmlog.numpyload import np

        order = np.argsort(hashes, kind="stable")
        starts, lens = starts[order], lens[order]
        offs = np.zeros(len(lens) + 1, _I64)
        np.cumsum(lens, out=offs[1:])
        return cls(hashes[order], seqs[order], offs, gather(blob, starts, lens, offs))

    def find(self, s: str, h: int | None = None) -> int | None:
        """The seq of entry ``s``; None if there is none."""
        hv = self._hv
        h = str_hash(s) if h is None else h
        b = h >> self._shift
        i = bisect_left(hv, h, self._edges[b], self._edges[b + 1])
        if i == len(hv) or hv[i] != h:
            return None
        want = s.encode("utf-8", "surrogatepass")
        ov, bv = self._ov, self._bv
        while i < len(hv) and hv[i] == h:  # every entry under this hash, compared exactly
            if bv[ov[i] : ov[i + 1]] == want:
                return int(self.seqs[i])  # (numpy scalar: this runs on a hit only)
            i += 1
        return None

    def any_of(self, strs: list[str]) -> bool:
        """Whether any of these strings has an entry (one vector search for the batch)."""
        if not len(self) or not strs:
            return False
        from swarmlog.numpyload import np

        hs = _hashes(strs)
        at = np.minimum(np.searchsorted(self.hashes, hs), len(self) - 1)
        maybe = np.flatnonzero(self.hashes[at] == hs)
        return any(self.find(strs[i], int(hs[i])) is not None for i in maybe)

    def merged(self, newer: Mapping[str, int]) -> Table:
        """This table with ``newer``'s entries added, each replacing an equal string's."""
        from swarmlog.numpyload import np

        strs = list(newer)
        top = Table.build(strs, newer.values())
        keep = np.ones(len(self), bool)
        if len(self) and strs:
            hs = top.hashes
            at = np.minimum(np.searchsorted(self.hashes, hs), len(self) - 1)
            for i in np.flatnonzero(self.hashes[at] == hs):  # equal hash: same string?
                j, h = int(at[i]), int(hs[i])
                want = bytes(top._bv[top._ov[i] : top._ov[i + 1]])
                while j < len(self) and self._hv[j] == h:
                    if self._bv[self._ov[j] : self._ov[j + 1]] == want:
                        keep[j] = False
                    j += 1
        lens = np.diff(self.offs)[keep]
        starts = self.offs[:-1][keep]
        return Table._sorted(
            np.concatenate([self.hashes[keep], top.hashes]),
            np.concatenate([self.seqs[keep], top.seqs]),
            np.concatenate([starts, top.offs[:-1] + len(self.blob)]),
            np.concatenate([lens, np.diff(top.offs)]),
            np.concatenate([self.blob, top.blob]),
        )


class BasedDict(dict[str, int]):
    """What a handle learned after its snapshot (the dict itself) over the snapshot's
    ``base`` table: a dict entry wins over the base's for the same string.

    ``get`` (what the append path and the expectation check call), ``in`` and ``[]``
    consult both; iteration and ``len`` see the dict's own entries only, so code that
    needs the whole view (a new snapshot) merges ``base`` itself.
    """

    __slots__ = ("base",)

    def __init__(self, base: Table) -> None:
        super().__init__()
        self[0] = 0  # type: ignore[index]  # keep hashes in the table (_fast.hashed_dict)
        del self[0]  # type: ignore[arg-type]
        self.base = base

    def get(self, key: str, default: Any = None) -> Any:
        v = dict.get(self, key)
        if v is None:
            v = self.base.find(key)
        return default if v is None else v

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __getitem__(self, key: str) -> int:
        v = self.get(key)
        if v is None:
            raise KeyError(key)
        return int(v)

    def any_of(self, strs: list[str]) -> bool:
        """Whether any of these strings has an entry here or in the base."""
        return not self.keys().isdisjoint(strs) or self.base.any_of(strs)


def any_known(index: dict[str, int], ids: list[str]) -> bool:
    """Whether any of ``ids`` is in a writer view's id index (a plain or a based dict)."""
    if isinstance(index, BasedDict):
        return index.any_of(ids)
    return not index.keys().isdisjoint(ids)


def full_table(index: dict[str, int]) -> Table:
    """The whole of a writer view's index as one table (for a new snapshot)."""
    if isinstance(index, BasedDict):
        return index.base.merged(index)
    return Table.build(list(index), index.values())
