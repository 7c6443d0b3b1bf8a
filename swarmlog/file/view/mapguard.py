"""Survive a mapped file cut under a live writer (SIGBUS), instead of dying of it.

FileLog maps two files beside the segments for writers to share: ``index`` (the shared
writer index) and ``combine`` (the slots of flat combining). A page of a shared mapping
past the end of its file is SIGBUS on the first touch, so a ``truncate`` of either file
under live writers killed them all. Checking the size before touching the mapping is
done where a mapping is (re)loaded (``WriterIndex.retired``, ``Slots.open``), but it
cannot close the gap: the file may be cut just after the check, in the middle of an
append, and a check before every access would cost a syscall each on the append path.

So a process that maps such a file also installs a SIGBUS handler (``guard``). A fault
inside a guarded mapping *extends the file back* to the size it was mapped at (the kernel
fills the cut part with zeros, and the touch, retried, succeeds) and runs the mapping's
``on_cut``: the index's zeroes its magic (so that every writer rebuilds it from the
segments instead of trusting a half-zeroed table) and raises ``CUT``, which the segment
write checks before it writes (``check_cut``): an append whose index lookups may have read
zeros fails with ``LogUnavailable``, having written nothing, and its retry rebuilds the
index. Zeroed ``combine`` slots are free slots: a post lost with them is appended by its
own writer (its id is looked up first, so never twice). A fault anywhere else is not
ours: the previous handler is put back and the touch, retried, meets it.

Linux only (``ctypes`` and ``sigaction``); elsewhere ``guard`` does nothing. The handler
runs Python code (a ctypes callback) in the faulting thread, which holds the GIL while it
touches the mapping; it only looks up the address, calls ``ftruncate`` and stores 8 zero
bytes.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import signal
import sys
from collections.abc import Callable

from swarmlog.errors import LogUnavailable

CUT = [0]
"""Raised (1) when a guarded index mapping was cut and healed in this process; cleared by
``check_cut`` (which fails the append that sees it) and by an index rebuild."""

_ADDR_AT = 16 if ctypes.sizeof(ctypes.c_void_p) == 8 else 12  # siginfo_t's si_addr
_SA_SIGINFO = 4


class _SigAction(ctypes.Structure):
    """glibc's ``struct sigaction`` (Linux): handler, 1024-bit mask, flags, restorer."""

    _fields_ = [
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * (128 // ctypes.sizeof(ctypes.c_ulong))),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    ]


_Handler = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)

_guarded: dict[int, tuple[int, int, int, Callable[[int], None] | None]] = {}
"""Start address -> (length, fd, size to extend back to, on_cut(start))."""
_state: dict[str, object] = {}


def _on_sigbus(signum: int, info: int | None, ctx: int | None) -> None:
    """The SIGBUS handler (see module docstring)."""
    addr = ctypes.c_void_p.from_address(info + _ADDR_AT).value if info else None
    if addr is not None:
        for start, (n, fd, size, on_cut) in list(_guarded.items()):
            if start <= addr < start + n:
                try:
                    if os.fstat(fd).st_size >= size:
                        break  # (not cut: no page to be had, e.g. a full tmpfs; not healable)
                    try:  # (blocks too where the disk has them: no later fault on a hole)
                        os.posix_fallocate(fd, 0, size)
                    except OSError:
                        os.ftruncate(fd, size)
                except OSError:
                    break
                if on_cut is not None:
                    on_cut(start)
                return
    _restore()  # not ours, or not healable: the previous handler meets the retried touch


def _restore() -> None:
    prev = _state.get("prev")
    libc = _state.get("libc")
    if isinstance(prev, _SigAction) and libc is not None:
        libc.sigaction(signal.SIGBUS, ctypes.byref(prev), None)  # type: ignore[attr-defined]
    _state["installed"] = False  # (installed again by the next ``guard``)


def _install() -> bool:
    """Install the handler in this process, once (a forked child inherits it)."""
    if _state.get("installed") or _state.get("failed"):
        return bool(_state.get("installed"))
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        cb = _Handler(_on_sigbus)
        act, prev = _SigAction(), _SigAction()
        act.handler = ctypes.cast(cb, ctypes.c_void_p).value
        act.flags = _SA_SIGINFO
        if libc.sigaction(signal.SIGBUS, ctypes.byref(act), ctypes.byref(prev)) != 0:
            raise OSError(ctypes.get_errno(), "sigaction")
    except (OSError, AttributeError):
        _state["failed"] = True  # (no guard here: a cut file is SIGBUS, as before)
        return False
    _state.update(installed=True, prev=prev, libc=libc, cb=cb)
    return True


def guard(m: mmap.mmap, fd: int, on_cut: Callable[[int], None] | None = None) -> int:
    """Heal a fault in the writable shared mapping ``m`` of ``fd`` (see module docstring):
    the file is extended back to ``len(m)`` and ``on_cut(start address)`` runs. Returns the
    key for ``unguard`` (0: not guarded, off Linux)."""
    if not sys.platform.startswith("linux") or not _install():
        return 0
    probe = (ctypes.c_char * 1).from_buffer(m)
    start = ctypes.addressof(probe)
    del probe  # (no export left on the mapping: it can be closed)
    _guarded[start] = (len(m), fd, len(m), on_cut)
    return start


def unguard(key: int) -> None:
    """Forget a mapping before it is closed (its address and fd may be reused)."""
    _guarded.pop(key, None)


def zero_magic(start: int) -> None:
    """``on_cut`` of an index mapping: its magic zeroed and its ``retired`` word set
    (every handle reopens it and finds it untrusted: rebuilt from the segments), and
    ``CUT`` raised for the append in flight (``check_cut``)."""
    ctypes.memset(start, 0, 8)
    ctypes.c_uint64.from_address(start + 16).value = 1
    CUT[0] = 1


def check_cut() -> None:
    """Before a segment write: fail the append if an index mapping was cut and healed
    since the index was last rebuilt (its lookups may have read zeros)."""
    if CUT[0]:
        CUT[0] = 0
        raise LogUnavailable(
            "the writer index was cut under this append; nothing written (try again)"
        )
