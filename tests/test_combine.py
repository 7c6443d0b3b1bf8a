"""The write-path work, round 5: flat combining on the append path (swarmlog/file/view/combine.py).

Real processes append at once; a writer holding the append lock appends the records the
others posted in their slots. What must hold: every acknowledged event is stored once at
the seq it was told (ids posted by several processes included), seqs are gapless, the
chain verifies, the index equals a rebuild from the segments, and every record is the
bytes a single append of the same event, ts and predecessor writes (no batch markers).
A combiner killed (kill -9) before its write, after it, or after marking loses nothing
acknowledged and duplicates nothing.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from swarmlog import Event
from swarmlog.file.log import FileLog
from swarmlog.file.view import combine

from .combineworkers import event
from .indexworkers import index_view, segment_view

ROOT = Path(__file__).resolve().parent.parent


WAITS = ["64", str(combine.WAIT_MANY)]
"""A posted writer's tries before it sleeps: a few-core machine's, a many-core one's
(this machine's core count decides the default: both are run whatever it is)."""


def start(
    root: Path,
    name: str,
    n: int,
    durability: str = "process",
    crash: str = "",
    wait: str = "",
    sticky: str = "",
    nap: str = "",
) -> subprocess.Popen[bytes]:
    env = {**os.environ}
    for switch in (combine.CRASH_ENV, combine.WAIT_ENV, combine.STICKY_ENV, combine.NAP_ENV):
        env.pop(switch, None)
    if sticky:
        env[combine.STICKY_ENV] = sticky
    if nap:
        env[combine.NAP_ENV] = nap
    env[combine.SWITCH_ENV] = "1"  # (on, whatever the default)
    env[combine.CROWD_ENV] = "0"  # (a busy lock's waiter posts, however few the writers)
    if wait:
        env[combine.WAIT_ENV] = wait
    if crash:
        env[combine.CRASH_ENV] = crash
    # (acks to a file, not a pipe: a writer blocked on a full pipe would stop appending)
    with open(root.parent / f"{name}.out", "wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.combineworkers", str(root), name, str(n), durability],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.PIPE,
        )


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, dict[str, int], int]:
    """(return code, acknowledged id -> seq, posts it combined for others)."""
    _, err = proc.communicate(timeout=300)
    acks: dict[str, int] = {}
    combined = 0
    root, name = Path(proc.args[3]), proc.args[4]  # type: ignore[index]
    for line in (root.parent / f"{name}.out").read_text().splitlines():
        a, b = line.split()
        if a == "combined":
            combined = int(b)
        else:
            acks[a] = int(b)
    assert proc.returncode in (0, -9), err.decode()[-2000:]
    return proc.returncode, acks, combined


def stored_from(eid: str) -> Event:
    """The event a worker appended under ``eid`` (combineworkers.event)."""
    if eid.startswith("s"):
        return event("any", int(eid[1:]))
    who, i = eid.rsplit("-", 1)
    return event(who, int(i))


def check(root: Path, acked: list[dict[str, int]]) -> list[Event]:
    """The log after the writers: each acknowledged id stored once at its seq, gapless,
    chain and records intact, the index equal to a rebuild."""
    with FileLog(root, create=False, notify=False) as log:
        events = list(log.read())
        rep = log.verify()
    assert rep.ok, rep.problems
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(seqs) + 1))
    ids = Counter(e.id for e in events)
    assert max(ids.values()) == 1  # nothing duplicated
    at = {e.id: e.seq for e in events}
    for acks in acked:
        for i, s in acks.items():
            assert at[i] == s, (i, s, at.get(i))
    for seg in sorted((root / "segments").iterdir()):
        assert b'"more"' not in seg.read_bytes()  # (single records, not batches)
    assert index_view(str(root)) == segment_view(str(root))
    return events


MANY = (str(combine.WAIT_MANY), str(combine.STICKY_MANY), str(combine.NAP_MANY))
"""A many-core machine's defaults (tries, a holder's extra rounds, a poster's nap), run
here whatever this machine's core count."""


