"""Vectors saved with a checkpoint: one file a reader memory-maps instead of re-embedding.

Beside a file checkpoint ``ckpt-<seq>.bin`` the writer stores the local embedder's rows
of the FactIndex as ``vec-<seq>-<sha256>.f32``, written *before* the checkpoint, whose
header then names it with the SHA-256 of its bytes (``CheckpointInfo.side``,
swarmlog/sidefile.py): a vector file only ever loads with the state it was written from,
and only when its bytes are the ones written. The check runs in the background while
the rest opens (a file hashed before, unchanged since, is not hashed again: the stamp of
swarmlog/sidefile.py); the first use of the vectors waits for it, and a file
that fails it (rot, zeroed or permuted rows, another swarm's rows of the right size) is
deleted with a one-line note and its facts embedded instead: never served. A crash
between the side files and the checkpoint leaves files no checkpoint names; the next
prune removes them. Layout (native byte order)::

    [0, 4096)          header: JSON, space-padded (magic, seq, checksum, embedder, dim,
                       n rows, capacity, offsets of the parts below)
    [4096, ...)        capacity x dim float32 rows, normalised; rows past n are a hole
                       (sparse, zero) that new facts are appended into
    then               the ranking columns and weights of the n rows, then the ids (JSON)

A reader maps the rows copy-on-write (``np.memmap`` mode ``c``): processes that map one
file share its pages; a row a process changes (an eviction moving a row, an appended
fact) becomes private to it, page by page. Writes are atomic (temporary file, fsync,
rename); a new checkpoint writes a new file and never touches a mapped one. Vector files
whose checkpoint is gone are unlinked (an open mapping survives the unlink). Large
indexes also get recall's one-bit codes beside them (``quantindex``), saved, mapped and
pruned the same way, and every checkpoint its lexical index (``lex-<seq>-<sha256>.bin``,
``LexicalIndex.dump``), read on a process's first text recall instead of re-tokenizing
every fact; an erasure drops it with its checkpoint, and the rebuilt one holds only what
the rewritten log holds.

On a JetStream log the checkpoint store's ``local_dir`` is a cache on this machine: the
writer also ``publish``es the files to the object store, a reader ``fetch``es the ones
its checkpoint names before mapping them, and pruning ``unpublish``es the stale ones
(erased, like the checkpoints an erasure drops).
"""

from __future__ import annotations

import logging
import mmap
import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from swarmlog import CheckpointInfo, Log, sidefile
from swarmlog.checkpoint import prune_side, side_header
from synthesizer.search import quantindex
from synthesizer.search.factindex import RANK_COLUMNS, FactIndex
from synthesizer.search.lexical import LexicalIndex
from synthesizer.state import SwarmState

LOG = logging.getLogger("swarmlog.checkpoint")
PREFIX, SUFFIX = "vec-", ".f32"
LEX_PREFIX, LEX_SUFFIX = "lex-", ".bin"

MAGIC = "swarmvec/1"
HEADER = 4096
_ALIGN = 64
SPARE = 0.25  # spare capacity rows, as a fraction of n (at least 1024): appends stay mapped


def vector_dir(log: Log) -> Path | None:
    """Where the log's side files live on this machine (file checkpoints' directory; the
    JetStream store's cache), or None (MemoryLog: nothing kept beside checkpoints)."""
    return log.checkpoints.local_dir()


def _named(info: CheckpointInfo, prefix: str, suffix: str) -> str | None:
    want = f"{prefix}{info.seq:020d}-"
    for name in info.side_files():
        if name.startswith(want) and name.endswith(suffix):
            return name
    return None


def file_name(info: CheckpointInfo) -> str | None:
    """The vector file checkpoint ``info`` names (None: it was saved without one)."""
    return _named(info, PREFIX, SUFFIX)


def lexical_name(info: CheckpointInfo) -> str | None:
    """The lexical index file checkpoint ``info`` names, if any."""
    return _named(info, LEX_PREFIX, LEX_SUFFIX)


def codes_name(info: CheckpointInfo) -> str | None:
    """The code file (quantindex) checkpoint ``info`` names, if any."""
    return _named(info, quantindex.PREFIX, quantindex.SUFFIX)


def _aligned(x: int) -> int:
    return (x + _ALIGN - 1) // _ALIGN * _ALIGN


