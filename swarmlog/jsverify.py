"""``JetStreamLog.verify``: what a check of the whole stream finds (never modifies it).

Every seq from 1 to the last is served (a stored message, or the redaction record of an
erased one, jsside.py), every payload passes its crc, no id is stored twice, each message
sits on its key's subject, and the hash chain (jschain.py) links every record to the one
before; ``head`` is the last record's chain value, as FileLog's ``verify`` reports it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .chain import Walk
from .contract import VerifyReport
from .errors import InvalidEvent, SwarmlogError
from .jschain import line_of
from .jsproto import decode_payload, key_subject

if TYPE_CHECKING:
    from .jsread import JsReader


def verify(log: JsReader) -> VerifyReport:
    """Check the stream (see the module docstring)."""
    rep = VerifyReport()
    info = log._run(log._c.stream_info())
    if info is None:
        rep.problems.append(f"stream {log.stream} does not exist")
        return rep
    log._run(log._side.refresh())
    side = log._side
    cfg, state = info["config"], info["state"]
    rep.segments = 1
    last = int(state["last_seq"])
    if cfg.get("deny_delete"):
        rep.notes.append("stream setting deny_delete is on: its records cannot be erased")
    if not cfg.get("deny_purge"):
        rep.notes.append("stream setting deny_purge is off: events can be removed")
    ids: set[str] = set()
    walk = Walk()
    nxt = 1
    try:
        for raws in log._read_raw(1, last):
            lines = []
            for r in raws:
                nxt = r.seq + 1
                lines.append(line_of(r.seq, r.data))
                stand = side.get(r.seq)
                if stand is not None and stand is not r:
                    rep.notes.append(
                        f"seq {r.seq}: a redaction did not finish (the original is still "
                        "stored); run it again"
                    )
                try:
                    d = decode_payload(r.seq, r.data, r.ts)
                except InvalidEvent as e:
                    rep.problems.append(str(e))
                    continue
                if d["id"] in ids:
                    rep.problems.append(f"seq {r.seq}: duplicate event id {d['id']}")
                ids.add(d["id"])
                if r.subject and r.subject != key_subject(log.prefix, d.get("key")):
                    rep.problems.append(f"seq {r.seq}: stored on subject {r.subject}")
                rep.events += 1
            walk.feed(b"\n".join(lines) + b"\n", False)
    except SwarmlogError as e:
        rep.problems.append(str(e))
    rep.last_seq = nxt - 1 if rep.events else 0
    if rep.last_seq != last:
        rep.problems.append(f"read up to seq {rep.last_seq} of {last}")
    if walk.broken is not None:
        rep.problems.append(
            f"seq {walk.broken}: hash chain broken (this record or one before it was"
            " changed, inserted or removed after it was written)"
        )
    if walk.legacy:
        rep.notes.append(f"{walk.legacy} record(s) at the start predate the hash chain")
    if side.stale:
        rep.notes.append(f"{len(side.stale)} superseded redaction record(s) not yet erased")
    rep.head = walk.head.decode()
    rep.head_seq = walk.head_seq
    return rep
