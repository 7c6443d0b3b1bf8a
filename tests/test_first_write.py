"""A fresh handle's first write reads the log before it takes the append lock.

Why it matters: building a fresh handle's view (a saved snapshot, numpy to map it, the
records after it) took 15-300 ms under the lock, so a swarm of agent processes starting
together held every writer, the synthesizer's decisions too, for seconds (synthesizer-load work's
16-core load run). Here another process holds the lock: the fresh handle must have read
the log while it waits, and its append must still be right once the lock is free.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from swarmlog import Event, open_log
from swarmlog.file.log import FileLog

HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.readline()
"""


def _fill(root: Path, n: int) -> None:
    log = open_log(root)
    log.append_many(
        [Event(agent="a", type="note", key=f"k{i % 7}", body={"i": i}) for i in range(n)]
    )
    log.close()


def test_a_fresh_handle_reads_the_log_before_the_lock(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root, 300)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(root / "lock")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        log = FileLog(root, notify=False)
        assert log._end.last == 0  # nothing read yet
        got: list[Event] = []
        t = threading.Thread(target=lambda: got.append(log.append(Event(agent="b", type="x"))))
        t.start()
        deadline = time.monotonic() + 30
        while log._end.last < 300 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert log._end.last == 300  # read while another process holds the lock
        assert t.is_alive() and not got  # and still waiting for it
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
    t.join(timeout=30)
    assert got and got[0].seq == 301
    assert log.version("k6") == 294  # the view's key versions are the log's
    log.close()
    again = open_log(root)
    assert [e.seq for e in again.read(299)] == [299, 300, 301]
    again.close()


def test_first_writes_of_many_handles_stay_gapless(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _fill(root, 50)
    logs = [FileLog(root, notify=False) for _ in range(4)]
    seqs = sorted(log.append(Event(agent=f"w{i}", type="x")).seq for i, log in enumerate(logs))
    assert seqs == [51, 52, 53, 54]
    for log in logs:
        log.close()
