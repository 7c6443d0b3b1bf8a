"""Fault: more segments than the process may open (``ulimit -n``).

Builds a log of 1,100 events in 550 segments of 4 KiB, then, in a process whose
RLIMIT_NOFILE is 256, appends (a new writer), reads, follows, verifies and replays it
through the CLI commands; also counts the descriptors the process holds after a full
read. Run: python scripts/faults/fdlimit.py
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys

from _common import Report, workdir

LIMIT = 256


def limited(*args: str) -> subprocess.CompletedProcess[str]:
    """``swarmlog ARGS`` with RLIMIT_NOFILE at LIMIT."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))

    return subprocess.run(
        [sys.executable, "-m", "dashboards", *args],
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=cap,
    )


def main() -> int:
    rep = Report(f"descriptor limit ({LIMIT})")
    base = workdir("fd")
    try:
        from swarmlog import Event, FileLog

        root = base / "log"
        pad = "x" * 2100  # two records fill a 4 KiB segment
        with FileLog(root, segment_bytes=4096, notify=False) as log:
            log.append_many(
                [Event(agent="a", type="test.event", body={"pad": pad}) for _ in range(1)]
            )
            for i in range(1098):
                log.append(Event(agent=f"a{i % 7}", type="test.event", body={"pad": pad}))
        segs = len(os.listdir(root / "segments"))
        print(f"{segs} segments, limit {LIMIT} descriptors")
        r = limited("--root", str(root), "append", "-a", "late", "the last memory")
        rep.check(
            r.returncode == 0 and "seq 1100" in r.stdout, f"append: {r.stdout.strip()}", r.stderr
        )
        r = limited("--root", str(root), "tail", "--from", "1")
        rep.check(
            r.returncode == 0 and len(r.stdout.splitlines()) == 1100,
            "tail --from 1: 1,100 events",
            r.stderr,
        )
        r = limited("--root", str(root), "tail", "--from", "1", "--follow", "--timeout", "0.5")
        rep.check(
            r.returncode == 0 and len(r.stdout.splitlines()) == 1100,
            "tail --follow: 1,100 events",
            r.stderr,
        )
        r = limited("--root", str(root), "verify")
        rep.check(
            r.returncode == 0 and "1100 events" in r.stdout,
            f"verify: {r.stdout.strip()[:80]}",
            r.stderr,
        )
        for cmd in (["synth"], ["replay"], ["stats"]):
            r = limited("--root", str(root), *cmd)
            rep.check(r.returncode == 0, f"{cmd[0]}: exit 0", r.stderr)
        with FileLog(root, notify=False) as log:
            n = sum(1 for _ in log.read())
            held = len(os.listdir("/proc/self/fd"))
        rep.check(
            n >= 1100 and held < 64,
            f"after reading everything: {held} descriptors open in this process",
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rep.done()


if __name__ == "__main__":
    sys.exit(main())
