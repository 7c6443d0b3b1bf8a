"""``FileLog.verify``'s check of one segment, and the valid prefix when it is corrupt.

Why apart: a corrupt record raises out of the chunked scan, losing the count of the
good records of its chunk, so verify used to say "0 events, last seq 0" of a log whose
first seqs were fine. Here the records before the bad one are counted again (whole
batches only: a batch is atomic), so the report gives the valid prefix and the place
of the corruption (segment, byte offset, seq).
"""

from __future__ import annotations

from swarmlog.contract import VerifyReport
from swarmlog.errors import CorruptionError
from swarmlog.file import segment as seg


def check_segment(
    fd: int, size: int, nxt: int, name: str, ids: set[str], rep: VerifyReport, last: bool
) -> int | None:
    """Check one segment from seq ``nxt``; return the next expected seq, or None when it
    is corrupt (``rep`` then holds the valid prefix and ``rep.corruption``)."""
    start, counted = nxt, rep.events
    try:
        sc = None
        for records, sc in seg.read_records(fd, 0, size, nxt, name):
            for d in records:
                if d["id"] in ids:
                    rep.problems.append(f"seq {d['seq']}: duplicate event id {d['id']}")
                ids.add(d["id"])
            if records:
                nxt = records[-1]["seq"] + 1
                rep.events += len(records)
        if sc is not None and sc.end < size:
            msg = (
                f"{name}: torn final record at byte {sc.end} ({size - sc.end} bytes, "
                f"{sc.torn}); the next append cuts it off"
            )
            (rep.notes if last else rep.problems).append(msg)
        return nxt
    except CorruptionError as e:
        rep.problems.append(str(e))
        rep.events, nxt = counted, start
        try:
            for records, _ in seg.read_records(fd, 0, e.offset, start, name):
                if records:
                    nxt = records[-1]["seq"] + 1
                    rep.events += len(records)
        except CorruptionError:  # (cannot happen: everything before e.offset scanned well)
            pass
        rep.last_seq = nxt - 1
        rep.corruption = {"segment": name, "offset": e.offset, "seq": e.seq}
        return None


__all__ = ["check_segment"]