@pytest.mark.parametrize(
    ("wait", "sticky", "nap"),
    [
        (WAITS[0], "", ""),
        (WAITS[1], "", ""),
        (WAITS[0], "8", ""),
        (WAITS[1], "8", ""),
        MANY,
    ],
)
@pytest.mark.slow
def test_eight_processes_combined_equal_one_by_one(
    tmp_path: Path, wait: str, sticky: str, nap: str
) -> None:
    root = tmp_path / "log"
    with FileLog(root, name="comb", notify=False) as log:
        log.append(Event(agent="x", type="t", id="first"))
    procs = [start(root, f"w{k}", 1500, wait=wait, sticky=sticky, nap=nap) for k in range(8)]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results)
    assert sum(c for _, _, c in results) > 0  # (some appends were combined)
    events = check(root, [a for _, a, _ in results])
    assert len(events) == 1 + 8 * 1350 + 150  # (ids s5, s15, ... shared by all 8)
    # no record's bytes stay in the slots once taken (an erasure must find them nowhere)
    assert b'"body"' not in (root / combine.NAME).read_bytes()
    # the same events appended one by one, each at the ts it got: the same bytes
    again = tmp_path / "again"
    now = [0.0]
    with FileLog(again, name="comb", notify=False, clock=lambda: now[0]) as one:
        for e in events:
            now[0] = e.ts
            ev = Event(agent="x", type="t", id="first") if e.id == "first" else stored_from(e.id)
            assert one.append(ev).seq == e.seq
    assert _bytes(again) == _bytes(root)


def _bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((root / "segments").iterdir()))


@pytest.mark.parametrize(
    ("step", "wait", "sticky", "nap"),
    [
        (1, "", "", ""),
        (2, "", "", ""),
        (3, "", "", ""),
        (2, WAITS[1], "", ""),
        (3, WAITS[1], "8", ""),
        (2, *MANY),
    ],
)
@pytest.mark.slow
@pytest.mark.soak  # a minute or more
def test_kill_a_combiner_loses_nothing(
    tmp_path: Path, step: int, wait: str, sticky: str, nap: str
) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="x", type="t", id="first"))
    killed = start(root, "dead", 100000, crash=f"1:{step}", wait=wait, sticky=sticky, nap=nap)
    results = []
    for rnd in range(5):  # (until it has combined a batch with another writer's post)
        procs = [
            start(root, f"w{rnd}x{k}", 1500, wait=wait, sticky=sticky, nap=nap) for k in range(7)
        ]
        results += [finish(p) for p in procs]
        if killed.poll() is not None:
            break
    rc, dead_acks, _ = finish(killed)
    assert rc == -9  # (it died combining others' posts, at the step asked)
    assert all(r == 0 for r, _, _ in results)
    events = check(root, [dead_acks, *(a for _, a, _ in results)])
    stored = {e.id for e in events}
    for _, acks, _ in results:
        assert set(acks) <= stored
    # a fresh writer afterwards: the dead combiner's slot is free again, appends go on
    with FileLog(root, notify=False) as log:
        got = log.append(Event(agent="x", type="t", id="after"))
    assert got.seq == len(events) + 1
    check(root, [])


@pytest.mark.slow
@pytest.mark.parametrize("wait", WAITS)
def test_fsync_writers_combined(tmp_path: Path, wait: str) -> None:
    root = tmp_path / "log"
    with FileLog(root, notify=False, durability="fsync") as log:
        log.append(Event(agent="x", type="t", id="first"))
    procs = [start(root, f"w{k}", 150, durability="fsync", wait=wait) for k in range(8)]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results)
    check(root, [a for _, a, _ in results])
    with FileLog(root, notify=False) as log:
        assert log._sync._words()[2] >= log.last_seq  # (the durable mark covers every ack)


