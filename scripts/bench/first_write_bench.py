"""A fresh process's first append on a big log: what the view snapshot's cadence costs.

Usage: ``.venv/bin/python scripts/bench/first_write_bench.py [--records 1000000]
[--runs 3] [--baseline DIR] [--no-write]``.

Before its first append a writing process builds its view of the log (idempotency,
expectations): it maps the view snapshot (``view.idx``) and reads the records after it
(view/catchup.py). Snapshots are saved at the points ``snapshot.due`` names (20,000
records and a quarter of the last snapshot past it), so the records a fresh process
reads grow with the log: at most a fifth of it. This measures that price where users
pay it: ``FileLog(root).append(event)`` in a fresh process (``python -c``), its first
append timed inside the process (import, open, append), median of ``--runs``, on logs
of about ``--records`` records (each built in place), in four states:

* the snapshot at the end (a tail of one record);
* a tail of 19,999 records (the most the old fixed cadence left);
* the most the geometric cadence leaves (a snapshot covering four fifths of the log,
  the rest after it: one record short of the next save);
* no snapshot at all (every record read).

``--baseline DIR`` (another checkout) times the same first appends with that tree's code
on the same logs, in the same rounds. Before each run the log's view snapshot is put
back as it was built (a run may save one: the baseline's cadence saves at other points),
and each run adds one record (the tails are short of the next save by more than that).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from _table import write_table

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import snapshot

TREE = str(Path(__file__).resolve().parents[2])
CHILD = """
import sys, time
sys.path.insert(0, sys.argv[2])
t = time.perf_counter()
from swarmlog import Event
from swarmlog.file.log import FileLog
log = FileLog(sys.argv[1], notify=False)
log.append(Event(agent="fresh", type="note", body={}))
print(time.perf_counter() - t)
"""


def _event(i: int) -> Event:
    return Event(agent="a", type="note", key=f"k{i % 97}" if i % 5 == 0 else None, body={"i": i})


def _fill(root: str, n: int, start: int = 0) -> None:
    """Append ``n`` events in batches from one handle that saves no snapshot."""
    keep = snapshot.SAVE_AFTER
    snapshot.SAVE_AFTER = 1 << 62
    try:
        log = FileLog(root, notify=False)
        for at in range(start, start + n, 10_000):
            log.append_many([_event(i) for i in range(at, min(start + n, at + 10_000))])
        log.close()
    finally:
        snapshot.SAVE_AFTER = keep


def _covered(root: str) -> int:
    """The last seq the view snapshot in ``root`` covers."""
    head = (Path(root) / snapshot.NAME).read_bytes().split(b"\n")[1]
    return int(orjson.loads(head)["last"])


def _build(tmp: str, records: int, runs: int) -> dict[str, tuple[str, int]]:
    """Logs of about ``records`` records, each built in place (a copied log has other
    segment inodes, so its writer index would be rebuilt: not what a user meets):
    name -> (root, records after the snapshot)."""
    covered = records * snapshot.SAVE_FRACTION // (snapshot.SAVE_FRACTION + 1)
    # (one record short of the next save after the runs' own appends)
    most = max(snapshot.SAVE_AFTER, covered // snapshot.SAVE_FRACTION) - 2 * runs - 1
    states = (
        ("snapshot at the end", 0),
        ("tail of 19,999 (the old cadence's most)", 19_999 - 2 * runs),
        ("tail of a fifth (the geometric cadence's most)", most),
        ("no snapshot", -1),
    )
    out = {}
    for k, (name, tail) in enumerate(states):
        root = os.path.join(tmp, f"log{k}")
        _fill(root, covered - 1)
        first = FileLog(root, notify=False)  # its first append reads all, saves the view
        first.append(_event(-1))
        first.close()
        if tail > 0:
            _fill(root, tail, start=covered)
        out[name] = (root, tail if tail >= 0 else _covered(root))
    return out


def _first_append(root: str, tree: str, saved: bytes | None) -> float:
    """Seconds of a fresh process's import, open and first append on ``root``, its view
    snapshot put back to ``saved`` first (None: none), so that no run measures a
    snapshot an earlier run saved (the baseline's cadence saves at other points)."""
    path = os.path.join(root, snapshot.NAME)
    if saved is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        Path(path).write_bytes(saved)
    res = subprocess.run(
        [sys.executable, "-c", CHILD, root, tree], capture_output=True, text=True, timeout=600
    )
    if res.returncode:
        raise SystemExit(f"first append failed: {res.stderr.strip()[-400:]}")
    return float(res.stdout.split()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", help="another checkout, timed on the same copies")
    ap.add_argument("--no-write", action="store_true", help="print only, leave docs alone")
    args = ap.parse_args()
    rows = []
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="firstwrite-") as tmp:
        for name, (root, tail) in _build(tmp, args.records, args.runs).items():
            mine, theirs = [], []
            snap = None if name == "no snapshot" else (Path(root) / snapshot.NAME).read_bytes()
            for _ in range(args.runs):
                mine.append(_first_append(root, TREE, snap))
                if args.baseline:
                    theirs.append(_first_append(root, os.path.abspath(args.baseline), snap))
            row = [name, f"{tail:,}", f"{1e3 * statistics.median(mine):,.0f} ms"]
            if args.baseline:
                row.append(f"{1e3 * statistics.median(theirs):,.0f} ms")
            rows.append(row)
            print(" | ".join(row), flush=True)
    header = ["log state", "records after the snapshot", "import, open and first append"]
    if args.baseline:
        header.append(f"the same, {args.baseline}")
    notes = (
        f"A log of about {args.records:,} records; a fresh `python -c` process per run, "
        f"median of {args.runs}; {os.cpu_count()} cores, load average {load0:.1f} -> "
        f"{os.getloadavg()[0]:.1f}. `scripts/bench/first_write_bench.py`."
    )
    if args.no_write:
        print(notes)
        return
    print(
        write_table(
            "first-write", "A fresh process's first append on a big log", header, rows, notes
        )
    )


if __name__ == "__main__":
    main()
