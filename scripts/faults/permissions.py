"""Fault: a log owned by another user, and the modes of the files a log creates.

As root, builds a log under umask 022 (0755 directories, 0644 files), then runs every
read command as uid 65534 (must work: readers need no write access) and every write
command (must fail in one line, "read-only: …"); then checks that segment, lock and
sync files follow the umask (0o002 and 0o077). Run: python scripts/faults/permissions.py
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from contextlib import ExitStack
from typing import Any

from _common import READS, WRITES, Report, Run, build, cli, one_line_error, snapshot, workdir

NOBODY = 65534


def as_nobody(commands: list[list[str]]) -> list[Run]:
    """Run CLI commands as uid 65534 in one forked child, in-process.

    (A new interpreter may not be executable by that user, e.g. one under /root.) The
    child first runs the read commands as root, which changes nothing and imports every
    module the commands need, then drops to uid 65534 and runs them all.
    """
    from dashboards.cli import main as cli_main

    with ExitStack() as stack:
        return _run_as_nobody(commands, stack, cli_main)


def _run_as_nobody(commands: list[list[str]], stack: ExitStack, cli_main: Any) -> list[Run]:
    def tmp() -> Any:
        return stack.enter_context(tempfile.TemporaryFile())

    outs = [(tmp(), tmp()) for _ in commands]
    codes_file = tmp()
    pid = os.fork()
    if pid == 0:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            for c in READS:
                try:
                    cli_main(["--root", commands[0][1], *c])
                except SystemExit:
                    pass
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            codes = []
            for c, (o, e) in zip(commands, outs, strict=True):
                os.dup2(o.fileno(), 1)
                os.dup2(e.fileno(), 2)
                code = 0
                try:
                    cli_main(c)
                except SystemExit as x:
                    code = int(x.code or 0) if not isinstance(x.code, str) else 1
                sys.stdout.flush()
                sys.stderr.flush()
                codes.append(code)
            codes_file.write(json.dumps(codes).encode())
            codes_file.flush()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    codes_file.seek(0)
    codes = json.loads(codes_file.read() or b"[]")
    runs = []
    for code, (o, e) in zip(codes, outs, strict=False):
        o.seek(0)
        e.seek(0)
        runs.append(Run(code, o.read().decode(), e.read().decode()))
    return runs


def main() -> int:
    rep = Report("permissions")
    base = workdir("perm")
    try:
        root = base / "log"
        os.umask(0o022)
        build(root)
        before = snapshot(root)
        if os.geteuid() != 0:
            print("not root: the other-user checks are skipped")
        else:
            print("as uid 65534 on a root-owned log:")
            reads = [["--root", str(root), *c] for c in READS]
            writes = [["--root", str(root), *c] for c in WRITES]
            runs = as_nobody(reads + writes)
            for c, r in zip(READS, runs[: len(reads)], strict=True):
                rep.check(r.code == 0 and bool(r.out.strip()), f"read  {' '.join(c)}", r.err)
            for c, r in zip(WRITES, runs[len(reads) :], strict=True):
                rep.check(
                    one_line_error(r, "error: read-only: "),
                    f"write {' '.join(c)}: {r.err.strip()}",
                    r.err,
                )
            rep.check(snapshot(root) == before, "no file of the log changed")
        for mask in (0o002, 0o077):
            os.umask(mask)
            r2 = base / f"umask{mask:03o}"
            cli("--root", str(r2), "init")
            ok = cli("--root", str(r2), "append", "-a", "a", "x").code == 0
            seg = next((r2 / "segments").iterdir())
            files = [seg, r2 / "lock", r2 / "swarm.json"]
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in files}
            want = 0o666 & ~mask
            rep.check(
                ok and all(m == want for m in modes.values()),
                f"umask {mask:03o}: files {want:03o}",
                str(modes),
            )
            dmode = stat.S_IMODE((r2 / "segments").stat().st_mode)
            rep.check(dmode == 0o777 & ~mask, f"umask {mask:03o}: segments/ {dmode:03o}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return rep.done()


if __name__ == "__main__":
    sys.exit(main())
