"""``JetStreamLog.verify``: what a check of the whole stream finds (never modifies it).

Every seq from 1 to the last is served (a stored message, or the redaction record of an
erased one, side.py), every payload passes its crc, no id is stored twice, each message
sits on its key's subject, and every record's chain value, recomputed, matches the one in
the seal stream (seal/chain.py); ``head`` is the last sealed record's value, as FileLog's
``verify`` reports its last record's.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from swarmlog.chain import GENESIS
from swarmlog.contract import VerifyReport
from swarmlog.errors import InvalidEvent, SwarmlogError
from swarmlog.jetstream.proto import decode_payload
from swarmlog.jetstream.seal.chain import value_of
from swarmlog.jetstream.skip import UNKNOWN, why_skipped

if TYPE_CHECKING:
    from swarmlog.jetstream.client import Raw
    from swarmlog.jetstream.read import JsReader


def verify(log: JsReader) -> VerifyReport:
    """Check the stream (see the module docstring)."""
    rep = VerifyReport()
    info = log._run(log._c.stream_info())
    if info is None:
        rep.problems.append(f"stream {log.stream} does not exist")
        return rep
    log._run(log._seals.flush(), 3 * log.timeout + 12)
    seals = _seals(log, rep)
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
    mine: dict[int, bytes] = {}  # every record's chain value, recomputed
    prev = GENESIS
    nxt = 1
    try:
        for raws in log._read_raw(1, last):
            for r in raws:
                nxt = r.seq + 1
                stand = side.get(r.seq)
                if stand is not None and stand is not r:
                    rep.notes.append(
                        f"seq {r.seq}: a redaction did not finish (the original is still "
                        "stored); run it again"
                    )
                prev = mine[r.seq] = value_of(prev, r.seq, r.data)
                rep.events += 1
                try:
                    d = decode_payload(r.seq, r.data, r.ts)
                except InvalidEvent as e:  # a bad write, not damage: readers skip it
                    rep.notes.append(_skipped(log, r, str(e).partition(": ")[2] or str(e)))
                    continue
                if (why := why_skipped(log.subjects, r, d)) is not None:
                    rep.notes.append(_skipped(log, r, why))
                    continue
                if d["id"] in ids:
                    rep.problems.append(f"seq {r.seq}: duplicate event id {d['id']}")
                ids.add(d["id"])
                if r.subject and (why := log.subjects.misplaced(r.subject, d)):
                    rep.notes.append(f"seq {r.seq}: {why}")  # claims: a refused write (auth.py)
    except SwarmlogError as e:
        rep.problems.append(str(e))
    rep.last_seq = nxt - 1 if rep.events else 0
    if rep.last_seq != last:
        rep.problems.append(f"read up to seq {rep.last_seq} of {last}")
    rep.head_seq, head, broken = _walk(seals, mine, rep.last_seq, rep)
    unsealed = rep.last_seq - rep.head_seq if broken is None else 0
    if broken is not None:
        rep.problems.append(
            f"seq {broken}: hash chain broken (this record or one before it was"
            " changed, inserted or removed after it was sealed)"
        )
    if unsealed:
        rep.notes.append(
            f"{unsealed} record(s) at the end are not sealed into the hash chain yet "
            "(the holder of the seal lease seals them; an appending handle takes it over)"
        )
    if side.stale:
        rep.notes.append(f"{len(side.stale)} superseded redaction record(s) not yet erased")
    rep.head = head.decode()
    rep.chain_values = mine
    return rep


def _skipped(log: JsReader, r: Raw, why: str) -> str:
    """verify's note on a message readers skip (skip.py), naming its author."""
    who = log.subjects.author(r.subject) or UNKNOWN
    return f"seq {r.seq}: skipped by readers: {why} (published by agent {who!r} on {r.subject})"


Seal = tuple[int, int, list[bytes]]
"""(seal seq, first record, values) of one seal (swarmlog/jetstream/seal/chain.py)."""


def _walk(
    seals: list[Seal], mine: dict[int, bytes], last: int, rep: VerifyReport
) -> tuple[int, bytes, int | None]:
    """The sealed records checked against ``mine`` (the recomputed values): the last
    record sealed and matching, its value, and the first record that breaks the chain.

    Seals are taken in order, each continuing the chain where the one before ended. A seal
    that does not continue it, or whose values do not match while a later seal covers the
    same records again (an honest sealer skipped it: ``Sealer._tip_at``), is a forged seal:
    ignored and noted. A mismatch nothing re-sealed is a broken chain. Seals past
    ``last`` (sealed after this check read the stream) are not checked."""
    k, head, broken = 0, GENESIS, None
    for i, (sseq, first, vals) in enumerate(seals):
        if first > last:
            continue
        if not vals:
            rep.notes.append(f"seal {sseq} ignored: it holds no values")
            continue
        if first != k + 1:
            rep.notes.append(f"seal {sseq} ignored: starts at record {first}, the chain at {k + 1}")
            continue
        end = min(first + len(vals) - 1, last)
        bad = next((q for q in range(first, end + 1) if mine.get(q) != vals[q - first]), None)
        if bad is None:
            k, head = end, vals[end - first]
            continue
        if any(f == first for _, f, _ in seals[i + 1 :]):
            rep.notes.append(
                f"seal {sseq} ignored: its values do not match records {first}-{end} "
                "and a later seal covers them (a forged seal)"
            )
            continue
        broken = bad
        break
    return k, head, broken


def _seals(log: JsReader, rep: VerifyReport) -> list[Seal]:
    """The seal stream's seals; a seal stream that cannot be read (asked three times:
    its leader may be moving) is a problem, and the chain goes unchecked."""
    for attempt in range(3):
        try:
            seals, bad = log._run(log._sealer.seals(), 10 * log.timeout + 1)
            if bad:
                rep.notes.append(f"{bad} message(s) of the seal stream are not seals: ignored")
            return list(seals)
        except SwarmlogError as e:
            if attempt == 2:
                rep.problems.append(f"the seal stream cannot be read ({e}): chain not checked")
            time.sleep(0.5)
    return []
