"""``JetStreamLog.verify``: what a check of the whole stream finds (never modifies it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .contract import VerifyReport
from .errors import InvalidEvent, SwarmlogError
from .jsproto import decode_payload

if TYPE_CHECKING:
    from .jsread import JsReader


def verify(log: JsReader) -> VerifyReport:
    """Gapless stream sequences from 1, every crc, no duplicate id, stream settings."""
    rep = VerifyReport()
    info = log._run(log._c.stream_info())
    if info is None:
        rep.problems.append(f"stream {log.stream} does not exist")
        return rep
    cfg, state = info["config"], info["state"]
    rep.segments = 1
    first, last = int(state.get("first_seq", 0)), int(state["last_seq"])
    if last and first != 1:
        rep.problems.append(f"stream starts at seq {first}, not 1 (events were removed)")
    if state.get("num_deleted"):
        rep.problems.append(f"{state['num_deleted']} messages were deleted (seq gaps)")
    for flag in ("deny_delete", "deny_purge"):
        if not cfg.get(flag):
            rep.notes.append(f"stream setting {flag} is off: events can be removed")
    ids: set[str] = set()
    nxt = 1
    try:
        for raws in log._read_raw(1, last):
            for r in raws:
                nxt = r.seq + 1
                try:
                    d = decode_payload(r.seq, r.data, r.ts)
                except InvalidEvent as e:
                    rep.problems.append(str(e))
                    continue
                if d["id"] in ids:
                    rep.problems.append(f"seq {r.seq}: duplicate event id {d['id']}")
                ids.add(d["id"])
                if r.subject and (why := log.subjects.misplaced(r.subject, d)):
                    bad = rep.notes if why.startswith("claims") else rep.problems
                    bad.append(f"seq {r.seq}: {why}")  # claims: a refused write (jsauth)
                rep.events += 1
    except SwarmlogError as e:
        rep.problems.append(str(e))
    rep.last_seq = nxt - 1 if rep.events else 0
    if rep.last_seq != last:
        rep.problems.append(f"read up to seq {rep.last_seq} of {last}")
    return rep
