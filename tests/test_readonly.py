"""The robustness work, item 5: a log can be inspected without write access.

On a read-only bind mount (we need CAP_SYS_ADMIN to make one; skipped otherwise) every
read command works, every write command fails in one line "read-only: …" with exit 1,
and the API raises SwarmlogError subclasses naming the path, never a bare OSError.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from swarmlog import Event, FileLog, ReadOnlyLog, SwarmlogError

from .cli_util import READS, WRITES, build_log, run_cli


def _mount_ro(src: Path, dst: Path) -> str | None:
    """Bind ``src`` read-only at ``dst``; None, or why it cannot be done here."""
    dst.mkdir()
    for cmd in (
        ["mount", "--bind", str(src), str(dst)],
        ["mount", "-o", "remount,ro,bind", str(dst)],
    ):
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        except OSError as e:
            return f"cannot run mount: {e}"
        if r.returncode != 0:
            if cmd[1] != "--bind":
                subprocess.run(["umount", str(dst)], capture_output=True, timeout=30)
            return f"cannot make a read-only bind mount here: {r.stderr.strip()}"
    return None


@pytest.fixture(params=["with-lock", "no-lock"])
def ro_root(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    src = tmp_path / "src"
    build_log(src / "log")
    if request.param == "no-lock":  # e.g. a backup that copied only the data
        (src / "log" / "lock").unlink()
    before = {p: p.read_bytes() for p in src.rglob("*") if p.is_file()}
    ro = tmp_path / "ro"
    why = _mount_ro(src, ro)
    if why is not None:
        pytest.skip(why)
    try:
        probe = ro / "log" / "probe"
        with pytest.raises(OSError):
            probe.write_bytes(b"x")
        yield ro / "log"
    finally:
        done = subprocess.run(["umount", str(ro)], capture_output=True, timeout=30)
        if done.returncode != 0:  # still busy (a mapping not yet dropped): detach it lazily
            subprocess.run(["umount", "-l", str(ro)], capture_output=True, timeout=30)
    assert {p: p.read_bytes() for p in src.rglob("*") if p.is_file()} == before


def test_every_read_command_works_on_a_read_only_root(ro_root: Path) -> None:
    for cmd in READS:
        r = run_cli("--root", str(ro_root), *cmd)
        assert r.code == 0, (cmd, r)
        assert r.out.strip(), cmd
    assert "one more memory" in run_cli("--root", str(ro_root), "tail").out


def test_every_write_command_says_read_only(ro_root: Path) -> None:
    for cmd in WRITES:
        r = run_cli("--root", str(ro_root), *cmd)
        assert r.code == 1, (cmd, r)
        lines = r.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: read-only: "), (cmd, r.err)
        assert str(ro_root) in lines[0], (cmd, r.err)


def test_api_reads_without_write_access(ro_root: Path) -> None:
    with FileLog(ro_root, create=False, notify=False) as log:
        seqs = [e.seq for e in log.read()]
        assert seqs == list(range(1, log.last_seq + 1)) and len(seqs) >= 5
        assert [e.seq for e in log.follow(1, timeout=0.2)] == seqs
        assert log.verify().ok
        assert log.version("f1") > 0
        with pytest.raises(ReadOnlyLog) as ei:
            log.append(Event(agent="x", type="test.event", body={}))
        assert isinstance(ei.value, SwarmlogError) and str(ro_root) in str(ei.value)
        assert str(ei.value).startswith("read-only: ")
    with pytest.raises(SwarmlogError) as e2:
        FileLog(ro_root / "nested" / "new")
    assert str(ro_root / "nested") in str(e2.value)


NOBODY = 65534


def _as_nobody(cmds: list[list[str]]) -> list[tuple[int, str, str]]:
    """Run CLI commands in a forked child that became an unprivileged user (uid 65534).

    In-process (``run_cli``) rather than a new interpreter, which the other user may not
    be allowed to execute; the parent ran the same commands first so every module the
    commands need is imported already.
    """
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 1
        try:
            os.close(rfd)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            out = [list(vars(run_cli(*c)).values()) for c in cmds]
            with os.fdopen(wfd, "wb") as f:
                f.write(orjson.dumps(out))
            code = 0
        finally:
            os._exit(code)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return [tuple(r) for r in orjson.loads(data)]


@pytest.mark.slow
def test_another_user_reads_but_cannot_write() -> None:
    """A log owned by someone else (0755 dirs, 0644 files): read, never written."""
    if os.geteuid() != 0:
        pytest.skip("needs root to become another user")
    base = Path(tempfile.mkdtemp(prefix="swarmlog-perm-", dir="/tmp"))
    try:
        base.chmod(0o755)
        root = base / "log"
        old = os.umask(0o022)
        try:
            build_log(root)
        finally:
            os.umask(old)
        reads = [["--root", str(root), *c] for c in READS]
        writes = [["--root", str(root), *c] for c in WRITES]
        for c in reads:
            assert run_cli(*c).code == 0  # as root: imports everything the child needs
        # (the owner's own reads may refresh its verified stamps of the side files, a
        # cache of its own; what is compared is what the other user's commands did)
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
        results = _as_nobody(reads + writes)
        for c, (code, out, err) in zip(reads, results[: len(reads)], strict=True):
            assert code == 0 and out.strip(), (c, err)
        for c, (code, _, err) in zip(writes, results[len(reads) :], strict=True):
            lines = err.strip().splitlines()
            assert code == 1 and len(lines) == 1, (c, err)
            assert lines[0].startswith("error: read-only: "), (c, err)
        assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    finally:
        shutil.rmtree(base, ignore_errors=True)