@pytest.mark.slow
def test_fsync_and_page_cache_writers_combined(tmp_path: Path) -> None:
    """Writers of both durabilities on one log combine each other's posts; every fsync
    writer's acknowledged seq is covered by the durable mark when its append returns
    (combineworkers checks), whoever appended it."""
    root = tmp_path / "log"
    with FileLog(root, notify=False, durability="fsync") as log:
        log.append(Event(agent="x", type="t", id="first"))
    procs = [
        start(root, f"w{k}", 200, durability="fsync" if k % 2 else "process") for k in range(8)
    ]
    results = [finish(p) for p in procs]
    assert all(rc == 0 for rc, _, _ in results)
    check(root, [a for _, a, _ in results])
    assert sum(c for _, _, c in results) > 0


def test_slot_is_validated(tmp_path: Path) -> None:
    """A post whose bytes do not match its CRC (half written, stale) is never taken, nor
    one that is free again; a slot is one handle's until its descriptor closes."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        lock = log._write_lock()
        sa = combine.Slots.open(str(root), lock)
        probe = combine.Slots.open(str(root), lock)
        assert sa is not None and probe is not None and sa.index != probe.index
        assert sa.post(b"x1", 7, "k", b'{"id":"x1","ts":', b',"type":"t"}')
        got = probe.others()
        assert [(p.s, p.h, p.key, p.post) for p in got] == [(b"x1", 7, "k", b',"type":"t"}')]
        off = sa.off + combine._BODY
        sa.m[off : off + 1] = b"y"  # (the id's first byte changed: the CRC no longer fits)
        probe.words[2] = 1  # (the post hint: scan)
        assert probe.others() == []
        assert sa.post(b"x2", 8, None, b"{", b"}")
        sa.clear()  # (its owner appends it itself)
        assert probe.words[2] == 1
        assert probe.others() == []
        index = sa.index
        sa.close()
        again = combine.Slots.open(str(root), lock)
        assert again is not None and again.index == index  # (freed with the descriptor)
        again.close()
        probe.close()


def test_an_erasure_wipes_the_posts_of_dead_writers(tmp_path: Path) -> None:
    """A writer killed with its record posted leaves the bytes in its slot; an erasure
    (``redact.drop_indexes``, under the append lock) wipes every slot no live handle holds,
    and a slot claimed again starts empty, while a live handle's slot is left alone."""
    from swarmlog.file import redact

    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        lock = log._write_lock()
        dead = combine.Slots.open(str(root), lock)
        live = combine.Slots.open(str(root), lock)
        assert dead is not None and live is not None
        assert dead.post(b"x1", 7, None, b'{"content":"the secret plan","ts":', b"}")
        assert live.post(b"x2", 8, None, b'{"content":"in flight","ts":', b"}")
        dead.ticket = 1  # (close keeps an in-flight post: as a writer killed mid-post)
        dead.close()
        data = (root / combine.NAME).read_bytes()
        assert b"the secret plan" in data and b"in flight" in data
        redact.drop_indexes(str(root))
        data = (root / combine.NAME).read_bytes()
        assert b"the secret plan" not in data
        assert b"in flight" in data  # (a live post: its owner wipes it once taken)
        live.clear()
        assert b"in flight" not in (root / combine.NAME).read_bytes()
        live.close()
    # a slot claimed from a dead owner starts with none of its bytes
    root2 = tmp_path / "log2"
    with FileLog(root2, notify=False) as log:
        lock = log._write_lock()
        gone = combine.Slots.open(str(root2), lock)
        assert gone is not None and gone.post(b"x3", 9, None, b'{"c":"old words","ts":', b"}")
        gone.ticket = 1
        gone.close()
        again = combine.Slots.open(str(root2), lock)
        assert again is not None and again.index == gone.index
        assert b"old words" not in (root2 / combine.NAME).read_bytes()
        again.close()


