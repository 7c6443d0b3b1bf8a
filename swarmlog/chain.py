"""The hash chain: each record commits to every record before it (tamper evidence).

A record's ``chain`` member (just before ``crc``) is the hex of a 16-byte BLAKE2b of the
previous record's ``chain`` value (ASCII hex; empty before the first record) followed by
the record's own bytes up to its ``,"chain":`` separator. Editing a record (even with
a recomputed CRC) changes its chain value, so the next record no longer matches; deleting
a record breaks the next one's link. ``head`` (the last record's chain value) is the
anchor an operator keeps elsewhere: a log whose records up to that seq still chain to
the same head has not changed before it.

Checked by ``verify`` and by the writer when it links a new record, never on reads.

A redacted record (redaction.py: a tombstone or a scrubbed body, marked by its last
member before ``chain``) keeps the chain value of the original it replaced, and the
marker repeats that value: the walk cannot recompute it (the original bytes are gone), so
it accepts the stored value when the marker names the same one, and checks the next
record's link against it. So erasure leaves the chain, and ``verify --anchor``'s head,
exactly as they were.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable

from swarmlog.contract import VerifyReport
from swarmlog.redaction import marker

SEP = b',"chain":"'
"""What introduces the chain member in a record line."""

DIGEST_SIZE = 16
HEX_LEN = 2 * DIGEST_SIZE
GENESIS = b""
"""The chain value before the first record."""

_blake2b = hashlib.blake2b
_QUOTE_OR_PAD = (0x22, 0x20)
"""How a redacted record's bytes end before ``SEP``: its marker's quote, or padding."""


def link(prev: bytes, head: bytes) -> bytes:
    """The chain value (ASCII hex) of a record whose bytes before ``SEP`` are ``head``."""
    h = _blake2b(prev, digest_size=DIGEST_SIZE)
    h.update(head)
    return h.hexdigest().encode()


def stored(line: bytes) -> tuple[bytes, bytes] | None:
    """A record line's (bytes before ``SEP``, stored chain value), or None without one."""
    i = line.rfind(SEP)
    if i < 0:
        return None
    j = i + len(SEP)
    return line[:i], line[j : j + HEX_LEN]


def check(lines: Iterable[tuple[int, bytes]], prev: bytes = GENESIS) -> tuple[bytes, int | None]:
    """Recompute the chain over ``(seq, line)`` pairs in seq order.

    Returns the head (the last good chain value) and the seq of the first record whose
    stored value does not match (or that has none), None when all match.
    """
    for seq, line in lines:
        parts = stored(line)
        if parts is None:
            return prev, seq
        head, value = parts
        want = value if _redacted_ok(head, value) else link(prev, head)
        if value != want:
            return prev, seq
        prev = want
    return prev, None


class Walk:
    """The chain over a whole log, segment by segment (what ``verify`` reports)."""

    def __init__(self) -> None:
        self.head = GENESIS
        self.head_seq = 0
        self.broken: int | None = None
        self.legacy = 0  # records written before the chain (a prefix of the log)
        self._started = False

    def resume(self, value: bytes, seq: int) -> None:
        """Go on after records that are gone (deleted by retention) whose last chain
        value was ``value`` (the retention manifest keeps it): the next record's link is
        checked against it, not taken as given."""
        if self.broken is None:
            self.head, self.head_seq = value, seq
            self._started = True

    def feed(self, data: bytes, first_record: bool) -> None:
        """Check the complete lines of one segment's bytes (in log order).

        ``first_record``: this segment holds the first record still in the log; when
        that is not seq 1 (older segments were archived) its link is taken as given.
        """
        if self.broken is not None:
            return
        lines = data.split(b"\n")
        lines.pop()  # an unterminated tail is not a record yet
        prev = self.head
        rfind = bytes.rfind
        sep, n = SEP, len(SEP)
        blake2b = _blake2b
        for k, line in enumerate(lines):
            i = rfind(line, sep)
            if i < 0:
                if self._started:
                    self.broken = _seq_of(line)
                    return
                self.legacy += 1
                continue
            value = line[i + n : i + n + HEX_LEN]
            if first_record and k == 0 and _seq_of(line) != 1:
                self._started = True
                prev = value
                continue
            self._started = True
            if line[i - 1] in _QUOTE_OR_PAD and _redacted_ok(line[:i], value):  # redacted
                prev = value
                continue
            h = blake2b(prev, digest_size=DIGEST_SIZE)
            h.update(line[:i])
            if value != h.hexdigest().encode():
                self.head = prev
                self.broken = _seq_of(line)
                return
            prev = value
        if lines and self._started:
            self.head = prev
            self.head_seq = _seq_of(lines[-1])


def _redacted_ok(head: bytes, value: bytes) -> bool:
    """Whether ``head`` ends with a redaction marker naming the stored chain ``value``."""
    m = marker(head)
    return m is not None and m[1] == value


def _seq_of(line: bytes) -> int:
    """The seq at the head of a record line (0 when unreadable)."""
    if not line.startswith(b'{"seq":'):
        return 0
    end = line.find(b",", 7)
    digits = line[7:end]
    return int(digits) if end > 0 and digits.isdigit() else 0


def verify_files(segdir: str, names: list[str], rep: VerifyReport) -> None:
    """Walk the chain over the segment files ``names`` (in order) into ``rep``."""
    w = Walk()
    for j, name in enumerate(names):
        try:
            with open(os.path.join(segdir, name), "rb") as f:
                data = f.read()
        except OSError as e:
            rep.problems.append(f"{name}: unreadable for the hash chain: {e}")
            return
        w.feed(data, j == 0)
        if w.broken is not None:
            rep.problems.append(
                f"seq {w.broken}: hash chain broken (this record or one before it was"
                " changed, inserted or removed after it was written)"
            )
            break
    if w.legacy:
        rep.notes.append(f"{w.legacy} record(s) at the start predate the hash chain")
    rep.head = w.head.decode()
    rep.head_seq = w.head_seq
