"""Vectors saved with a checkpoint: one file a reader memory-maps instead of re-embedding.

Beside a file checkpoint ``ckpt-<seq>.bin`` the writer stores the local embedder's rows
of the FactIndex as ``vec-<seq>-<checksum>.f32`` — the checkpoint's own seq and payload
checksum in the name and the header, so a vector file only ever loads with the state it
was written from. Layout (native byte order)::

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
pruned the same way.

On a JetStream log the checkpoint store's ``local_dir`` is a cache on this machine: the
writer also ``publish``es the files to the object store, a reader ``fetch``es the ones
its checkpoint names before mapping them, and pruning ``unpublish``es the stale ones
(erased, like the checkpoints an erasure drops).
"""

from __future__ import annotations

import mmap
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from swarmlog import CheckpointInfo, Log
from swarmlog.checkpoint import prune_side, side_file, side_header

from . import quantindex
from .factindex import RANK_COLUMNS, FactIndex
from .state import SwarmState

MAGIC = "swarmvec/1"
HEADER = 4096
_ALIGN = 64
SPARE = 0.25  # spare capacity rows, as a fraction of n (at least 1024): appends stay mapped


def vector_dir(log: Log) -> Path | None:
    """Where the log's side files live on this machine (file checkpoints' directory; the
    JetStream store's cache), or None (MemoryLog: nothing kept beside checkpoints)."""
    return log.checkpoints.local_dir()


def file_name(info: CheckpointInfo) -> str:
    """The vector file of a checkpoint: named by its seq and payload checksum."""
    return f"vec-{info.seq:020d}-{info.checksum}.f32"


def _aligned(x: int) -> int:
    return (x + _ALIGN - 1) // _ALIGN * _ALIGN


def save(log: Log, info: CheckpointInfo, index: FactIndex, state: SwarmState) -> Path | None:
    """Write the vector file of checkpoint ``info`` (``state`` is the state it holds)."""
    d = vector_dir(log)
    if d is None or state.last_seq != info.seq:
        return None
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
        "seq": info.seq,
        "checksum": info.checksum,
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
    path = d / file_name(info)
    with side_file(path) as f:
        f.write(raw.ljust(HEADER - 1) + b"\n")
        f.write(np.ascontiguousarray(mat).tobytes())
        for name, arr in parts:
            f.seek(offsets[name][0])
            f.write(np.ascontiguousarray(arr).tobytes())
        f.seek(ids_at)
        f.write(id_bytes)
    bits = quantindex.save(d, info.seq, info.checksum, idx, cap)  # recall's codes, at scale
    store = log.checkpoints
    store.publish(path.name)  # readers on other machines (JetStream: the object store)
    if bits is not None:
        store.publish(bits.name)
    prune(log)
    return path


def prune(log: Log) -> int:
    """Unlink vector files whose checkpoint is gone; return how many."""
    d = vector_dir(log)
    if d is None or not d.is_dir():
        return 0
    infos = log.checkpoints.list()
    keep = {file_name(i) for i in infos}
    codes = {quantindex.file_name(i.seq, i.checksum) for i in infos}
    gone = log.checkpoints.unpublish(keep | codes)
    gone += quantindex.prune(d, codes)
    return gone + prune_side(d, "vec-*.f32", keep)


def read_header(path: Path) -> dict[str, Any] | None:
    """The header of a vector file, or None when it is missing or unreadable."""
    return side_header(path, MAGIC, HEADER)


def _warm(mat: np.ndarray, n: int) -> None:
    """Read one value of each page of the first ``n`` rows in a background thread.

    Why: the first product over a freshly mapped matrix pays a page fault per few pages
    (a 100k-fact matrix: 150 MB, about as long as the product itself). Faulted in while
    the rest of the index opens (numpy drops the GIL for the loop), the first recall
    finds them mapped. Reading keeps the pages shared with other processes; the sum is
    thrown away.
    """
    if n:
        pages = mat[:n].reshape(-1)[:: max(1, mmap.PAGESIZE // mat.itemsize)]
        threading.Thread(target=np.add.reduce, args=(pages,), daemon=True).start()


def attach(log: Log, info: CheckpointInfo, index: FactIndex) -> bool:
    """Map checkpoint ``info``'s vectors into ``index`` (empty, same embedder); False if
    there is no matching, well-formed vector file (the caller embeds instead)."""
    d = vector_dir(log)
    if d is None:
        return False
    path = d / file_name(info)
    store = log.checkpoints
    if not store.fetch(path.name):
        return False
    store.fetch(quantindex.file_name(info.seq, info.checksum))  # none: coded on use
    h = read_header(path)
    emb = index.embedder
    if (
        h is None
        or h.get("seq") != info.seq
        or h.get("checksum") != info.checksum
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
        _warm(mat, n)
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
    quantindex.attach(d, info.seq, info.checksum, index.default)  # none: coded on use
    return True
