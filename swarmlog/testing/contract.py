"""The Log contract as a test suite a backend author runs against a backend.

``LogContract`` holds the checks of the promises in ``swarmlog.contract`` (R1-R6) as
``test_*`` methods. Subclass it, say how to make a fresh, empty log, and run it::

    class TestMyLog(LogContract):          # pytest collects it by its Test* name
        def make_log(self) -> Log:
            return MyLog()
        def reopen(self, log: Log) -> Log:  # optional: another handle on the same log
            return log.handle()

or without pytest: ``run_contract(TestMyLog)``. The three shipped backends run this same
suite (``tests/test_log_contract.py``); ``docs/backends.md`` runs it on a backend of a
few dozen lines.

What a subclass may give besides ``make_log`` (each default skips the checks needing it):

* ``reopen(log)``: a new handle on the same log (what a second ``open_log`` gives):
  retries and versions must hold across handles.
* ``target(log)``: the ``open_log`` target another process opens the log by; the checks
  with several processes (races, followers elsewhere) run only with one.

The module imports without pytest: the checks are plain asserts, a skip raises
``unittest.SkipTest`` (which pytest and unittest both report as a skip), and the few
"this must raise" checks use ``raises`` below.
"""

from __future__ import annotations

import multiprocessing as mp
import re
import threading
import unittest
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from swarmlog.contract import Log
from swarmlog.envelope import Event
from swarmlog.errors import EventIdReused, VersionConflict
from swarmlog.testing import workers as w

SPAWN = mp.get_context("spawn")


def ev(agent: str = "a1", **kw: Any) -> Event:
    """A test event (type ``test.event``) of ``agent``."""
    return Event(agent=agent, type="test.event", **kw)


class Raised:
    """What ``raises`` caught (``value``: the exception)."""

    value: Any = None


@contextmanager
def raises(kind: type[BaseException], match: str | None = None) -> Iterator[Raised]:
    """Assert the block raises ``kind`` (its message matching ``match``, a regex)."""
    got = Raised()
    try:
        yield got
    except kind as e:
        got.value = e
        if match is not None:
            assert re.search(match, str(e)), f"{kind.__name__}({e}) does not match {match!r}"
    else:
        raise AssertionError(f"did not raise {kind.__name__}")


def run_all(procs: list[Any]) -> None:
    for p in procs:
        p.start()
    for p in procs:
        p.join(240)
        assert p.exitcode == 0, f"worker {p.name} exited with {p.exitcode}"


