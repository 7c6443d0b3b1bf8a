"""The synthesizer's single-writer lease, read from the log (docs/design.md, §3 and §5).

The lease is the log's ``synthesizer`` key. Its version, ``log.version(LEASE_KEY)``, is
the seq of the holder's last batch, which ends with a ``synth.progress`` mark naming the
holder (``worker``, its ``host`` and ``pid``) and when it took the lease (``since``). A
worker appends a batch only with ``expect={LEASE_KEY: version}``, so of two writers (or two
takers) only one wins; and it tries at all only when nobody holds the lease, it holds it
itself, the holder released it, the holder's process is gone (same host, no such pid), or
the holder's last batch is older than the lease timeout (then it takes over).

A worker's name defaults to ``host:pid``: the workers of one process are one holder.
Each mark also names the lexicon the merge rule decided with (``lexicon_identity``): a
worker whose lexicon differs from the holder's last mark does not take the lease (two
lexicons are two rules: the same pair would be decided two ways), unless told to
(``accept_lexicon``, or ``SWARMLOG_ACCEPT_LEXICON=1``); its marks then record its own.
Time here is the wall clock against the log's ``ts`` of the holder's last batch: the
worker is not the fold, and this choice changes who writes, never what is decided.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from swarmlog import Event, Log, VersionConflict
from swarmlog.sidefile import alive
from synthesizer import events as T
from synthesizer.merge.lexicon import lexicon_identity

LEASE_KEY = "synthesizer"
"""The CAS key every synthesizer batch expects (= ``events.SYNTH_AGENT``)."""


def default_worker_name() -> str:
    """This process's name in the lease: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _gone(host: str | None, pid: int | None) -> bool:
    """True when ``pid`` on this host is provably not running (another host: unknown)."""
    if host != socket.gethostname() or pid is None:
        return False
    return not alive(pid)  # (this process and another user's count as alive)


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


@dataclass(frozen=True)
class Holder:
    """Who holds the lease, as its last batch says.

    ``worker`` is None for a mark that names no worker (written before marks named
    their writer); ``since`` is when it took the lease, ``last_ts`` its last batch's time
    (both the log's ``ts``), ``version`` that batch's seq.
    """

    worker: str | None
    since: float
    last_ts: float
    version: int
    released: bool
    host: str | None = None
    pid: int | None = None
    lexicon: str | None = None

    def describe(self) -> str:
        """One line for an operator: who, since when, last batch."""
        who = self.worker or "an unnamed synthesizer"
        if self.released:
            return f"{who} released the lease at seq {self.version}"
        return (
            f"{who} holds the lease since {_when(self.since)} "
            f"(last batch at seq {self.version}, {_when(self.last_ts)})"
        )


def _genuine(ev: Event) -> bool:
    """A mark from a synthesizer batch (agent and lease stamp, as ``authz`` requires)."""
    return ev.agent == T.SYNTH_AGENT and ev.type == T.SYNTH_PROGRESS and "lease" in ev.body


