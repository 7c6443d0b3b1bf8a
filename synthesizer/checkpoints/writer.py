"""Checkpoints written off the decision path: a forked child writes the frozen state.

Why: writing a checkpoint costs O(facts) (every fact encoded, every vector written; seconds
at 100k facts), and a worker that writes it inline decides nothing meanwhile: the tail of
the decision latency under a steady load was that pause. ``fork`` gives the child an
exact, frozen copy of the folded state and the vector index (copy-on-write pages: the
parent's cost is copying its page tables, a few ms), so the parent goes on deciding while
the child encodes and writes exactly what ``vectors.checkpoint`` would have written
inline at that seq: the same bytes, hence the same digest.

Crash safety is the store's: each file is written to a temporary name under a flock,
fsynced and renamed (``swarmlog.checkpoint``), so a child killed anywhere (kill -9)
leaves the previous checkpoint the newest complete one; its temporary file is cleaned by
the next save. A child that dies after the checkpoint's rename but before its vector file
leaves a checkpoint whose vectors a reader re-embeds (as after an inline crash there).

Only for a ``FileLog`` in a process that owns its threads (the CLI worker, ``worker/main.py``):
a JetStream log's connection lives in a thread that a child would not have, and an
in-memory log's checkpoints would be written into the child's memory. Elsewhere the
worker writes inline, as before.
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import time
from dataclasses import dataclass
from typing import Protocol

import orjson

import synthesizer.state.payload  # noqa: F401  (imported before any fork)
from swarmlog import CheckpointNotWritten, Log, SwarmlogError
from swarmlog.file import FileLog
from synthesizer.checkpoints import vectors
from synthesizer.checkpoints.save import ErasedSince
from synthesizer.config import SynthConfig
from synthesizer.heapfreeze import freeze_heap
from synthesizer.search import quantindex  # noqa: F401  (imported before any fork)
from synthesizer.search.factindex import FactIndex
from synthesizer.state import SwarmState

LOG = logging.getLogger("synthesizer.worker")
STALL_ENV = "SWARMLOG_TEST_CKPT_STALL"
"""Test hook: seconds a checkpoint child sleeps before writing anything (a window in
which a crash test kills it with a real SIGKILL; tests/test_ckptwriter.py)."""


DEFER_MAX = 4
"""A background checkpoint falling due while memories wait is put off to the first pass
that leaves none waiting, but no further than ``DEFER_MAX`` times its interval."""


@dataclass(frozen=True)
class Outcome:
    """How one background checkpoint ended: ``ok``, ``not_written``, ``erased`` (the log
    was redacted after the state was folded), ``failed`` (another error) or ``killed``."""

    kind: str
    seq: int
    message: str = ""


def can_fork(log: Log) -> bool:
    """Whether checkpoints of ``log`` may be written by a forked child (see module doc)."""
    return hasattr(os, "fork") and isinstance(log, FileLog)


def write_inline(log: Log, state: SwarmState, index: FactIndex) -> int:
    """Write the checkpoint of ``state`` with its side files here; return its seq."""
    return vectors.checkpoint(log, state, index).seq


def _child(log: Log, state: SwarmState, index: FactIndex, out: int) -> None:
    """The child's whole life: write, report one JSON line on ``out``, ``_exit``."""
    code = 0
    try:
        stall = os.environ.get(STALL_ENV)
        if stall:
            time.sleep(float(stall))
        try:
            seq = write_inline(log, state, index)
            msg = {"kind": "ok", "seq": seq}
        except CheckpointNotWritten as e:
            msg = {"kind": "not_written", "seq": state.last_seq, "message": str(e)}
        except ErasedSince as e:
            msg = {"kind": "erased", "seq": state.last_seq, "message": str(e)}
        except Exception as e:  # reported to the parent, which logs it
            msg = {"kind": "failed", "seq": state.last_seq, "message": f"{type(e).__name__}: {e}"}
        os.write(out, orjson.dumps(msg))
    except BaseException:
        code = 1
    finally:
        os._exit(code)  # no atexit handlers, no buffers of the parent flushed twice


