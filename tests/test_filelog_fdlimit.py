"""The robustness work, item 4: any number of segments works under a low descriptor limit.

A handle used to keep one descriptor per segment, forever: with more segments than
``ulimit -n`` every append, follow and replay failed with EMFILE. The workload runs in a
subprocess whose RLIMIT_NOFILE is 256, on a log of 1,100 events in 550 segments.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

WORKLOAD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    import synthesizer
    from swarmlog import Event, FileLog
    from synthesizer.replay import state_at

    root = sys.argv[1]
    pad = "x" * 2100  # two records fill a 4 KiB segment
    with FileLog(root, segment_bytes=4096, notify=False) as log:
        for i in range(1000):
            log.append(Event(agent="a", type="test.event", id=f"e{i}", body={"pad": pad}))
    # a new writer on the long log (it used to open every segment and keep them open)
    with FileLog(root, notify=False) as log:
        log.append_many(
            [Event(agent="b", type="test.event", id=f"b{i}", body={"pad": pad}) for i in range(99)]
        )
        log.append(Event(agent="b", type="test.event", id="last", body={"pad": pad}))
        assert log.last_seq == 1100, log.last_seq
        segs = len(list((log.root / "segments").iterdir()))
        assert segs >= 500, segs
        assert [e.seq for e in log.read()] == list(range(1, 1101))
        assert [e.seq for e in log.read(1000, 1010)] == list(range(1000, 1011))
        got = [e.seq for e in log.follow(1, timeout=0.5)]
        assert got == list(range(1, 1101)), (len(got), got[-3:])
        assert log.verify().ok
        assert log.version("nope") == 0
        kept = len(log._files)
    with FileLog(root, notify=True) as log:  # following with notifications too
        assert sum(1 for _ in log.follow(1050, timeout=0.3)) == 51
    state = state_at(FileLog(root, create=False), None)
    assert state.last_seq == 1100, state.last_seq
    print("ok", segs, kept)
    """
)


def test_thousand_events_in_550_segments_under_ulimit_256(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-c", WORKLOAD, str(tmp_path / "log")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    word, segs, kept = res.stdout.split()
    assert word == "ok" and int(segs) >= 500 and int(kept) <= 16
