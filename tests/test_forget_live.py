"""A forget while other processes append and follow (trust work: "concurrent appenders and
followers during a forget keep working; followers see tombstones on re-read, never a torn
file"). Real processes: two appenders and a follower, forked, against the rewrite.
"""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path
from typing import Any

import pytest

from swarmlog import Event, FileLog, open_log
from swarmlog.redaction import TOMBSTONE, kind_of
from synthesizer import Swarm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

CTX = mp.get_context("fork")
MARK = "ZQXLIVEMARK"
PER_WRITER = 200


def _writer(root: str, w: int, stop: Any, progress: Any, results: Any) -> None:
    """Append ``s<w>-<i>`` until ``stop`` is set (at least ``PER_WRITER``); put the seqs."""
    log = open_log(root)
    seqs: list[int] = []
    i = 0
    while i < PER_WRITER or not stop.is_set():
        ev = Event(agent=f"w{w}", type="test.event", id=f"s{w}-{i}", body={"i": i})
        seqs.append(log.append(ev).seq or 0)
        i += 1
        if i == 20:
            progress.release()
    log.close()
    results.put((w, seqs))


def _follow(root: str, done: Any, out: Any) -> None:
    """Follow from seq 1 until ``done`` (every writer finished), then drain; put the
    (seq, id) seen."""
    log = open_log(root)
    seen: list[tuple[int, str]] = []
    out.put("ready")
    last = False
    while not last:
        last = done.is_set()
        for ev in log.follow(seen[-1][0] + 1 if seen else 1, timeout=0.5):
            seen.append((ev.seq or 0, ev.id))
    out.put(seen)
    log.close()


def test_appenders_and_a_follower_keep_working_through_a_forget(tmp_path: Path) -> None:
    root = tmp_path / "swarm"
    sw = Swarm.open(root, segment_bytes=4096)
    try:
        for i in range(40):
            sw.agent("victim").share(f"{MARK}{i} note about the vault", category="note")
            sw.agent("other").share(f"other memory {i} on the release train", category="ops")
        sw.synthesize()
    finally:
        sw.close()
    stop, done, progress = CTX.Event(), CTX.Event(), CTX.Semaphore(0)
    results: mp.Queue[tuple[int, list[int]]] = CTX.Queue()
    writers = [
        CTX.Process(target=_writer, args=(str(root), w, stop, progress, results)) for w in range(2)
    ]
    out: mp.Queue[object] = CTX.Queue()
    fol = CTX.Process(target=_follow, args=(str(root), done, out))
    fol.start()
    assert out.get(timeout=60) == "ready"
    for p in writers:
        p.start()
    for _ in writers:
        assert progress.acquire(timeout=60)  # both are appending now
    sw = Swarm.open(root)
    try:
        res = sw.forget(agent="victim")
    finally:
        sw.close()
    stop.set()  # (the writers append on through the forget, and stop only after it)
    seqs = dict(results.get(timeout=120) for _ in writers)
    for p in writers:
        p.join(timeout=30)
    done.set()
    seen = out.get(timeout=60)
    fol.join(timeout=30)
    assert res.redacted >= 40
    for w, s in seqs.items():
        assert s == sorted(s) and len(s) >= PER_WRITER
        assert s[0] < res.intent_seq < s[-1], f"writer {w} appended before and after"
    log = FileLog(root)
    try:
        rep = log.verify()
        assert rep.ok, rep.problems
        evs = list(log.read())
        assert [ev.seq for ev in evs] == list(range(1, len(evs) + 1))
        ids = [ev.id for ev in evs]
        for w in range(2):
            assert [i for i in ids if i.startswith(f"s{w}-")] == [
                f"s{w}-{i}" for i in range(len(seqs[w]))
            ]
            assert [ev.seq for ev in evs if ev.id.startswith(f"s{w}-")] == seqs[w]
        assert not [ev for ev in evs if ev.agent == "victim"]  # a pseudonym replaced it
        gone = {ev.agent for ev in evs if ev.agent.startswith("~erased-")}
        victim = [ev for ev in evs if ev.agent in gone and ev.type == "memory.shared"]
        assert victim and all(kind_of(ev.envelope) == TOMBSTONE for ev in victim)
    finally:
        log.close()
    # the follower saw every seq once, in order, and never a torn or corrupt file
    assert [s for s, _ in seen] == list(range(1, len(evs) + 1))
    # ids as they were when it read them: the victim's (chosen) ids are pseudonyms since
    assert all(i == j or j.startswith("~erased-") for (_, i), j in zip(seen, ids, strict=True))
    assert not any(MARK.encode() in p.read_bytes() for p in root.rglob("*") if p.is_file())
