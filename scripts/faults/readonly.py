"""Fault: a log on a read-only mount (a backup, a snapshot, a read-only share).

Bind-mounts a built log read-only (needs root: mount --bind + remount,ro), then runs
every read command (must work) and every write command (must fail in one line,
"read-only: …"), with and without a lock file. Run: python scripts/faults/readonly.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from _common import READS, WRITES, Report, build, cli, one_line_error, snapshot, workdir


def main() -> int:
    rep = Report("read-only mount")
    base = workdir("ro")
    src, ro = base / "src", base / "ro"
    try:
        build(src / "log")
        for variant in ("with lock file", "without lock file"):
            if variant == "without lock file":
                (src / "log" / "lock").unlink()
            before = snapshot(src)
            ro.mkdir(exist_ok=True)
            for cmd in (
                ["mount", "--bind", str(src), str(ro)],
                ["mount", "-o", "remount,ro,bind", str(ro)],
            ):
                r = subprocess.run(cmd, capture_output=True, text=True)
                if r.returncode:
                    print(f"cannot mount read-only here ({r.stderr.strip()}); skipped")
                    subprocess.run(["umount", str(ro)], capture_output=True)
                    return 0
            try:
                print(f"{variant}:")
                for c in READS:
                    r = cli("--root", str(ro / "log"), *c)
                    rep.check(r.code == 0 and bool(r.out.strip()), f"read  {' '.join(c)}", r.err)
                for c in WRITES:
                    r = cli("--root", str(ro / "log"), *c)
                    rep.check(
                        one_line_error(r, "error: read-only: "),
                        f"write {' '.join(c)}: {r.err.strip()}",
                        r.err,
                    )
            finally:
                subprocess.run(["umount", str(ro)], capture_output=True)
            rep.check(snapshot(src) == before, "no file of the log changed")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rep.done()


if __name__ == "__main__":
    sys.exit(main())