class BackgroundCheckpoint:
    """At most one checkpoint child at a time: ``start`` it, ``poll`` or ``wait`` for it."""

    def __init__(self) -> None:
        self.pid = 0
        self._read = -1
        self._seq = 0
        self.started_at = 0.0
        self.fork_ms = 0.0
        """How long the last ``fork`` held the deciding thread (what a decision waited)."""

    @property
    def running(self) -> bool:
        """Whether a child is writing (or has not been collected yet)."""
        return self.pid > 0

    def start(self, log: Log, state: SwarmState, index: FactIndex) -> None:
        """Fork a child that writes the checkpoint of ``state`` (the parent returns at once)."""
        if self.running:
            raise RuntimeError("a background checkpoint is already running")
        r, w = os.pipe()
        t0 = time.perf_counter()
        freeze_heap()  # the child's collections never touch (copy) the parent's pages
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child: coverage does not follow it)
            os.close(r)
            try:  # the child's signals: a terminal's Ctrl-C goes to the parent's handler
                gc.disable()  # short-lived, ends in _exit: nothing to collect
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                os.nice(19)  # background work: the deciding parent and the agents go first
            finally:
                _child(log, state, index, w)
        self.fork_ms = (time.perf_counter() - t0) * 1000
        os.close(w)
        self.pid, self._read, self._seq = pid, r, state.last_seq
        self.started_at = time.monotonic()

    def poll(self) -> Outcome | None:
        """The outcome if the child has ended (it is collected then), else None."""
        if not self.running:
            return None
        pid, status = os.waitpid(self.pid, os.WNOHANG)
        if pid == 0:
            return None
        return self._collect(status)

    def wait(self) -> Outcome | None:
        """Wait for the running child, if any; its outcome."""
        if not self.running:
            return None
        _, status = os.waitpid(self.pid, 0)
        return self._collect(status)

    def _collect(self, status: int) -> Outcome:
        data = b""
        try:
            while chunk := os.read(self._read, 65536):
                data += chunk
        finally:
            os.close(self._read)
        seq = self._seq
        self.pid, self._read = 0, -1
        if os.WIFSIGNALED(status):
            sig = signal.Signals(os.WTERMSIG(status)).name
            return Outcome("killed", seq, f"checkpoint writer killed by {sig}")
        try:
            msg = orjson.loads(data)
            return Outcome(str(msg["kind"]), int(msg["seq"]), str(msg.get("message", "")))
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            code = os.waitstatus_to_exitcode(status)
            return Outcome("failed", seq, f"checkpoint writer exited {code}")


class CheckpointingWorker(Protocol):
    """What ``cadence`` reads and sets of the worker."""

    log: Log
    state: SwarmState
    index: FactIndex
    last_checkpoint: int
    background_checkpoints: bool
    bg_checkpoint: BackgroundCheckpoint

    @property
    def config(self) -> SynthConfig: ...

    def reload(self) -> None: ...

    def after_checkpoint(self) -> None: ...


def cadence(worker: CheckpointingWorker, force: bool, facts_per_event: int) -> bool:
    """The worker's periodic checkpoint (``Synthesizer.maybe_checkpoint``); True if one
    was written or started.

    Due every ``checkpoint_every`` events, and for a large state at most once per
    ``len(facts) // facts_per_event`` events. Why: writing one costs O(facts) (every fact
    encoded, the vectors written); scaled this way a checkpoint costs each event at most
    the encoding of ~20 facts, and replay after one stays a small fraction of a full one.
    With ``background_checkpoints`` on a FileLog a periodic one is written by a forked
    child and this returns at once (one child at a time; put off while memories wait:
    ``waiting``, ``DEFER_MAX``); a forced one waits for a running child, then writes
    inline.
    """
    settle(worker, wait=force)
    st = worker.state
    every = max(worker.config.synthesizer.checkpoint_every, len(st.facts) // facts_per_event)
    if not st.last_seq or not (force or st.last_seq - worker.last_checkpoint >= every):
        return False
    if not force and worker.background_checkpoints and can_fork(worker.log):
        if worker.bg_checkpoint.running:
            return False  # the next is due once this one is collected
        if st.last_seq - worker.last_checkpoint < DEFER_MAX * every and waiting(worker):
            return False  # the fork holds this thread: not while memories wait for it
        worker.bg_checkpoint.start(worker.log, st, worker.index)
        worker.last_checkpoint = st.last_seq
        return True
    try:
        write_inline(worker.log, st, worker.index)
    except CheckpointNotWritten as e:
        if force:
            raise
        LOG.warning("swarmlog: %s", e)  # a periodic one: the next is tried later
        worker.last_checkpoint = st.last_seq
        return False
    except ErasedSince:
        if force:
            raise
        worker.reload()  # records folded before an erasure: fold them anew
        return False
    worker.last_checkpoint = st.last_seq
    worker.after_checkpoint()
    return True


def waiting(worker: CheckpointingWorker) -> bool:
    """Whether memories wait for the worker: undecided in its state, or appended since.

    Why it matters: ``fork`` copies the worker's page tables while the deciding thread
    waits, 20-90 ms for a worker with MiniLM loaded on a busy machine (~200 MB of
    anonymous memory), and whatever waits then waits that much longer: forking at the
    end of a pass that left nothing waiting keeps that cost off the latency's tail."""
    st = worker.state
    if st.pending:
        return True
    try:
        return worker.log.last_seq > st.last_seq
    except (SwarmlogError, OSError):
        return False  # (the next append says what is wrong)


def settle(worker: CheckpointingWorker, wait: bool = False) -> Outcome | None:
    """Collect a background checkpoint that has ended (or wait for it) and act on it as
    on an inline one: compaction after success, a fresh fold after an erasure, a warning
    otherwise (the previous checkpoint stays; the next is tried at the next due point)."""
    bg = worker.bg_checkpoint
    done = bg.wait() if wait else bg.poll()
    if done is None:
        return None
    if done.kind == "ok":
        worker.after_checkpoint()
    elif done.kind == "erased":
        worker.reload()
    else:
        LOG.warning("swarmlog: background checkpoint at seq %d: %s", done.seq, done.message)
    return done


__all__ = [
    "DEFER_MAX",
    "STALL_ENV",
    "BackgroundCheckpoint",
    "CheckpointingWorker",
    "Outcome",
    "cadence",
    "can_fork",
    "settle",
    "waiting",
    "write_inline",
]
