"""Anchors kept outside the root: ``verify --expect SEQ:HASH`` (tamper evidence).

The hash chain (chain.py) makes every record commit to all before it, but an attacker who
can write the root can re-chain the whole log: ``verify`` then passes with a new head.
What defeats that is a chain value the operator kept *elsewhere* (``verify --anchor``
prints one; docs/trust.md shows a cron line that keeps one per checkpoint): the log
verifies *and* the record at that seq still carries that value, so the history up to it
is the one anchored. ``chain_at`` reads the stored value at a seq from a FileLog's
segments or archives, or a MemoryLog's records; on JetStream (no value in the records:
they live in the seal stream) the value ``verify`` recomputed from the stored records
and checked against the seals (``VerifyReport.chain_values``, swarmlog/jetstream/verify.py).
"""

from __future__ import annotations

import bisect
import hashlib
import os
import re
from typing import Any

import orjson

from swarmlog.chain import stored
from swarmlog.contract import VerifyReport
from swarmlog.errors import SwarmlogError
from swarmlog.file import archive, lockfile
from swarmlog.file import segment as seg
from swarmlog.file.fsguard import read_nofollow

_ANCHOR = re.compile(r"^(\d+):([0-9a-f]{32})$")


def parse(text: str) -> tuple[int, str]:
    """``SEQ:HASH`` -> (seq, hash); SwarmlogError (one line) otherwise."""
    m = _ANCHOR.match(text.strip())
    if m is None or int(m.group(1)) < 1:
        raise SwarmlogError(
            f"--expect {text!r}: give SEQ:HASH, the seq and the 32-hex chain value"
            " that 'swarmlog verify --anchor' printed"
        )
    return int(m.group(1)), m.group(2)


def _line_in(data: bytes, seq: int) -> bytes | None:
    start = b'{"seq":%d,' % seq
    for line in data.split(b"\n"):
        if line.startswith(start):
            return line
    return None


def _file_line(log: Any, seq: int) -> bytes | None:
    root = os.fspath(log.root)
    firsts = seg.list_segments(log.segdir)
    if firsts and seq >= firsts[0]:
        i = bisect.bisect_right(firsts, seq) - 1
        with open(os.path.join(log.segdir, seg.segment_name(firsts[i])), "rb") as f:
            return _line_in(f.read(), seq)
    for ent in archive.load(root).entries:
        if ent.first <= seq <= ent.last:
            if not ent.archived:
                return None
            return _line_in(archive.archived_bytes(root, ent), seq)
    return None


def chain_at(log: Any, seq: int, rep: VerifyReport | None = None) -> str | None:
    """The chain value stored in the record at ``seq`` (None: no such record, or it has
    none). FileLog and MemoryLog; JetStream from ``rep`` (its ``verify``'s report);
    other backends: SwarmlogError."""
    if rep is not None and rep.chain_values is not None:
        v = rep.chain_values.get(seq)
        return None if v is None else v.decode()
    if hasattr(log, "segdir") and hasattr(log, "root"):
        line = _file_line(log, seq)
    elif hasattr(log, "_shared") and hasattr(log._shared, "records"):
        recs = log._shared.records
        line = recs[seq - 1].rstrip(b"\n") if 0 < seq <= len(recs) else None
    else:
        raise SwarmlogError("verify --expect: this backend cannot read a record's chain value")
    if line is None:
        return None
    parts = stored(line)
    return None if parts is None else parts[1].decode()


def check(log: Any, seq: int, want: str, rep: VerifyReport | None = None) -> str | None:
    """A problem line when the record at ``seq`` does not carry chain value ``want``
    (``rep``: the log's verify report, needed on JetStream)."""
    got = chain_at(log, seq, rep)
    if got == want:
        return None
    if got is None:
        return f"anchor seq {seq}: no chained record at that seq (deleted, or past the end)"
    return (
        f"anchor seq {seq}: chain value {got}, expected {want}: the history up to seq"
        f" {seq} is not the one anchored (rewritten, or re-chained)"
    )


SEALS = "seals"
"""The root's file of keyed seals (``seal``): one JSON line each."""


def _mac(key: bytes, seq: int, value: str) -> str:
    doc = f"seal|{seq}|{value}".encode()
    h = hashlib.blake2b(doc, digest_size=16, key=key, person=b"swarmlog-seal")
    return archive.KEYED + h.hexdigest()


def seal(log: Any, rep: VerifyReport, key: bytes) -> str:
    """Append a keyed seal of the verified head (``rep``) to the root's ``seals`` file
    (rewritten atomically, under ``compact.lock``); the line, for the caller to print. A
    seal is an anchor kept *inside* the root that nobody without the key can forge:
    ``verify --key`` fails unless the record at its seq still carries its chain value.

    Why the lock: the file is read, extended and renamed over; two sealers at once
    would each rename their own copy, and one seal would be lost. Compactions and
    erasures hold the same lock (and so may remove a dead sealer's temporary:
    ``tmpclean.LOCKED``)."""
    root = os.fspath(log.root)
    line = orjson.dumps(
        {"seq": rep.head_seq, "chain": rep.head, "mac": _mac(key, rep.head_seq, rep.head)}
    )
    with lockfile.operator_lock(root):
        try:
            old = read_nofollow(os.path.join(root, SEALS))
        except FileNotFoundError:
            old = b""
        archive.write_atomic(root, SEALS, old + line + b"\n")
    return line.decode()


def keyed(log: Any, rep: VerifyReport, key: bytes) -> tuple[list[str], list[str]]:
    """``verify --key`` on a FileLog: (problems, notes). Every retention manifest entry
    must carry a keyed link (chainwalk.py checked the links themselves), every seal its
    mac and still hold (the record at its seq carries its chain value), and the key
    file must not be under the root."""
    if not (hasattr(log, "segdir") and hasattr(log, "root")):
        raise SwarmlogError("verify --key: only a FileLog keeps keyed links and seals")
    root = os.fspath(log.root)
    problems: list[str] = []
    path = os.environ.get(archive.KEY_FILE_ENV)
    if path and os.path.realpath(path).startswith(os.path.realpath(root) + os.sep):
        problems.append(
            f"the chain key file {path} is under the root: whoever can write the root"
            " can read it (keep it elsewhere)"
        )
    try:
        entries = archive.load(root).entries
    except SwarmlogError:
        entries = []  # (verify reported it)
    problems += [
        f"retention manifest: the entry for seqs {e.first}..{e.last} is not keyed (written"
        " without the chain key, or by someone who does not hold it)"
        for e in entries
        if not e.link.startswith(archive.KEYED)
    ]
    try:
        raw = read_nofollow(os.path.join(root, SEALS))
    except FileNotFoundError:
        raw = b""
    n = 0
    for i, text in enumerate(raw.splitlines(), 1):
        try:
            d = orjson.loads(text)
            seq, value, mac = int(d["seq"]), str(d["chain"]), str(d["mac"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            problems.append(f"{SEALS} line {i}: not a seal")
            continue
        if mac != _mac(key, seq, value):
            problems.append(f"{SEALS} line {i}: its mac does not match (forged, or another key)")
            continue
        why = check(log, seq, value, rep)
        if why is not None:
            problems.append(
                why.replace("anchor seq", "seal at seq", 1).replace("anchored", "sealed")
            )
        n += 1
    notes = [f"keyed: {len(entries)} manifest entr(y/ies), {n} seal(s) checked"]
    if not n:
        notes.append("keyed: nothing past the manifest is sealed yet (verify --key --seal)")
    return problems, notes


__all__ = ["SEALS", "chain_at", "check", "keyed", "parse", "seal"]
