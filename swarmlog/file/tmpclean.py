"""Temporary files of killed or failed writers: found and removed (issue 22, item 6).

Every atomic write of the log's own files (``archive.write_atomic``: archives, ids files,
``retention.json``, the redaction count) goes through ``.<name>.<pid>.tmp`` in the same
directory, renamed over ``<name>`` when complete. A process killed (or failing: disk
full) before the rename leaves the temporary behind, and an archive's or ids file's
temporary holds *records*: bytes a later ``forget`` must not miss. So:

* ``write_atomic`` removes its temporary when the write fails (disk full, any error);
* ``clean(root)`` removes the temporaries of processes that are gone (the pid in the
  name is not alive) in the root and in ``archive/``; every writing command runs it
  when it opens a log (dashboards/common.open_target), and ``compact`` and ``forget``
  (``Log.redact``) run it with ``locked=True`` under ``compact.lock``, which every
  writer of such files holds: then every temporary is stale, whatever its pid.
"""

from __future__ import annotations

import os
import re

_TMP = re.compile(r"^\..+\.(\d+)\.tmp$")
ARCHIVE = "archive"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's live process
    return True


def stale(root: str | os.PathLike[str], locked: bool = False) -> list[str]:
    """Paths of the temporaries under ``root`` and ``root/archive`` that a dead process
    left (all of them when ``locked``: the caller holds ``compact.lock``)."""
    out: list[str] = []
    for d in (os.fspath(root), os.path.join(os.fspath(root), ARCHIVE)):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            m = _TMP.match(name)
            if m is None:
                continue
            pid = int(m.group(1))
            if (locked and pid != os.getpid()) or not _alive(pid):
                out.append(os.path.join(d, name))
    return out


def clean(root: str | os.PathLike[str], locked: bool = False) -> int:
    """Remove ``stale(root, locked)``; returns how many (a file already gone counts not)."""
    n = 0
    for path in stale(root, locked):
        try:
            os.unlink(path)
            n += 1
        except FileNotFoundError:
            pass
        except OSError:
            pass  # (a read-only root: the next writer retries)
    return n


__all__ = ["clean", "stale"]
