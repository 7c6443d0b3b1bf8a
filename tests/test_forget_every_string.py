"""The trust work's acceptance check ("trust-erasure"): after ``swarmlog forget --agent A`` a
byte scan of the whole root (segments, archives opened and as stored, checkpoints, side
files, reports, temporaries) finds none of the strings the agent chose: its words, its
session and thread names, and its own name (a pseudonym replaces it); the log verifies;
seqs do not move; replay from a checkpoint equals replay from the start.

A board key the agent created and an event id it chose go too: keyed pseudonyms replace
them in its records, in others' later writes on the key and in the indexes built from
them (the shared writer index, the view snapshot, the archives' ids files).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from swarmlog import Event, FileLog
from synthesizer import Swarm
from synthesizer.replay import state_at
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(300)

NAMES = {
    "agent": "victim-ZQXAGNT",
    "session": "sess-ZQXSESS-divorce",
    "thread": "thread-ZQXTHRD-divorce",
}
WORDS = "ZQXWORD my lawyer meets me on tuesday about the divorce papers"


def _scan(root: Path, needles: list[bytes]) -> list[str]:
    """Files under ``root`` holding a needle, gzip files also decompressed."""
    hits = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = Path(dirpath) / n
            data = p.read_bytes()
            if n.endswith(".gz"):
                data += gzip.decompress(data)
            hits += [f"{p.relative_to(root)}: {x.decode()}" for x in needles if x in data]
    return hits


def _build(root: Path, extra: bool = False) -> None:
    sw = Swarm.open(root, segment_bytes=4096)
    try:
        v = sw.agent(NAMES["agent"], session=NAMES["session"], thread=NAMES["thread"])
        v.share(WORDS, category="note")
        v.share("the build cache lives in /var/cache/build", category="ops")
        if extra:
            v1 = sw.board.cas("door-code-ZQXKEY", 0, content="door code", agent=NAMES["agent"])
            # another agent writes on the key the victim created, and names it in a recall
            sw.board.cas("door-code-ZQXKEY", v1, value="changed on friday", agent="other")
            sw.agent("carol").reinforce("door-code-ZQXKEY")
            sw.log.append(
                Event(
                    agent=NAMES["agent"],
                    type="memory.shared",
                    id="req-ZQXID-1",
                    body={"content": "a note with a retry id", "category": "note"},
                )
            )
        for i in range(40):
            sw.agent("other", session="o").share(f"filler finding {i} on topic {i * 3}")
        sw.agent("other", session="o").share("the build cache lives in /var/cache/build")
        sw.agent("carol").recall("when does the lawyer meet about the divorce papers")
        sw.synthesize()
        sw.checkpoint(pinned=True)
    finally:
        sw.close()
    assert run_cli("--root", str(root), "config", "set", "retention.keep_checkpoints=1").code == 0
    assert run_cli("--root", str(root), "compact").code == 0
    (root / "metrics").mkdir(exist_ok=True)  # a report quoting the agent (demo --keep)
    (root / "metrics" / "swarm_memory_dashboard.md").write_text(
        run_cli("--root", str(root), "dashboard", "--format", "markdown").out
    )


def _forget_and_check(root: Path, needles: list[bytes]) -> None:
    assert list((root / "archive").glob("*.jsonl.gz")), "something was archived"
    assert set(h.split(": ")[1] for h in _scan(root, needles)) == {x.decode() for x in needles}
    log = FileLog(root)
    before = [(e.seq, e.type) for e in log.read()]
    log.close()
    r = run_cli("--root", str(root), "forget", "--agent", NAMES["agent"])
    assert r.code == 0, r.err
    assert _scan(root, needles) == []
    v = run_cli("--root", str(root), "verify")
    assert v.code == 0 and "problem" not in v.out, v.out
    with Swarm.open(root) as sw:
        after = [(e.seq, e.type) for e in sw.log.read()]
        assert after[: len(before)] == before
        assert state_at(sw.log).digest() == state_at(sw.log, from_start=True).digest()
        facts = {f.content for f in sw.refresh().facts.values()}
        assert "the build cache lives in /var/cache/build" in facts


@pytest.mark.slow
def test_no_string_the_agent_chose_survives(tmp_path: Path) -> None:
    needles = [b"ZQXWORD", b"ZQXAGNT", b"ZQXSESS", b"ZQXTHRD"]
    _build(tmp_path / "s")
    _forget_and_check(tmp_path / "s", needles)


@pytest.mark.slow
def test_keys_and_event_ids_it_chose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarmlog.file.view import snapshot

    monkeypatch.setattr(snapshot, "SAVE_AFTER", 20)  # (a view snapshot on a small log)
    root = tmp_path / "s"
    _build(root, extra=True)
    with FileLog(root) as log:  # a fresh writer's first append saves the view it read
        log.append(Event(agent="other", type="note.kept", body={}))
    assert b"ZQXID" in (root / snapshot.NAME).read_bytes()
    assert b"ZQXKEY" in (root / "index").read_bytes()
    _forget_and_check(root, [b"ZQXWORD", b"ZQXAGNT", b"ZQXKEY", b"ZQXID"])
    with Swarm.open(root) as sw:
        log = sw.log
        keyed = [e for e in log.read() if e.key is not None and e.key.startswith("~erased-")]
        # one pseudonym for the key, in the victim's write and in the other agent's
        assert len({e.key for e in keyed}) == 1 and len(keyed) == 2, keyed
        alias = keyed[0].key or ""
        assert {e.agent for e in keyed} > {"other"}
        reinforced = [e for e in log.read() if e.type == "memory.reinforced"]
        assert [e.body["target"] for e in reinforced] == [alias]
        # the writer index was rebuilt: versions under the pseudonym, none under the key
        assert log.version("door-code-ZQXKEY") == 0
        assert log.version(alias) == keyed[-1].seq
        nxt = Event(agent="other", type="note.kept", key=alias, body={})
        assert log.append(nxt, expect={alias: keyed[-1].seq}).seq == log.last_seq
        # and the id it chose is free again (the index holds only the pseudonym)
        again = Event(agent="other", type="note.kept", id="req-ZQXID-1", body={})
        assert log.append(again).seq == log.last_seq
        assert state_at(log).digest() == state_at(log, from_start=True).digest()


def test_memory_log_indexes_the_renamed_ids_and_keys() -> None:
    """The reference backend too: after the forget its id index and key versions name
    the pseudonyms, not the strings the agent chose."""
    sw = Swarm.open(":memory:")
    try:
        v1 = sw.board.cas("door-code-ZQXKEY", 0, content="door code", agent=NAMES["agent"])
        sw.board.cas("door-code-ZQXKEY", v1, value="changed", agent="other")
        body = {"content": "a note with a retry id", "category": "note"}
        sw.log.append(
            Event(agent=NAMES["agent"], type="memory.shared", id="req-ZQXID-1", body=body)
        )
        sw.agent("other").share("an unrelated finding")
        sw.forget(agent=NAMES["agent"])
        evs = list(sw.log.read())
        assert not [e for e in evs if "ZQX" in (e.key or "") + e.id]
        alias = next(e.key for e in evs if e.key is not None and e.key.startswith("~erased-"))
        assert sw.log.version("door-code-ZQXKEY") == 0
        assert sw.log.version(alias) == max(e.seq or 0 for e in evs if e.key == alias)
        retry = Event(agent=NAMES["agent"], type="memory.shared", id="req-ZQXID-1", body=body)
        assert sw.log.append(retry).seq == sw.log.last_seq  # a new write, not the old one
        assert sw.log.verify().ok
    finally:
        sw.close()
