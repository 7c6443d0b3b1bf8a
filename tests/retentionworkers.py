"""Processes the retention tests run: a compaction to kill, appenders and a follower.

``python -m tests.retentionworkers compact ROOT POINT MODE`` prints "ready" once the log
is open, then compacts up to POINT one segment at a time, printing "step" after each (the
crash test kills it after a random number of steps).
``append ROOT WID N OUT`` appends N events with ids ``w<wid>-<i>`` and writes the
acknowledged seqs to OUT; ``follow ROOT N OUT`` follows from seq 1 until it has seen N
events and writes their (seq, id) pairs to OUT; ``readall ROOT R OUT`` reads the whole
log R times and writes whether each read was gapless from seq 1.
"""

from __future__ import annotations

import sys

import orjson

from swarmlog import Event, FileLog
from swarmlog.file.compact import compact


def main(argv: list[str]) -> None:
    cmd, root = argv[0], argv[1]
    log = FileLog(root, create=False)
    if cmd == "compact":
        # one segment at a time, a "step" line after each: the crash test kills at a
        # point of the compaction's own progress, not at a wall-clock moment
        from swarmlog.file.compact import eligible

        spans = eligible(log, int(argv[2]))
        print("ready", flush=True)
        for s in spans:
            compact(log, s.last, argv[3])
            print("step", flush=True)
        compact(log, int(argv[2]), argv[3])
    elif cmd == "append":
        wid, n, out = argv[2], int(argv[3]), argv[4]
        seqs = []
        for i in range(n):
            ev = Event(agent=f"w{wid}", type="test.event", id=f"w{wid}-{i}", body={"i": i})
            seqs.append(log.append(ev).seq)
        with open(out, "wb") as f:
            f.write(orjson.dumps(seqs))
    elif cmd == "follow":
        n, out = int(argv[2]), argv[3]
        seen = []
        for ev in log.follow(1, timeout=60):
            seen.append((ev.seq, ev.id))
            if len(seen) >= n:
                break
        with open(out, "wb") as f:
            f.write(orjson.dumps(seen))
    elif cmd == "readall":
        rounds, out = int(argv[2]), argv[3]
        ok = []
        for _ in range(rounds):  # whole reads from seq 1, across archive and segments
            seqs = [ev.seq for ev in log.read(1)]
            ok.append(seqs == list(range(1, len(seqs) + 1)))
        with open(out, "wb") as f:
            f.write(orjson.dumps(ok))
    log.close()


if __name__ == "__main__":
    main(sys.argv[1:])
