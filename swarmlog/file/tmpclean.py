"""Temporary files of killed or failed writers: found and removed (docs/faults.md).

Every atomic write of the log's own files (``archive.write_atomic``: archives, ids files,
``retention.json``, the redaction count, the seals) goes through ``.<name>.<pid>.tmp`` in the same
directory, renamed over ``<name>`` when complete. A process killed (or failing: disk
full) before the rename leaves the temporary behind, and an archive's or ids file's
temporary holds *records*: bytes a later ``forget`` must not miss. So:

* ``write_atomic`` removes its temporary when the write fails (disk full, any error);
* ``clean(root)`` removes the temporaries of processes that are gone (the pid in the
  name is not alive) in the root and in ``archive/``; every writing command runs it
  when it opens a log (dashboards/common.open_target), and ``compact`` and ``forget``
  (``Log.redact``) run it with ``locked=True`` under ``compact.lock``: then the
  temporaries of the files only a holder of that lock writes (everything in
  ``archive/``, and ``LOCKED`` in the root) are stale whatever their pid. A redaction
  also holds the append lock (``appending=True``), under which the writer index is
  grown or rebuilt (``APPENDING``): its temporaries are stale then too. Other
  temporaries of a live process stay: a compaction, beside appends but not holding
  their lock, once removed a growing index's ``.index.<pid>.tmp`` and failed the
  append that grew it ("index: No such file or directory"; tests/test_compact_tmp.py).

Whether a pid is alive: ``sidefile.alive``, which the checkpoint store's cleaner asks too.
"""

from __future__ import annotations

import os
import re

from swarmlog.sidefile import alive

_TMP = re.compile(r"^\.(.+)\.(\d+)\.tmp$")
ARCHIVE = "archive"
LOCKED = ("retention.json", "redactions", "seals")
"""The root's files written only under ``compact.lock`` (archive.MANIFEST, redact.COUNT_FILE,
anchors.SEALS; named here, not imported: those modules import this one)."""
APPENDING = ("index",)
"""The root's files written only under the append lock (view/writerindex.py ``NAME``)."""


def stale(root: str | os.PathLike[str], locked: bool = False, appending: bool = False) -> list[str]:
    """Paths of the temporaries under ``root`` and ``root/archive`` that a dead process
    left; also, those of another live process whose file only a holder of a lock the
    caller holds writes: ``compact.lock`` (``locked``), the append lock too
    (``appending``; module docstring)."""
    out: list[str] = []
    top = os.fspath(root)
    held = (LOCKED if locked else ()) + (APPENDING if appending else ())
    for d in (top, os.path.join(top, ARCHIVE)):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            m = _TMP.match(name)
            if m is None:
                continue
            pid = int(m.group(2))
            ours = pid != os.getpid() and (m.group(1) in held or (locked and d != top))
            if ours or not alive(pid):
                out.append(os.path.join(d, name))
    return out


def clean(root: str | os.PathLike[str], locked: bool = False, appending: bool = False) -> int:
    """Remove ``stale(root, locked, appending)``; returns how many (a file already gone
    counts not)."""
    n = 0
    for path in stale(root, locked, appending):
        try:
            os.unlink(path)
            n += 1
        except FileNotFoundError:
            pass
        except OSError:
            pass  # (a read-only root: the next writer retries)
    return n


__all__ = ["clean", "stale"]