@pytest.mark.parametrize(("value", "on"), [(None, True), ("1", True), ("0", False)])
def test_combining_is_on_unless_switched_off(value: str | None, on: bool) -> None:
    """On by default since session 5 (docs/benchmarks.md); ``SWARMLOG_COMBINE=0`` turns
    it off for a process, and a writer of that process then claims no slot."""
    env = {k: v for k, v in os.environ.items() if k != combine.SWITCH_ENV}
    if value is not None:
        env[combine.SWITCH_ENV] = value
    code = (
        "import sys, tempfile\n"
        "from swarmlog import Event\n"
        "from swarmlog.file.log import FileLog\n"
        "from swarmlog.file.view import combine\n"
        "root = tempfile.mkdtemp()\n"
        "a, b = FileLog(root, notify=False), FileLog(root, notify=False)\n"
        "a.append(Event(agent='a', type='t')); b.append(Event(agent='b', type='t'))\n"
        "a.append(Event(agent='a', type='t'))  # (not alone any more: may combine)\n"
        "print(combine.COMBINING, a._slots is not None)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == [str(on), str(on)]


@pytest.mark.parametrize(
    ("cores", "env", "tries"),
    [
        (1, None, 64),
        (4, None, 64),
        (7, None, 64),
        (8, None, combine.WAIT_MANY),
        (16, None, combine.WAIT_MANY),
        (16, "100", 100),
        (2, "100", 100),
        (16, "many", combine.WAIT_MANY),
    ],
)
def test_a_posted_writer_waits_awake_longer_on_many_cores(
    cores: int, env: str | None, tries: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that may run on ``MANY_CORES`` CPUs or more waits ``WAIT_MANY`` tries
    before it sleeps in flock, one on fewer ``SPIN_MAX`` (as before session 6);
    ``SWARMLOG_POST_WAIT`` (digits only) sets it. A fresh handle takes it as its most."""
    monkeypatch.delenv(combine.WAIT_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(combine.WAIT_ENV, env)
    assert combine.SPIN_MAX == 64
    assert combine.wait_tries(cores) == tries
    here = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as d:
        slots = combine.Slots.open(d, os.open(os.path.join(d, "lock"), os.O_RDWR | os.O_CREAT))
        assert slots is not None
        assert slots.wait == slots.wait_max == combine.wait_tries(here)


@pytest.mark.parametrize(
    ("cores", "env", "crowd"),
    [
        (1, None, 3),
        (2, None, 5),
        (7, None, 15),
        (8, None, combine.CROWD_MANY),
        (16, None, 6),
        (2, "0", 0),
        (16, "9", 9),
        (2, "x", 5),
    ],
)
def test_few_writers_per_core_do_not_post(
    cores: int, env: str | None, crowd: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session 7: on fewer than ``MANY_CORES`` CPUs a writer posts only once more than two
    writers per core share the log (``crowd_at``); on many cores from ``CROWD_MANY`` (6,
    session 9); ``SWARMLOG_POST_CROWD`` (digits only) sets it."""
    monkeypatch.delenv(combine.CROWD_ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(combine.CROWD_ENV, env)
    assert combine.crowd_at(cores) == crowd
    with tempfile.TemporaryDirectory() as d:
        lock = os.open(os.path.join(d, "lock"), os.O_RDWR | os.O_CREAT)
        slots = combine.Slots.open(d, lock)
        assert slots is not None
        assert slots.crowd == combine.crowd_at(len(os.sched_getaffinity(0)))
        slots.close()
        os.close(lock)


@pytest.mark.parametrize(
    ("cores", "env", "sticky", "nap"),
    [
        (2, None, 0, 0.0),
        (7, None, 0, 0.0),
        (8, None, 64, 20e-6),
        (16, None, 64, 20e-6),
        (16, "0", 0, 0.0),
        (2, "5", 5, 5e-6),
        (16, "x", 64, 20e-6),
    ],
)
def test_a_holder_stays_and_posters_nap_on_many_cores(
    cores: int, env: str | None, sticky: int, nap: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Session 9: from ``MANY_CORES`` CPUs on, a holder that combined looks again up to
    ``STICKY_MANY`` times and a posted writer sleeps ``NAP_MANY`` us between its tries;
    on fewer neither (as measured on 2 cores); ``SWARMLOG_COMBINE_STICKY`` and
    ``SWARMLOG_POST_NAP`` (digits only) set them."""
    for name in (combine.STICKY_ENV, combine.NAP_ENV):
        monkeypatch.delenv(name, raising=False)
        if env is not None:
            monkeypatch.setenv(name, env)
    assert (combine.STICKY_MANY, combine.NAP_MANY) == (64, 20)
    assert combine.sticky_rounds(cores) == sticky
    assert combine.nap_seconds(cores) == pytest.approx(nap)


def test_live_writers_are_counted_across_processes(tmp_path: Path) -> None:
    """``Slots.live`` counts the handles holding a slot, in any process; one killed with
    kill -9 stops counting (the kernel dropped its slot's lock)."""
    root = tmp_path / "log"
    with FileLog(root, notify=False) as log:
        log.append(Event(agent="x", type="t", id="first"))
        lock = log._write_lock()
        mine = combine.Slots.open(str(root), lock)
        assert mine is not None
        base = mine.live()  # (this one, and the log handle's own if it claimed one)
        assert base == 1 + (log._slots is not None)
        code = (
            "import sys, os\n"
            "from swarmlog.file.view import combine\n"
            "fd = os.open(os.path.join(sys.argv[1], 'lock'), os.O_RDWR)\n"
            "s = [combine.Slots.open(sys.argv[1], fd) for _ in range(2)]\n"
            "print(sum(x is not None for x in s), flush=True)\n"
            "sys.stdin.read()\n"
        )
        child = subprocess.Popen(
            [sys.executable, "-c", code, str(root)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == b"2"
            assert mine.live() == base + 2
            other = combine.Slots.open(str(root), lock)
            assert other is not None and mine.live() == other.live() == base + 3
            other.close()
            assert mine.live() == base + 2
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=60)
            assert mine.live() == base
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
        mine.close()


@pytest.mark.parametrize(("crowd", "posts"), [("0", True), ("5", False)])
def test_a_waiter_posts_only_where_crowded(
    tmp_path: Path, crowd: str, posts: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With two writers and a crowd of five, a writer that finds the lock busy waits for
    it without posting (its slot stays free); with a crowd of 0 it posts. Either way its
    append completes once the lock is let go, at the next seq."""
    monkeypatch.setenv(combine.CROWD_ENV, crowd)
    monkeypatch.setenv(combine.SWITCH_ENV, "1")
    root = tmp_path / "log"
    with FileLog(root, notify=False) as a, FileLog(root, notify=False) as b:
        a.append(Event(agent="a", type="t", id="a0"))
        b.append(Event(agent="b", type="t", id="b0"))
        a.append(Event(agent="a", type="t", id="a1"))  # (neither is alone now)
        b.append(Event(agent="b", type="t", id="b1"))
        lock = a._write_lock()
        fcntl.flock(lock, fcntl.LOCK_EX)  # (a holds the append lock)
        got: list[int] = []
        t = threading.Thread(
            target=lambda: got.append(b.append(Event(agent="b", id="b2", type="t")).seq)
        )
        t.start()
        try:
            deadline = time.monotonic() + 30
            seen = False
            while time.monotonic() < deadline and not seen:
                slots = b._slots
                seen = slots is not None and slots.words[slots.off // 8] & 3 == combine.POSTED
                if not posts and slots is not None and time.monotonic() > deadline - 29:
                    break  # (a second of waiting, never posted)
                time.sleep(0.001)
            assert seen is posts
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
            t.join(timeout=60)
        assert got == [5]
        assert [e.id for e in b.read()] == ["a0", "b0", "a1", "b1", "b2"]