class Lease:
    """One worker's view of the lease: the version it has folded and whether it may write."""

    def __init__(
        self,
        log: Log,
        timeout_s: float,
        name: str | None = None,
        *,
        lexicon: str | None = None,
        accept_lexicon: bool | None = None,
    ) -> None:
        if not timeout_s > 0:
            raise ValueError(f"lease timeout must be > 0 s, got {timeout_s}")
        self.log = log
        self.timeout_s = timeout_s
        self.worker = name if name is not None else default_worker_name()
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.version = 0
        """Lease version this worker has folded: the seq of the last batch on the key."""
        self.since: float | None = None
        """When this worker took the lease (log ts), or None while it does not hold it."""
        self._holder: tuple[int, Holder | None] = (-1, None)
        self.lexicon = lexicon if lexicon is not None else lexicon_identity()
        """The lexicon this worker's rule decides with (recorded in its marks)."""
        if accept_lexicon is None:
            accept_lexicon = os.environ.get("SWARMLOG_ACCEPT_LEXICON", "") == "1"
        self.accept_lexicon = accept_lexicon

    def lexicon_conflict(self) -> str | None:
        """One line when the holder's last mark names another lexicon than this worker's
        (and this worker was not told to proceed), else None."""
        h = self.holder()
        if h is None or not h.lexicon or h.lexicon == self.lexicon or self.accept_lexicon:
            return None
        return (
            f"the swarm's verdicts were decided with lexicon {h.lexicon}, this worker has "
            f"{self.lexicon}: not taking the lease (SWARMLOG_ACCEPT_LEXICON=1 proceeds and "
            "records this one)"
        )

    def holder(self) -> Holder | None:
        """The holder at ``version`` (None when no batch was ever written), read once."""
        v = self.version
        if self._holder[0] != v:
            h = None
            if v:
                ev = next(iter(self.log.read(v, v)), None)
                if ev is not None and not _genuine(ev):
                    # a write the fold refuses (authz) moved the key: it holds nothing
                    h = Holder(None, ev.ts, ev.ts, v, True)
                elif ev is not None:
                    b = ev.body if ev.type == T.SYNTH_PROGRESS else {}
                    since = b.get("since")
                    h = Holder(
                        b.get("worker"),
                        float(since) if since is not None else ev.ts,
                        ev.ts,
                        v,
                        bool(b.get("released", False)),
                        b.get("host"),
                        b.get("pid"),
                        b.get("lexicon"),
                    )
            self._holder = (v, h)
        return self._holder[1]

    def observe(self, version: int) -> None:
        """The lease version this worker has now folded (a tenure ends if another holds it)."""
        self.version = version
        if self.since is not None and not self.holds():
            self.since = None

    def holds(self) -> bool:
        """True when this worker's own mark is the lease's last batch."""
        h = self.holder()
        return h is not None and h.worker == self.worker and not h.released

    def may_write(self, now: float | None = None) -> bool:
        """True when a batch from this worker may win: free, ours, released, the holder's
        process gone, or its last batch older than the timeout."""
        if self.lexicon_conflict() is not None:
            return False
        h = self.holder()
        if h is None or h.released or h.worker == self.worker or _gone(h.host, h.pid):
            return True
        now = time.time() if now is None else now
        return now - h.last_ts >= self.timeout_s

    def why_free(self) -> str:
        """Why the lease may be taken from its holder now (for the takeover message)."""
        h = self.holder()
        if h is None or h.released or h.worker == self.worker:
            return "free"
        if _gone(h.host, h.pid):
            return f"its process {h.pid} on {h.host} is gone"
        return f"no batch for {time.time() - h.last_ts:.1f} s (timeout {self.timeout_s:g} s)"

    def retake_in(self, now: float | None = None) -> float:
        """Seconds until the holder's lease times out (0 when it may be taken now)."""
        h = self.holder()
        if h is None or self.may_write(now) or self.lexicon_conflict() is not None:
            return 0.0
        now = time.time() if now is None else now
        return max(0.0, self.timeout_s - (now - h.last_ts))

    def mark(self, upto: int, released: bool = False) -> Event:
        """The ``synth.progress`` event that ends a batch: progress, holder, tenure."""
        body: dict[str, object] = {
            "upto": upto,
            "worker": self.worker,
            "host": self.host,
            "pid": self.pid,
            "lexicon": self.lexicon,
        }
        if self.since is not None and not released:  # (a released lease has no tenure)
            body["since"] = self.since
        if released:
            body["released"] = True
        body["lease"] = self.version  # the version it is appended under (authz checks it)
        return Event(agent=T.SYNTH_AGENT, type=T.SYNTH_PROGRESS, key=LEASE_KEY, body=body)

    def won(self, stored_mark: Event) -> None:
        """Our batch landed: its mark is the new version; a first batch starts the tenure."""
        self.version = v = stored_mark.seq or self.version
        if self.since is None:
            self.since = stored_mark.ts
        h = Holder(
            self.worker, self.since, stored_mark.ts, v, False, self.host, self.pid, self.lexicon
        )
        self._holder = (v, h)

    def lost(self) -> None:
        """Another worker wrote first: it holds the lease; the version is learnt again."""
        self.since = None
        self._holder = (-1, None)

    def release(self, upto: int) -> bool:
        """Give the lease up (a clean stop), so the next worker need not wait for the timeout.

        Appends one released mark, only if this worker holds the lease; returns whether it
        did. A lost race (someone took over) is not an error: the lease is theirs anyway.
        """
        if not self.holds():
            return False
        try:
            mark = self.mark(upto, released=True)
            stored = self.log.append(mark, expect={LEASE_KEY: self.version})
        except VersionConflict:
            self.since = None
            return False
        self.version = stored.seq or self.version
        self.since = None
        self._holder = (-1, None)
        return True


__all__ = ["LEASE_KEY", "Holder", "Lease", "default_worker_name"]