def checkpoint(
    log: Log, state: SwarmState, index: FactIndex, pinned: bool = False
) -> CheckpointInfo:
    """Checkpoint ``state`` with its vectors: the side files first, then the checkpoint
    naming them with their SHA-256 (``save_checkpoint_info``'s errors pass through, and
    the side files written for it are removed again), then stale side files pruned."""
    from synthesizer.checkpoints.save import save_checkpoint_info

    side = write(log, index, state)
    try:
        info = save_checkpoint_info(log, state, pinned, side=side)
    except BaseException:
        _drop(log, side)
        raise
    prune(log, spare_newer=True)
    return info


def write(log: Log, index: FactIndex, state: SwarmState) -> dict[str, str]:
    """Write (and publish) the side files of a checkpoint of ``state``: name -> SHA-256.
    Nothing when there is no local directory; a failure to write (disk full) is one
    warning and no side files: the checkpoint is still written, readers embed."""
    d = vector_dir(log)
    if d is None:
        return {}
    try:
        d.mkdir(parents=True, exist_ok=True)
        side = _write(d, index, state)
        for name in side:
            log.checkpoints.publish(name)  # readers on other machines (JetStream)
    except OSError as e:
        LOG.warning("swarmlog: vectors not saved with the checkpoint (%s); readers embed", e)
        return {}
    return side


def _write(d: Path, index: FactIndex, state: SwarmState) -> dict[str, str]:
    seq = state.last_seq
    index.prepare(state)
    idx = index.default
    ids, mat = idx.matrix()
    n, dim = len(ids), idx.dim
    cap = n + max(1024, int(n * SPARE))
    at = HEADER + cap * dim * 4
    parts: list[tuple[str, np.ndarray]] = [(name, idx.column(name)) for name, _, _ in RANK_COLUMNS]
    parts.append(("weight", idx.weights()))
    offsets: dict[str, list[Any]] = {}
    for name, arr in parts:
        at = _aligned(at)
        offsets[name] = [at, arr.dtype.str]
        at += arr.nbytes
    codes = sorted(index.codes().items(), key=lambda kv: kv[1])
    id_bytes = orjson.dumps({"ids": ids, "codes": [name for name, _ in codes]})
    ids_at = _aligned(at)
    header = {
        "magic": MAGIC,
        "seq": seq,
        "embedder": idx.embedder_id,
        "dim": dim,
        "n": n,
        "cap": cap,
        "facts": len(state.facts),
        "evictions": state.metrics.evictions_total,
        "columns": offsets,
        "ids": [ids_at, len(id_bytes)],
        "size": ids_at + len(id_bytes),
    }
    raw = orjson.dumps(header)
    if len(raw) >= HEADER:
        raise ValueError("vector file header too large")
    with sidefile.write(d, f"{PREFIX}{seq:020d}-", SUFFIX) as w:
        f = w.file
        f.write(raw.ljust(HEADER - 1) + b"\n")
        f.write(np.ascontiguousarray(mat).tobytes())
        for name, arr in parts:
            f.seek(offsets[name][0])
            f.write(np.ascontiguousarray(arr).tobytes())
        f.seek(ids_at)
        f.write(id_bytes)
    side = {w.name: w.digest}
    bits = quantindex.save(d, seq, idx, cap)  # recall's codes, at scale
    if bits is not None:
        side[bits[0]] = bits[1]
    lex = index.lexical_for(state).dump()
    with sidefile.write(d, f"{LEX_PREFIX}{seq:020d}-", LEX_SUFFIX) as w:
        w.file.write(lex)
    side[w.name] = w.digest
    return side


def _drop(log: Log, side: dict[str, str]) -> None:
    """Remove side files written for a checkpoint that was not stored."""
    d = vector_dir(log)
    if d is None or not side:
        return
    for name in side:
        (d / name).unlink(missing_ok=True)
    prune(log, spare_newer=True)


