"""Unfinished erasures: a forget request whose rewrite did not complete.

``swarmlog forget`` appends its request (``identity.forgotten`` / ``memstore.forgotten``)
before it rewrites anything. Killed (or stopped by a full disk) after that, the log is
consistent and verifies, yet records still hold the identity's words, and so may
checkpoints written before the request. ``unfinished`` re-plans each requested identity
(forget.plan, up to its latest request) and reports the requests that still have records
to rewrite or checkpoints to drop, with the command that finishes the job (running the
same forget again resumes it: the request is reused). ``swarmlog verify`` prints them as
notes. One pass over the log finds the requests, then one per distinct identity.
"""

from __future__ import annotations

import shlex

import orjson

from swarmlog import Log
from swarmlog.file import RetentionError
from swarmlog.redaction import kind_of
from synthesizer import events as T
from synthesizer import seedvocab as FE
from synthesizer.forget.erase import ForgetError, Identity, plan
from synthesizer.forget.redactions import requested

_INTENTS = frozenset((T.IDENTITY_FORGOTTEN, FE.STORE_FORGOTTEN))


def command(ident: Identity, writer: str) -> str:
    """The ``swarmlog forget`` command line that (re)runs the erasure of ``ident``."""
    args = ["swarmlog", "forget"]
    if ident.ns is not None:
        try:
            parts = orjson.loads(ident.ns)
        except orjson.JSONDecodeError:
            parts = []
        for flag, v in zip(("--tenant", "--principal", "--conversation"), parts, strict=False):
            if isinstance(v, str):
                args += [flag, v]
    else:
        for what in ("agent", "session", "thread"):
            v = getattr(ident, what)
            if v is not None:
                args += [f"--{what}", v]
    args += ["--as", writer]
    return shlex.join(args)


def unfinished(log: Log) -> list[str]:
    """One line per forget request whose erasure is not complete (empty: none)."""
    latest: dict[tuple[Identity, str], int] = {}
    try:
        for batch in log.read_batches(1):
            for d in batch:
                if d["type"] in _INTENTS and kind_of(d) is None:
                    ident = requested(d)
                    if ident is not None:
                        latest[(ident, d["agent"])] = d["seq"]
    except RetentionError:
        return []  # (history deleted: redactions.py notes that nothing is judged)
    if not latest:
        return []
    ckpts = [i.seq for i in log.checkpoints.list()]
    out: list[str] = []
    for (ident, writer), seq in sorted(latest.items(), key=lambda kv: kv[1]):
        try:
            p = plan(log, ident, upto=seq, writer=writer)
        except ForgetError:
            continue
        left = len(p.own) + len(p.derived) + len(p.chosen.seqs() - p.own.keys() - p.derived.keys())
        stale = [c for c in ckpts if p.first and p.first <= c < seq]
        if not left and not stale:
            continue
        what = []
        if left:
            what.append(f"{left} record(s) still hold its words, ids or keys")
        if stale:
            what.append(f"{len(stale)} checkpoint(s) from before the request remain")
        out.append(
            f"unfinished erasure of {ident.describe()} requested at seq {seq}"
            f" ({'; '.join(what)}): run `{command(ident, writer)}` to finish it"
        )
    return out


__all__ = ["command", "unfinished"]