class LogContract:
    """The Log contract's checks; subclass and implement ``make_log`` (module docstring)."""

    concurrent_singles = 10_000
    """Appends per single-event writer in the four-writer race (the acceptance size)."""
    concurrent_batches = 100
    """Batches of 100 per batch writer in that race."""

    _handles: list[Log]

    # ------------------------------------------------------------ what a backend gives

    def make_log(self) -> Log:
        """A fresh, empty log (called once per check)."""
        raise NotImplementedError

    def reopen(self, log: Log) -> Log:
        """Another handle on ``log``; the default skips the checks that need one."""
        raise unittest.SkipTest("this backend gives no second handle on a log (reopen)")

    def target(self, log: Log) -> str | None:
        """The ``open_log`` target of ``log`` for other processes; None: in-process only."""
        return None

    # ------------------------------------------------------------ plumbing

    def setup_method(self, method: Any = None) -> None:
        self._handles = []

    def teardown_method(self, method: Any = None) -> None:
        for h in reversed(getattr(self, "_handles", [])):
            h.close()
        self._handles = []

    def _log(self) -> Log:
        log = self.make_log()
        self._handles.append(log)
        return log

    def _again(self, log: Log) -> Log:
        h = self.reopen(log)
        self._handles.append(h)
        return h

    def _target(self, log: Log) -> str:
        where = self.target(log)
        if where is None:
            raise unittest.SkipTest("this log lives in one process: no other can open it")
        return where

    # ------------------------------------------------------------ R1, reads

    def test_seq_gapless_and_stored_event_fields(self) -> None:
        log = self._log()
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

    def test_read_ranges(self) -> None:
        log = self._log()
        log.append_many([ev(body={"i": i}) for i in range(1, 31)])
        for i in range(31, 51):
            log.append(ev(body={"i": i}))

        def seqs(it: Iterator[Event]) -> list[int | None]:
            return [e.seq for e in it]

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

    def test_read_batches_are_read_as_stored_mappings(self) -> None:
        """The fold's read (Log.read_batches): the same records as read(), in chunks."""
        log = self._log()
        log.append_many([ev(body={"i": i}, key=f"k{i % 3}") for i in range(1, 41)])
        for i in range(41, 61):
            log.append(ev(body={"i": i}))
        for lo, hi in ((1, None), (7, 33), (40, 41), (60, 60), (61, None), (9, 8)):
            chunks = list(log.read_batches(lo, hi))
            assert all(isinstance(c, list) and c for c in chunks)
            flat = [d for c in chunks for d in c]
            assert flat == [e.envelope for e in log.read(lo, hi)]
            assert flat == [e.to_dict() for e in log.read(lo, hi)]

    def test_verify_clean_and_counts(self) -> None:
        log = self._log()
        log.append_many([ev() for _ in range(7)])
        rep = log.verify()
        assert rep.ok and rep.events == 7 and rep.last_seq == 7
        assert rep.to_dict()["ok"] is True

    # ------------------------------------------------------------ R3, ids

    def test_idempotent_append(self) -> None:
        """The same id and content is a retry, answered with the stored original (its
        seq, the log's ts), on this handle and on another."""
        log = self._log()
        first = log.append(ev(id="same-id", body={"v": 1}))
        log.append(ev())
        again = log.append(ev(id="same-id", body={"v": 1}, ts=1.0))  # (ts: the log's own)
        assert again == first
        mixed = log.append_many([ev(id="new-1"), ev(id="same-id", body={"v": 1}), ev(id="new-2")])
        assert [e.seq for e in mixed] == [3, first.seq, 4]
        other = self._again(log)
        assert other.append(ev(id="new-2")).seq == 4
        assert other.last_seq == 4
        assert [e.id for e in other.read()].count("same-id") == 1

    def test_id_reused_for_other_content_is_refused(self) -> None:
        """An id that names a stored event cannot name other content; the error is one
        line naming the stored seq, and a refused batch writes none of its events."""
        log = self._log()
        first = log.append(ev(id="same-id", key="k", body={"v": 1, "t": [1, 2]}))
        log.append(ev())
        with raises(EventIdReused) as ei:
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
            with raises(EventIdReused):
                log.append(other)
        with raises(EventIdReused):  # atomic: the new events are not written either
            log.append_many([ev(id="n1"), ev(id="same-id", key="k", body={"v": 3}), ev(id="n2")])
        assert log.last_seq == 2
        assert log.append(ev(id="same-id", key="k", body={"t": (1, 2), "v": 1})) == first
        again = self._again(log)  # a new handle knows the id from the log itself
        with raises(EventIdReused, match="seq 1 with different content"):
            again.append_many([ev(id="same-id", key="k", body={})])
        assert [e.id for e in again.read()] == ["same-id", again.record_id(2)]

    # ------------------------------------------------------------ R4, expectations

    def test_expectations(self) -> None:
        log = self._log()
        assert log.version("k") == 0
        a = log.append(ev(key="k"), expect={"k": 0})
        assert log.version("k") == a.seq
        log.append(ev(key="other"))
        with raises(VersionConflict) as ei:
            log.append(ev(key="k"), expect={"k": 0})
        assert (ei.value.key, ei.value.expected, ei.value.actual) == ("k", 0, a.seq)
        with raises(VersionConflict):
            log.append_many([ev(key="k"), ev(key="z")], expect={"k": a.seq, "z": 5})
        assert log.last_seq == 2 and log.version("z") == 0  # nothing written
        out = log.append_many([ev(key="k"), ev(key="k")], expect={"k": a.seq, "z": 0})
        assert log.version("k") == out[1].seq == 4
        assert log.append_many([], expect={"k": 4}) == []
        with raises(VersionConflict):
            log.append_many([], expect={"k": 3})
        again = self._again(log)  # versions are the log's, not the handle's
        assert again.version("k") == 4 and again.version("other") == 2

    # ------------------------------------------------------------ R6, follow

    def test_follow_timeout_ends(self) -> None:
        log = self._log()
        log.append(ev())
        got = list(log.follow(1, timeout=0.3))
        assert [e.seq for e in got] == [1]
        assert list(log.follow(2, timeout=0.2)) == []

    def test_follow_wakes_in_another_thread(self) -> None:
        """R6 with a follower thread: each event once, in order, as it is appended."""
        log = self._log()
        log.append(ev(body={"i": 0}))
        f = self._again(log)
        seen: list[int] = []
        ready = threading.Event()

        def follow() -> None:
            ready.set()
            for e in f.follow(1, timeout=30.0):
                seen.append(e.body["i"])
                if len(seen) == 31:
                    break

        t = threading.Thread(target=follow)
        t.start()
        ready.wait(30)
        for i in range(1, 11):
            log.append(ev(body={"i": i}))
        log.append_many([ev(body={"i": i}) for i in range(11, 31)])
        t.join(60)
        assert seen == list(range(31))

    # ------------------------------------------------------------ R1/R3/R5, threads

    def test_threads_on_separate_handles_gapless_exactly_once(self) -> None:
        """R1/R3/R5 between threads of one process (each with its own handle)."""
        log = self._log()
        handles = [self._again(log) for _ in range(4)]

        def write(i: int) -> None:
            h = handles[i]
            for j in range(50):
                if j % 10 == 0:
                    h.append_many([ev(id=f"t{i}-{j}-{k}") for k in range(5)])
                else:
                    h.append(ev(id=f"t{i}-{j}"))

        threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        stored = list(log.read())
        assert [e.seq for e in stored] == list(range(1, 4 * (45 + 25) + 1))
        assert len({e.id for e in stored}) == len(stored)
        by_id = {e.id: e.seq for e in stored}
        for i in range(4):
            for j in range(0, 50, 10):
                seqs = [by_id[f"t{i}-{j}-{k}"] for k in range(5)]
                assert seqs == list(range(seqs[0] or 0, (seqs[0] or 0) + 5))

    # ------------------------------------------------------------ checkpoints

    def test_checkpoints_round_trip(self) -> None:
        log = self._log()
        store = log.checkpoints
        assert store.latest() is None
        log.append_many([ev() for _ in range(9)])
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

    # ------------------------------------------------------------ other processes

    def test_concurrent_writers_gapless_exactly_once(self) -> None:
        """Four single-event writers and two batch writers in other processes, at once:
        every event stored once, seqs gapless, each writer's own appends in order, each
        batch on consecutive seqs."""
        log = self._log()
        where = self._target(log)
        singles_n, batches_n = self.concurrent_singles, self.concurrent_batches
        pool = SPAWN.Pool(6)
        singles = [pool.apply_async(w.single_writer, (where, i, singles_n)) for i in range(4)]
        batches = [
            pool.apply_async(w.batch_writer, (where, i, batches_n, 100)) for i in range(2)
        ]
        seqs = [r.get(300) for r in singles]
        firsts = [r.get(300) for r in batches]
        pool.close()
        pool.join()
        n = 4 * singles_n + 2 * batches_n * 100
        stored = list(log.read())
        assert [e.seq for e in stored] == list(range(1, n + 1))
        ids = [e.id for e in stored]
        assert len(set(ids)) == n
        expect_ids = {f"s{i}-{j}" for i in range(4) for j in range(singles_n)}
        expect_ids |= {
            f"b{i}-{b}-{j}" for i in range(2) for b in range(batches_n) for j in range(100)
        }
        assert set(ids) == expect_ids
        by_id = {e.id: e.seq for e in stored}
        for i, s in enumerate(seqs):
            assert s == sorted(s)  # each writer's own appends are ordered
            assert all(by_id[f"s{i}-{j}"] == s[j] for j in range(singles_n))
        for i, f in enumerate(firsts):
            for b, first in enumerate(f):  # a batch occupies consecutive seqs
                got = [by_id[f"b{i}-{b}-{j}"] for j in range(100)]
                assert got == list(range(first, first + 100))
        assert log.last_seq == n
        rep = log.verify()
        assert rep.ok, rep.problems
        assert rep.events == n and rep.last_seq == n

    def test_id_reused_from_two_processes_at_once(self) -> None:
        """Two processes racing one id with different content: exactly one is stored
        and acknowledged, the other gets EventIdReused naming the winner's seq."""
        log = self._log()
        where = self._target(log)
        log.append(ev())
        rounds = 10
        barrier = SPAWN.Barrier(2)
        results = SPAWN.Queue()
        procs = [
            SPAWN.Process(target=w.reused_id_appender, args=(where, rounds, barrier, results))
            for _ in range(2)
        ]
        for p in procs:
            p.start()
        got = [results.get(timeout=120) for _ in range(2 * rounds)]
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        stored = {e.id: e for e in log.read()}
        assert log.last_seq == 1 + rounds
        for r in range(rounds):
            mine = sorted(g for g in got if g[0] == r)
            assert [g[1] for g in mine] == ["ok", "reused"], mine
            winner = stored[f"rival{r}"]
            assert mine[0][2] == mine[1][2] == winner.seq  # the refusal names the stored seq
            assert winner.body == {"pid": mine[0][3]}  # what is stored is what was acknowledged

    def test_idempotent_append_two_processes_at_once(self) -> None:
        """The same id from two processes at the same moment is stored once."""
        log = self._log()
        where = self._target(log)
        log.append(ev())
        rounds = 15
        barrier = SPAWN.Barrier(2)
        results = SPAWN.Queue()
        procs = [
            SPAWN.Process(target=w.same_id_appender, args=(where, rounds, barrier, results))
            for _ in range(2)
        ]
        for p in procs:
            p.start()
        got = sorted(results.get(timeout=60) for _ in range(2 * rounds))
        for p in procs:
            p.join(60)
            assert p.exitcode == 0
        for r in range(rounds):
            assert got[2 * r] == got[2 * r + 1]  # both twins got the same stored event
        ids = [e.id for e in log.read()]
        assert len(ids) == 1 + rounds and len(set(ids)) == len(ids)

    def test_cas_race_eight_processes(self) -> None:
        """Eight processes race with the same expectation; exactly one wins each round."""
        log = self._log()
        where = self._target(log)
        rounds = 12
        log.append(ev(key="hot"))
        barrier = SPAWN.Barrier(8)
        results = SPAWN.Queue()
        procs = [
            SPAWN.Process(target=w.cas_racer, args=(where, "hot", rounds, barrier, results))
            for _ in range(8)
        ]
        for p in procs:
            p.start()
        got = [results.get(timeout=120) for _ in range(8 * rounds)]
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
        assert log.last_seq == 1 + rounds
        assert log.version("hot") == 1 + rounds

    def test_batches_are_atomic_for_readers(self) -> None:
        """R5: a reader in another process never sees part of a batch."""
        log = self._log()
        where = self._target(log)
        out = SPAWN.Queue()
        reader = SPAWN.Process(target=w.snapshot_reader, args=(where, 2.0, out))
        reader.start()
        w.batch_writer(where, 7, 60, 50)
        reads, bad = out.get(timeout=60)
        reader.join(30)
        assert reader.exitcode == 0
        assert bad == [] and reads > 1

    def test_follow_in_another_process(self) -> None:
        """R6: a follower elsewhere gets every event once, in order, as it is appended."""
        log = self._log()
        where = self._target(log)
        for i in range(5):
            log.append(ev(body={"i": i}))
        q = SPAWN.Queue()
        p = SPAWN.Process(target=w.follower, args=(where, 3, 303, 20.0, q))
        p.start()
        assert q.get(timeout=30)[0] == "ready"
        for i in range(100):
            log.append(ev(body={"i": i}))
        for _ in range(10):
            log.append_many([ev() for _ in range(20)])
        seen, _ = q.get(timeout=60)
        p.join(30)
        assert [s for s, _ in seen] == list(range(3, 306))
        assert [i for _, i in seen] == [e.id for e in log.read(3)]


class ContractResult:
    """What ``run_contract`` found: names of the checks that passed, skipped, failed."""

    def __init__(self) -> None:
        self.passed: list[str] = []
        self.skipped: dict[str, str] = {}
        self.failed: dict[str, BaseException] = {}

    @property
    def ok(self) -> bool:
        return not self.failed

    def __repr__(self) -> str:
        return (
            f"ContractResult(passed={len(self.passed)}, skipped={len(self.skipped)}, "
            f"failed={sorted(self.failed)})"
        )


def run_contract(cls: type[LogContract], *, only: str | None = None) -> ContractResult:
    """Run every check of a ``LogContract`` subclass without pytest (``only``: the
    checks whose names contain it); failures are collected, not raised."""
    result = ContractResult()
    for name in sorted(n for n in dir(cls) if n.startswith("test_")):
        if only is not None and only not in name:
            continue
        case = cls()
        case.setup_method()
        try:
            getattr(case, name)()
        except unittest.SkipTest as e:
            result.skipped[name] = str(e)
        except Exception as e:
            result.failed[name] = e
        else:
            result.passed.append(name)
        finally:
            case.teardown_method()
    return result