def prune(log: Log, spare_newer: bool = False) -> int:
    """Unlink side files no checkpoint names; return how many.

    ``spare_newer``: keep those of a seq past every checkpoint's, which another writer
    may be about to name (a checkpoint's side files are written before it). An erasure
    prunes without it: files of checkpoints it dropped go at once.
    """
    d = vector_dir(log)
    if d is None or not d.is_dir():
        return 0
    infos = log.checkpoints.list()
    keep = {name for i in infos for name in i.side_files()}
    if spare_newer:
        top = max((i.seq for i in infos), default=-1)
        for p in [
            *d.glob(f"{PREFIX}*{SUFFIX}"),
            *d.glob(f"{quantindex.PREFIX}*{quantindex.SUFFIX}"),
            *d.glob(f"{LEX_PREFIX}*{LEX_SUFFIX}"),
        ]:
            seq = sidefile.seq_of(p.name)
            if seq is not None and seq > top:
                keep.add(p.name)
    gone = log.checkpoints.unpublish(keep)
    gone += quantindex.prune(d, keep)
    gone += prune_side(d, f"{LEX_PREFIX}*{LEX_SUFFIX}", keep)
    return gone + prune_side(d, f"{PREFIX}*{SUFFIX}", keep)


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of a vector file, or None when it is missing or unreadable."""
    return side_header(path, MAGIC, HEADER)


def attach(log: Log, info: CheckpointInfo, index: FactIndex) -> bool:
    """Map checkpoint ``info``'s vectors into ``index`` (empty, same embedder); False if
    there is no matching, well-formed vector file (the caller embeds instead). The
    files' SHA-256 is checked in the background before the vectors are first used."""
    d = vector_dir(log)
    vec, bits = file_name(info), codes_name(info)
    if d is None or vec is None:
        return False
    path = d / vec
    store = log.checkpoints
    if not store.fetch(vec):
        return False
    if bits is not None and not store.fetch(bits):
        bits = None  # none: coded on use
    h = read_header(path)
    emb = index.embedder
    if (
        h is None
        or h.get("seq") != info.seq
        or h.get("embedder") != emb.id
        or h.get("dim") != emb.dim
        or len(index)
    ):
        return False
    try:
        if os.path.getsize(path) != h["size"]:
            return False
        n, cap, dim = int(h["n"]), int(h["cap"]), int(h["dim"])
        mat = np.memmap(path, dtype=np.float32, mode="c", offset=HEADER, shape=(cap, dim))
        cols: dict[str, np.ndarray] = {}
        with open(path, "rb") as f:
            for name, (off, dtype) in h["columns"].items():
                f.seek(off)
                cols[name] = np.fromfile(f, dtype=np.dtype(dtype), count=n)
            off, size = h["ids"]
            f.seek(off)
            tail = orjson.loads(f.read(size))
        ids, codes = tail["ids"], tail["codes"]
        mark = (int(h["facts"]), int(h["evictions"]), info.seq)
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        return False
    if len(ids) != n or any(c.shape != (n,) for c in cols.values()):
        return False
    index.attach_default(ids, mat, cols, codes, mark)
    side = info.side_files()
    used = {vec: side[vec]}
    if bits is not None and quantindex.attach(d, bits, info.seq, index.default):
        used[bits] = side[bits]
    lex = lexical_name(info)
    if lex is not None and store.fetch(lex):
        index.lexical_from(lambda: _read_lexical(d / lex))
        used[lex] = side[lex]
    index.verify_later(lambda: _verified(d, used) and _warm(mat, n))
    return True


def _read_lexical(path: Path) -> LexicalIndex | None:
    """A checkpoint's lexical index, or None when it cannot be read (then built). The file
    is mapped, not read: a query touches a few terms' postings and names of it."""
    try:
        with open(path, "rb") as f:
            return LexicalIndex.load(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    except FileNotFoundError:  # pruned meanwhile (a newer checkpoint): build instead
        return None
    except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError) as e:
        LOG.warning("swarmlog: lexical index %s not used (%s); built from the facts", path, e)
        return None


def _warm(mat: np.ndarray, n: int) -> bool:
    """Fault the ``n`` live rows of a mapped matrix in (one float read per 4 KiB page,
    outside the GIL) while the rest opens, so the first recall's product does not; True.
    Why: the side files' check, once a hash of every byte, no longer reads them."""
    flat = np.asarray(mat).reshape(-1)[: n * mat.shape[1]]
    float(flat[::1024].sum())
    if n >= quantindex.APPROX_MIN_ROWS:  # the codes' projection (numpy.random's import)
        quantindex.rotation(int(mat.shape[1]))
    return True


def _verified(d: Path, files: dict[str, str]) -> bool:
    """Whether every attached side file hashes to what its checkpoint recorded; a file
    that does not is deleted with a one-line note (the index then re-embeds)."""
    ok = True
    for name, digest in files.items():
        why = sidefile.problem(d / name, digest)
        if why is not None:
            sidefile.discard(d / name, why)
            ok = False
    return ok
