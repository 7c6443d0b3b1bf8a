"""What the hash chain costs (trust work): FileLog append and verify throughput with the
chain vs without it, in the same run, on the same machine.

"Without" replaces the one hash per record by a constant of the same length
(``_fast._link``; the records keep the same bytes and size)
and skips the chain walk in ``verify``: so the difference is exactly the chain's
hashing. Interleaved A/B, best of ``--repeat``.
Usage: ``python scripts/bench/trust_bench.py [--events N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _table import write_table

from swarmlog import Event, _fast, open_log
from swarmlog import chain as hashchain

_real_link = _fast._link
_real_verify = hashchain.verify_files
_FAKE = b"0" * hashchain.HEX_LEN


def _chain(on: bool) -> None:
    _fast._link = _real_link if on else (lambda prev, head: _FAKE)
    hashchain.verify_files = _real_verify if on else (lambda *a: None)


def _events(n: int) -> list[Event]:
    return [
        Event(agent=f"a{i % 8}", type="memory.shared", body={"content": f"memory number {i}"})
        for i in range(n)
    ]


def _append(root: Path, evs: list[Event], batch: int) -> float:
    log = open_log(root)
    t = time.perf_counter()
    if batch == 1:
        for e in evs:
            log.append(e)
    else:
        for i in range(0, len(evs), batch):
            log.append_many(evs[i : i + batch])
    dt = time.perf_counter() - t
    log.close()
    return dt


def _verify(root: Path) -> float:
    log = open_log(root)
    t = time.perf_counter()
    rep = log.verify()
    dt = time.perf_counter() - t
    log.close()
    assert rep.ok, rep.problems
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    n = a.events
    best: dict[tuple[str, bool], float] = {}
    tmp = Path(tempfile.mkdtemp(prefix="trust-bench-"))

    def run(name: str, on: bool, fn: Callable[[Path], float]) -> None:
        _chain(on)
        root = tmp / f"{name}-{on}"
        dt = fn(root)
        best[(name, on)] = min(best.get((name, on), float("inf")), dt)

    try:
        for _ in range(a.repeat):
            for on in (False, True):  # interleaved A/B
                for name, batch in (("append", 1), ("append_many(100)", 100)):
                    shutil.rmtree(tmp / f"{name}-{on}", ignore_errors=True)
                    run(name, on, lambda r, b=batch: _append(r, _events(n), b))
                run("verify", on, lambda r, o=on: _verify(tmp / f"append-{o}"))
    finally:
        _chain(True)
        shutil.rmtree(tmp, ignore_errors=True)
    rows = []
    for name in ("append", "append_many(100)", "verify"):
        off, on = best[(name, False)], best[(name, True)]
        rows.append(
            [
                name,
                f"{n / off:,.0f}/s",
                f"{n / on:,.0f}/s",
                f"{on / off:.2f}x",
                f"{(on - off) / n * 1e6:.2f}",
            ]
        )
    head = b'{"seq":1234567,' + b"x" * 140
    reps = 200_000
    t = time.perf_counter()
    for _ in range(reps):
        _real_link(_FAKE, head)
    per = (time.perf_counter() - t) / reps * 1e6
    rows.append(["the link alone (150-byte record)", "", "", "", f"{per:.2f}"])
    notes = (
        f"{n:,} events of ~150 bytes, best of {a.repeat} interleaved runs, one process, "
        "durability 'process'. 'without' replaces the hash by a constant of the same size "
        "(same bytes written) and skips the chain walk in verify. Shared machine (2 cores, "
        "other jobs running): compare the ratio, not the absolute rates."
    )
    header = ["operation", "without chain", "with chain", "time ratio", "µs per record added"]
    print(write_table("trust", "Hash chain cost (FileLog)", header, rows, notes))


if __name__ == "__main__":
    main()
