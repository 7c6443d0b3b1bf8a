"""Fault: bit rot and torn writes at the end of a segment.

Flips one byte in the last record, in each record of the last batch and in a middle
record (all must be fail-stop: verify exits 1 naming segment, byte and seq; append
refuses; nothing is cut), and leaves a torn write (a record's prefix, a batch's
missing end, a zero-filled tail as after a power loss: all must be cut by the next
append and noted). Run: python scripts/faults/rot.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from _common import Report, cli, one_line_error, workdir


def fresh(base: Path, name: str) -> tuple[Path, Path, bytes, list[tuple[int, int]]]:
    from swarmlog import Event, FileLog

    root = base / name
    with FileLog(root, notify=False) as log:
        for i in range(3):
            log.append(Event(agent="a", type="test.event", body={"i": i}))
        log.append_many([Event(agent="b", type="test.event", body={"j": j}) for j in range(3)])
    seg = next((root / "segments").iterdir())
    data = seg.read_bytes()
    spans, pos = [], 0
    for line in data.split(b"\n")[:-1]:
        spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return root, seg, data, spans


def main() -> int:
    rep = Report("rot and torn tails")
    base = workdir("rot")
    try:
        for victim, what in (
            (6, "last record (end of a batch)"),
            (5, "middle of the last batch"),
            (4, "first of the last batch"),
            (3, "last single record before the batch"),
            (1, "first record"),
        ):
            root, seg, data, spans = fresh(base, f"v{victim}")
            lo, hi = spans[victim - 1]
            bad = bytearray(data)
            bad[(lo + hi) // 2] ^= 0x20
            seg.write_bytes(bytes(bad))
            v = cli("--root", str(root), "verify")
            a = cli("--root", str(root), "append", "-a", "x", "after the rot")
            ok = (
                v.code == 1
                and f"seq {victim}" in v.out
                and f"byte {lo}" in v.out
                and one_line_error(a)
            )
            rep.check(
                ok,
                f"rotted {what} (seq {victim}): verify exit {v.code}, append refused",
                v.out + a.err,
            )
            rep.check(seg.read_bytes() == bytes(bad), f"rotted {what}: nothing cut or overwritten")
        for cut, what in (
            ("prefix", "a record's prefix"),
            ("batch", "a batch's missing end"),
            ("zeros", "zero-filled tail"),
        ):
            root, seg, data, spans = fresh(base, f"t{cut}")
            if cut == "prefix":
                seg.write_bytes(data + data[spans[0][0] : spans[0][0] + 30])
                keep = 6
            elif cut == "batch":
                seg.write_bytes(data[: spans[4][1] + 1])
                keep = 3
            else:
                seg.write_bytes(data + b"\0" * 8192)
                keep = 6
            v = cli("--root", str(root), "verify")
            a = cli("--root", str(root), "append", "-a", "x", "after the tear")
            v2 = cli("--root", str(root), "verify")
            ok = (
                v.code == 0 and f"seq {keep + 1}" in a.out and v2.code == 0 and "repaired" in v2.out
            )
            rep.check(
                ok,
                f"torn: {what}: verify ok, cut by the next append (seq {keep + 1}) and noted",
                v.out + a.out + a.err + v2.out,
            )
            if cut == "zeros":
                rep.check(
                    "zero-filled" in v.out, "torn: zero-filled tail is reported as such", v.out
                )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rep.done()


if __name__ == "__main__":
    sys.exit(main())
