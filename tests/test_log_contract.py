"""The Log contract (DESIGN 3, contract.py R1-R6), checked on every backend with real processes.

Only ``open_log(target)`` and the public Log methods are used here, so the same tests hold
the JetStream backend and the in-process MemoryLog (the reference) to the same promises as
FileLog. Tests that need other processes skip MemoryLog (see ``tests/conftest.py``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event, EventIdReused, VersionConflict
from tests import logworkers as w
from tests.conftest import LogTarget

SPAWN = mp.get_context("spawn")


def ev(agent: str = "a1", **kw: Any) -> Event:
    return Event(agent=agent, type="test.event", **kw)


def run_all(procs: list[Any]) -> None:
    for p in procs:
        p.start()
    for p in procs:
        p.join(240)
        assert p.exitcode == 0, f"worker {p.name} exited with {p.exitcode}"


def test_seq_gapless_and_stored_event_fields(log_target: LogTarget) -> None:
    with log_target.open() as log:
        assert log.last_seq == 0
        assert list(log.read()) == []
        a = log.append(ev(key="k1", body={"x": 1}, session="s1", causes=[]))
        b = log.append(ev(agent="a2", body={"y": [1, 2]}, thread="t"))
        assert (a.seq, b.seq) == (1, 2)
        assert a.swarm == log.name and a.session == "s1" and a.key == "k1"
        got = list(log.read())
        assert got == [a, b]
        assert got[1].body == {"y": [1, 2]} and got[1].thread == "t"
        assert log.last_seq == 2


def test_concurrent_writers_gapless_exactly_once(log_target: LogTarget) -> None:
    """Acceptance 1: 4 x 10,000 single appends + 2 x 100 batches of 100, all at once."""
    pool = SPAWN.Pool(6)
    singles = [pool.apply_async(w.single_writer, (log_target.target, i, 10_000)) for i in range(4)]
    batches = [pool.apply_async(w.batch_writer, (log_target.target, i, 100, 100)) for i in range(2)]
    seqs = [r.get(300) for r in singles]
    firsts = [r.get(300) for r in batches]
    pool.close()
    pool.join()
    n = 4 * 10_000 + 2 * 100 * 100
    with log_target.open() as log:
        stored = list(log.read())
        assert [e.seq for e in stored] == list(range(1, n + 1))
        ids = [e.id for e in stored]
        assert len(set(ids)) == n
        expect_ids = {f"s{i}-{j}" for i in range(4) for j in range(10_000)}
        expect_ids |= {f"b{i}-{b}-{j}" for i in range(2) for b in range(100) for j in range(100)}
        assert set(ids) == expect_ids
        by_id = {e.id: e.seq for e in stored}
        for i, s in enumerate(seqs):
            assert s == sorted(s)  # each writer's own appends are ordered
            assert all(by_id[f"s{i}-{j}"] == s[j] for j in range(10_000))
        for i, f in enumerate(firsts):
            for b, first in enumerate(f):  # a batch occupies consecutive seqs
                assert [by_id[f"b{i}-{b}-{j}"] for j in range(100)] == list(
                    range(first, first + 100)
                )
        assert log.last_seq == n
        rep = log.verify()
        assert rep.ok, rep.problems
        assert rep.events == n and rep.last_seq == n


def test_read_ranges(log_target: LogTarget) -> None:
    with log_target.open() as log:
        log.append_many([ev(body={"i": i}) for i in range(1, 31)])
        for i in range(31, 51):
            log.append(ev(body={"i": i}))
        seqs = lambda it: [e.seq for e in it]  # noqa: E731
        assert seqs(log.read()) == list(range(1, 51))
        assert seqs(log.read(10)) == list(range(10, 51))
        assert seqs(log.read(10, 12)) == [10, 11, 12]
        assert seqs(log.read(29, 32)) == [29, 30, 31, 32]  # splits a stored batch on request
        assert seqs(log.read(50, 50)) == [50]
        assert seqs(log.read(0, 2)) == [1, 2]
        assert seqs(log.read(51)) == []
        assert seqs(log.read(40, 39)) == []
        assert seqs(log.read(45, 1000)) == list(range(45, 51))
        assert all(e.body["i"] == e.seq for e in log.read())


def test_idempotent_append(log_target: LogTarget) -> None:
    """Acceptance 5 (one process, and across a reopen): the same id and content is a
    retry, answered with the stored original (its seq, the log's ts)."""
    with log_target.open() as log:
        first = log.append(ev(id="same-id", body={"v": 1}))
        log.append(ev())
        again = log.append(ev(id="same-id", body={"v": 1}, ts=1.0))  # (ts: the log's own)
        assert again == first
        mixed = log.append_many([ev(id="new-1"), ev(id="same-id", body={"v": 1}), ev(id="new-2")])
        assert [e.seq for e in mixed] == [3, first.seq, 4]
    with log_target.open() as log:
        assert log.append(ev(id="new-2")).seq == 4
        assert log.last_seq == 4
        assert [e.id for e in log.read()].count("same-id") == 1


def test_id_reused_for_other_content_is_refused(log_target: LogTarget) -> None:
    """Issue 28: an id that names a stored event cannot name other content; the error is
    one line naming the stored seq, and a refused batch writes none of its events."""
    with log_target.open() as log:
        first = log.append(ev(id="same-id", key="k", body={"v": 1, "t": [1, 2]}))
        log.append(ev())
        with pytest.raises(EventIdReused) as ei:
            log.append(ev(id="same-id", key="k", body={"v": 2, "t": [1, 2]}))
        msg = str(ei.value)
        assert "\n" not in msg and "seq 1 " in msg and "(body differ)" in msg, msg
        assert (ei.value.event_id, ei.value.seq, ei.value.fields) == ("same-id", 1, ["body"])
        for other in (
            ev(agent="a2", id="same-id", key="k", body={"v": 1, "t": [1, 2]}),
            ev(id="same-id", body={"v": 1, "t": [1, 2]}),  # (no key)
            ev(id="same-id", key="k", body={"v": True, "t": [1, 2]}),  # (true is not 1)
            Event(agent="a1", type="test.other", id="same-id", key="k", body={"v": 1, "t": [1, 2]}),
            ev(id="same-id", key="k", body={"v": 1, "t": [1, 2]}, session="s"),
        ):
            with pytest.raises(EventIdReused):
                log.append(other)
        with pytest.raises(EventIdReused):  # atomic: the new events are not written either
            log.append_many([ev(id="n1"), ev(id="same-id", key="k", body={"v": 3}), ev(id="n2")])
        assert log.last_seq == 2
        assert log.append(ev(id="same-id", key="k", body={"t": (1, 2), "v": 1})) == first
    with log_target.open() as log:  # a new handle knows the id from the log itself
        with pytest.raises(EventIdReused, match="seq 1 with different content"):
            log.append_many([ev(id="same-id", key="k", body={})])
        assert [e.id for e in log.read()] == ["same-id", log.record_id(2)]


def test_id_reused_from_two_processes_at_once(log_target: LogTarget) -> None:
    """Issue 28: two processes racing one id with different content: exactly one is
    stored and acknowledged, the other gets EventIdReused naming the winner's seq."""
    with log_target.open() as log:
        log.append(ev())
    rounds = 10
    barrier = SPAWN.Barrier(2)
    results = SPAWN.Queue()
    procs = [
        SPAWN.Process(
            target=w.reused_id_appender, args=(log_target.target, rounds, barrier, results)
        )
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    got = [results.get(120) for _ in range(2 * rounds)]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with log_target.open() as log:
        stored = {e.id: e for e in log.read()}
        assert log.last_seq == 1 + rounds
    for r in range(rounds):
        mine = sorted(g for g in got if g[0] == r)
        assert [g[1] for g in mine] == ["ok", "reused"], mine
        winner = stored[f"rival{r}"]
        assert mine[0][2] == mine[1][2] == winner.seq  # the refusal names the stored seq
        assert winner.body == {"pid": mine[0][3]}  # what is stored is what was acknowledged


def test_idempotent_append_two_processes_at_once(log_target: LogTarget) -> None:
    """Acceptance 5: the same id from two processes at the same moment is stored once."""
    with log_target.open() as log:
        log.append(ev())
    rounds = 15
    barrier = SPAWN.Barrier(2)
    results = SPAWN.Queue()
    procs = [
        SPAWN.Process(target=w.same_id_appender, args=(log_target.target, rounds, barrier, results))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    got = sorted(results.get(60) for _ in range(2 * rounds))
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for r in range(rounds):
        assert got[2 * r] == got[2 * r + 1]  # both twins got the same stored event
    with log_target.open() as log:
        ids = [e.id for e in log.read()]
        assert len(ids) == 1 + rounds and len(set(ids)) == len(ids)


def test_expectations(log_target: LogTarget) -> None:
    with log_target.open() as log:
        assert log.version("k") == 0
        a = log.append(ev(key="k"), expect={"k": 0})
        assert log.version("k") == a.seq
        log.append(ev(key="other"))
        with pytest.raises(VersionConflict) as ei:
            log.append(ev(key="k"), expect={"k": 0})
        assert (ei.value.key, ei.value.expected, ei.value.actual) == ("k", 0, a.seq)
        with pytest.raises(VersionConflict):
            log.append_many([ev(key="k"), ev(key="z")], expect={"k": a.seq, "z": 5})
        assert log.last_seq == 2 and log.version("z") == 0  # nothing written
        out = log.append_many([ev(key="k"), ev(key="k")], expect={"k": a.seq, "z": 0})
        assert log.version("k") == out[1].seq == 4
        assert log.append_many([], expect={"k": 4}) == []
        with pytest.raises(VersionConflict):
            log.append_many([], expect={"k": 3})
    with log_target.open() as log:  # versions survive a reopen
        assert log.version("k") == 4 and log.version("other") == 2


def test_cas_race_eight_processes(log_target: LogTarget) -> None:
    """Acceptance 4: 8 processes race with the same expectation; exactly one wins."""
    rounds = 12
    with log_target.open() as log:
        log.append(ev(key="hot"))
    barrier = SPAWN.Barrier(8)
    results = SPAWN.Queue()
    procs = [
        SPAWN.Process(target=w.cas_racer, args=(log_target.target, "hot", rounds, barrier, results))
        for _ in range(8)
    ]
    for p in procs:
        p.start()
    got = [results.get(120) for _ in range(8 * rounds)]
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    for r in range(rounds):
        mine = [g for g in got if g[0] == r]
        wins = [g for g in mine if g[1] == "ok"]
        assert len(wins) == 1, mine
        winner_seq = wins[0][3]
        assert len({g[2] for g in mine}) == 1  # everybody expected the same version
        for g in mine:
            if g[1] == "conflict":
                assert g[3] == winner_seq
    with log_target.open() as log:
        assert log.last_seq == 1 + rounds
        assert log.version("hot") == 1 + rounds


def test_batches_are_atomic_for_readers(log_target: LogTarget) -> None:
    """R5: a reader in another process never sees part of a batch."""
    out = SPAWN.Queue()
    reader = SPAWN.Process(target=w.snapshot_reader, args=(log_target.target, 2.0, out))
    reader.start()
    w.batch_writer(log_target.target, 7, 60, 50)
    reads, bad = out.get(60)
    reader.join(30)
    assert reader.exitcode == 0
    assert bad == [] and reads > 1


def test_follow_in_another_process(log_target: LogTarget) -> None:
    """R6: a follower elsewhere gets every event once, in order, as it is appended."""
    with log_target.open() as log:
        for i in range(5):
            log.append(ev(body={"i": i}))
        q = SPAWN.Queue()
        p = SPAWN.Process(target=w.follower, args=(log_target.target, 3, 303, 20.0, q))
        p.start()
        assert q.get(30)[0] == "ready"
        for i in range(100):
            log.append(ev(body={"i": i}))
        for _ in range(10):
            log.append_many([ev() for _ in range(20)])
        seen, _ = q.get(60)
        p.join(30)
        assert [s for s, _ in seen] == list(range(3, 306))
        assert [i for _, i in seen] == [e.id for e in log.read(3)]


def test_follow_timeout_ends(log_target: LogTarget) -> None:
    with log_target.open() as log:
        log.append(ev())
        got = list(log.follow(1, timeout=0.3))
        assert [e.seq for e in got] == [1]
        assert list(log.follow(2, timeout=0.2)) == []


def test_verify_clean_and_counts(log_target: LogTarget) -> None:
    with log_target.open() as log:
        log.append_many([ev() for _ in range(7)])
        rep = log.verify()
        assert rep.ok and rep.events == 7 and rep.last_seq == 7
        assert rep.to_dict()["ok"] is True


def test_read_batches_are_read_as_stored_mappings(log_target: LogTarget) -> None:
    """The fold's read (Log.read_batches): the same records as read(), in chunks."""
    with log_target.open() as log:
        log.append_many([ev(body={"i": i}, key=f"k{i % 3}") for i in range(1, 41)])
        for i in range(41, 61):
            log.append(ev(body={"i": i}))
        for lo, hi in ((1, None), (7, 33), (40, 41), (60, 60), (61, None), (9, 8)):
            chunks = list(log.read_batches(lo, hi))
            assert all(isinstance(c, list) and c for c in chunks)
            flat = [d for c in chunks for d in c]
            assert flat == [e.envelope for e in log.read(lo, hi)]
            assert flat == [e.to_dict() for e in log.read(lo, hi)]


def test_threads_on_separate_handles_gapless_exactly_once(log_target: LogTarget) -> None:
    """R1/R3/R5 between threads of one process (each with its own handle)."""
    handles = [log_target.open() for _ in range(4)]

    def write(i: int) -> None:
        log = handles[i]
        for j in range(50):
            if j % 10 == 0:
                log.append_many([ev(id=f"t{i}-{j}-{k}") for k in range(5)])
            else:
                log.append(ev(id=f"t{i}-{j}"))

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    with log_target.open() as log:
        stored = list(log.read())
        assert [e.seq for e in stored] == list(range(1, 4 * (45 + 25) + 1))
        assert len({e.id for e in stored}) == len(stored)
        by_id = {e.id: e.seq for e in stored}
        for i in range(4):
            for j in range(0, 50, 10):
                seqs = [by_id[f"t{i}-{j}-{k}"] for k in range(5)]
                assert seqs == list(range(seqs[0], seqs[0] + 5))
    for h in handles:
        h.close()


def test_follow_wakes_in_another_thread(log_target: LogTarget) -> None:
    """R6 with a follower thread: each event once, in order, as it is appended."""
    with log_target.open() as log:
        log.append(ev(body={"i": 0}))
        seen: list[int] = []
        ready = threading.Event()

        def follow() -> None:
            f = log_target.open()
            ready.set()
            for e in f.follow(1, timeout=30.0):
                seen.append(e.body["i"])
                if len(seen) == 31:
                    break
            f.close()

        t = threading.Thread(target=follow)
        t.start()
        ready.wait(30)
        for i in range(1, 11):
            log.append(ev(body={"i": i}))
        log.append_many([ev(body={"i": i}) for i in range(11, 31)])
        t.join(60)
        assert seen == list(range(31))


def test_checkpoints_round_trip(log_target: LogTarget) -> None:
    with log_target.open() as log:
        store = log.checkpoints
        assert store.latest() is None
        log.append_many([Event(agent="a", type="test.event") for _ in range(9)])
        info = store.save(3, b"three", "test/1", "c1")
        assert info.swarm == log.swarm_id != "" and info.event == log.record_id(3)
        store.save(9, b"nine", "test/1", "c1")
        assert [i.seq for i in store.list()] == [3, 9]
        latest = store.latest()
        assert latest is not None and (latest.seq, latest.data) == (9, b"nine")
        below = store.latest(8, "test/1", "c1")
        assert below is not None and below.data == b"three"
        assert store.latest(format="other/1") is None and store.latest(2) is None
        assert store.invalidate_after(4) == 1
        assert [i.seq for i in store.list()] == [3]


def test_capabilities_are_asked_of_the_log(log_target: LogTarget) -> None:
    """``Log.compactable`` and ``CheckpointStore.local_dir``: a FileLog compacts and keeps
    its checkpoints as local files; the other backends give the documented "no"."""
    with log_target.open() as log:
        store = log.checkpoints
        if log_target.backend == "file":
            assert log.compactable()
            assert store.local_dir() == Path(log_target.where) / "checkpoints"
            store.save(0, b"x", "test/1")
            assert [p.name for p in Path(log_target.where, "checkpoints").iterdir()]
        elif log_target.backend == "nats":  # a cache of the object store's side files
            assert not log.compactable()
            cache = store.local_dir()
            assert cache is not None and cache.is_dir()
            assert str(cache).startswith(os.environ["SWARMLOG_CACHE_DIR"])
        else:
            assert not log.compactable()
            assert store.local_dir() is None
