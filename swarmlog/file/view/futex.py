"""Linux futexes on a shared mapped file: sleep until a word changes, wake its sleepers.

Why (view/combine.py): under ``durability="fsync"`` a writer whose record a combiner
appended must also wait until an fdatasync covers it. The combiner syncs its whole
batch anyway, so it tells each of its writers when that sync is done, in the writer's
slot, and wakes exactly that writer: one sleep per durable append instead of the group
commit's two (flock sleeps, each waking on cold caches; docs/benchmarks.md, session 7).

The words live in a ``MAP_SHARED`` file mapping, so the futexes are the kernel's shared
kind (no ``FUTEX_PRIVATE_FLAG``): a sleeper in one process is woken from another. Only
the futex system call is needed, through ``ctypes`` (``syscall(2)``), so this works where
Linux and a known system call number are at hand (x86-64, AArch64); elsewhere
``available()`` is False and the caller waits otherwise. A sleep always has a timeout:
a waker that died only delays its sleeper.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import sys
from collections.abc import Callable
from typing import Any

_SYS_FUTEX = {"x86_64": 202, "aarch64": 98, "arm64": 98}.get(platform.machine())
_WAIT, _WAKE = 0, 1  # FUTEX_WAIT, FUTEX_WAKE (shared: no FUTEX_PRIVATE_FLAG)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def _libc_syscall() -> Callable[..., Any] | None:
    if not sys.platform.startswith("linux") or _SYS_FUTEX is None:
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_long
    return fn


_syscall = _libc_syscall()


def available() -> bool:
    """Whether futexes can be used in this process (Linux with a known syscall number)."""
    return _syscall is not None


class Words:
    """The 32-bit futex words of one shared mapping, addressed by byte offset."""

    def __init__(self, m: mmap.mmap) -> None:
        self._anchor: Any = ctypes.c_char.from_buffer(m)  # (pins the mapping's address)
        self.base = ctypes.addressof(self._anchor)

    def release(self) -> None:
        """Drop the pin on the mapping (before it is closed)."""
        self._anchor = None

    def wait(self, off: int, expected: int, timeout_us: int) -> None:
        """Sleep while the u32 at ``off`` holds ``expected``, at most ``timeout_us``
        (at once if it differs already; a signal or a spurious wake returns too: the
        caller looks again)."""
        assert _syscall is not None
        ts = _Timespec(timeout_us // 1_000_000, (timeout_us % 1_000_000) * 1000)
        _syscall(
            _SYS_FUTEX,
            ctypes.c_void_p(self.base + off),
            _WAIT,
            ctypes.c_uint32(expected & 0xFFFFFFFF),
            ctypes.byref(ts),
            None,
            0,
        )

    def wake(self, off: int, n: int = 1) -> None:
        """Wake up to ``n`` sleepers on the u32 at ``off`` (none asleep: nothing happens)."""
        assert _syscall is not None
        _syscall(_SYS_FUTEX, ctypes.c_void_p(self.base + off), _WAKE, n, None, None, 0)


__all__ = ["Words", "available"]
