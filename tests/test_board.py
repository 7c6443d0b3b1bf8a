"""The Board: reads, CAS writes, conflicts, history, retries, replay, and its CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import InvalidEvent, VersionConflict
from synthesizer import events as T
from synthesizer.board import Board, BoardContention, snapshot
from synthesizer.errors import UnknownFact
from synthesizer.replay import state_at
from synthesizer.state.facts import Fact
from synthesizer.swarm import Swarm
from tests.conftest import LogTarget

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def swarm(log_target: LogTarget) -> Iterator[Swarm]:
    sw = Swarm(log_target.open())
    yield sw
    sw.close()


def _fact(swarm: Swarm, content: str = "The API listens on port 8080", agent: str = "a1") -> str:
    """A synthesized fact's id (share + one synthesizer pass)."""
    seq = swarm.agent(agent, session="s1").share(content).seq
    swarm.synthesize()
    return f"f{seq}"


# ---------------------------------------------------------------- reads


def test_get_list_and_filters(swarm: Swarm) -> None:
    fid = _fact(swarm)
    swarm.board.cas("plan", 0, content="ship on friday", category="plan", subject="ship")
    b = swarm.board
    assert b.get(fid).content == "The API listens on port 8080"
    assert [f.id for f in b.list()] == [fid, "plan"]
    assert [f.id for f in b.list(category="plan")] == ["plan"]
    assert [f.id for f in b.list(subject="ship")] == ["plan"]
    assert [f.id for f in b.list(status="active", tier="working")] == [fid, "plan"]
    assert b.list(status="retracted") == []
    with pytest.raises(UnknownFact, match="unknown fact 'nope'"):
        b.get("nope")
    with pytest.raises(InvalidEvent, match="invalid status"):
        b.list(status="dead")
    with pytest.raises(InvalidEvent, match="invalid tier"):
        b.list(tier="hot")


def test_get_returns_a_snapshot_that_keeps_its_version(swarm: Swarm) -> None:
    fid = _fact(swarm)
    f = swarm.board.get(fid)
    swarm.board.cas(fid, f.version, value="1")
    swarm.board.get(fid)  # refreshes the live state
    assert f.value is None and f.version < swarm.board.get(fid).version
    g = snapshot(f)
    g.evidence.clear()
    assert f.evidence


# ---------------------------------------------------------------- cas


def test_cas_creates_updates_and_returns_versions(swarm: Swarm) -> None:
    b = swarm.board
    v1 = b.cas("budget", 0, content="the budget", value="10", agent="a1")
    assert v1 == swarm.log.version("budget") == b.get("budget").version
    v2 = b.cas("budget", v1, value="12", reason="re-measured", evidence=[v1], agent="a2")
    f = b.get("budget")
    assert (f.value, f.version, v2 > v1) == ("12", v2, True)
    v3 = b.cas("budget", v2, status="contested", reason="disputed", agent="a3")
    assert b.get("budget").status == "contested" and v3 > v2
    assert swarm.refresh().metrics.cas == {"a1": [1, 1, 0], "a2": [1, 1, 0], "a3": [1, 1, 0]}


def test_create_requires_absence_and_content(swarm: Swarm) -> None:
    b = swarm.board
    v = b.cas("x", 0, content="first")
    with pytest.raises(VersionConflict) as e:
        b.cas("x", 0, content="second")
    assert (e.value.expected, e.value.actual) == (0, v)
    assert [ev.seq for ev in e.value.events] == [v]
    assert b.get("x").content == "first"
    with pytest.raises(InvalidEvent, match="needs content"):
        b.cas("y", 0, value="1")
    with pytest.raises(InvalidEvent, match="reserved for the synthesizer"):
        b.cas("f12", 0, content="sneaky")


def test_bad_arguments_are_rejected_before_writing(swarm: Swarm) -> None:
    fid = _fact(swarm)
    b = swarm.board
    v = b.get(fid).version
    last = swarm.log.last_seq
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(InvalidEvent, match="bad version"):
            b.cas(fid, bad, value="1")
    with pytest.raises(InvalidEvent, match="invalid status 'dead'"):
        b.cas(fid, v, status="dead")
    with pytest.raises(InvalidEvent, match="nothing to change"):
        b.cas(fid, v, reason="just because")
    with pytest.raises(InvalidEvent, match="a retraction takes only a reason"):
        b.cas(fid, v, status="retracted", value="2")
    with pytest.raises(UnknownFact):
        b.cas("ghost", 5, value="1")
    assert swarm.log.last_seq == last


def test_stale_cas_never_applies_and_reports_intervening_events(swarm: Swarm) -> None:
    fid = _fact(swarm)
    b = swarm.board
    read = b.get(fid)
    v1 = b.cas(fid, read.version, value="A", agent="a2")
    swarm.agent("a3").reinforce(fid)  # not keyed: does not move the version
    v2 = b.cas(fid, v1, value="B", agent="a3")
    with pytest.raises(VersionConflict) as e:
        b.cas(fid, read.version, value="stale", agent="a4")
    c = e.value
    assert (c.key, c.expected, c.actual) == (fid, read.version, v2)
    assert [(ev.seq, ev.agent, ev.body.get("value")) for ev in c.events] == [
        (v1, "a2", "A"),
        (v2, "a3", "B"),
    ]
    f = b.get(fid)
    assert (f.value, f.version) == ("B", v2)
    assert all(h.body.get("value") != "stale" for h in b.history(fid))
    # the lost attempt is on record for the dashboard
    assert swarm.refresh().metrics.cas["a4"] == [1, 0, 1]
    last = next(iter(swarm.log.read(swarm.log.last_seq)))
    assert last.type == T.BOARD_CONFLICT
    assert last.body == {"target": fid, "expected": read.version, "actual": v2}


def test_retract_sticks_and_a_duplicate_adds_evidence(swarm: Swarm) -> None:
    fid = _fact(swarm)
    b = swarm.board
    base = b.get(fid).version
    v = b.cas(fid, base, status="retracted", reason="wrong port", agent="a2")
    last = next(iter(swarm.log.read(v)))
    want = {"reason": "wrong port", "base": base}  # base: the CAS expectation (authz)
    assert (last.type, last.key, last.body) == (T.FACT_RETRACTED, fid, want)
    dup = swarm.agent("a3").share("The API listens on port 8080").seq  # exact duplicate
    near = swarm.agent("a4").share("The API is listening on port 8080").seq  # paraphrase
    swarm.synthesize()
    f = b.get(fid)
    assert f.status == "retracted" and len(swarm.refresh().facts) == 1
    assert [e.seq for e in f.evidence][-2:] == [dup, near]
    assert [h[1] for h in f.history] == ["retracted"]
    # an explicit board write may re-activate it
    b.cas(fid, f.version, status="active", reason="re-checked")
    assert b.get(fid).status == "active"


def test_retracted_claim_is_not_revived_by_a_repeat(swarm: Swarm) -> None:
    a = swarm.agent("a1")
    seq = a.share("The cache TTL is 60s", subject="cache ttl", value="60").seq
    swarm.synthesize()
    fid = f"f{seq}"
    b = swarm.board
    b.cas(fid, b.get(fid).version, status="retracted", reason="it is 30s")
    again = swarm.agent("a2").share("The cache TTL is 60s", subject="cache ttl", value="60").seq
    swarm.synthesize()
    facts = swarm.refresh().facts
    assert list(facts) == [fid]
    assert facts[fid].status == "retracted" and facts[fid].evidence[-1].seq == again


# ---------------------------------------------------------------- history and replay


def test_history_lists_synthesizer_and_agent_events_in_seq_order(swarm: Swarm) -> None:
    fid = _fact(swarm)
    swarm.agent("a2").share("The API listens on port 8080")
    swarm.synthesize()
    b = swarm.board
    v1 = b.cas(fid, b.get(fid).version, value="8080", agent="a3")
    swarm.agent("a9").share("unrelated: the sky is blue")
    swarm.synthesize()
    v2 = b.cas(fid, v1, status="retracted", reason="moved", agent="a4")
    hist = b.history(fid)
    assert [(h.agent, h.type) for h in hist] == [
        (T.SYNTH_AGENT, T.FACT_CREATED),
        (T.SYNTH_AGENT, T.FACT_CORROBORATED),
        ("a3", T.FACT_UPDATED),
        ("a4", T.FACT_RETRACTED),
    ]
    seqs = [h.seq for h in hist]
    assert seqs == sorted(seqs) and seqs[-2:] == [v1, v2]
    assert [ev.seq for ev in swarm.log.read() if ev.key == fid] == seqs
    assert hist[2].body == {"value": "8080", "base": seqs[1]}
    assert hist[3].body == {"reason": "moved", "base": v1}
    assert hist[0].to_dict()["type"] == T.FACT_CREATED
    with pytest.raises(UnknownFact):
        b.history("nope")


def _board_rows(board: Board) -> list[dict[str, Any]]:
    return [f.to_dict() for f in board.list()]


def test_board_after_replay_from_checkpoint_equals_live(log_target: LogTarget) -> None:
    target = log_target.target
    with Swarm.open(target) as sw:
        fid = _fact(sw)
        b = sw.board
        b.cas("plan", 0, content="the plan", value="1", agent="p")
        b.cas(fid, b.get(fid).version, value="x", agent="a2")
        ck = sw.checkpoint()
        b.update("plan", lambda f: {"value": str(int(f.value or "0") + 1)}, agent="p")
        sw.agent("a3").share("The API listens on port 8080")
        sw.synthesize()
        b.cas(fid, b.get(fid).version, status="retracted", agent="a4")
        with pytest.raises(VersionConflict):
            b.cas("plan", 1, value="stale", agent="a5")
        live = _board_rows(b)
        live_digest = sw.refresh().digest()
    with Swarm.open(target) as again:  # starts from the checkpoint, folds the rest
        assert _board_rows(again.board) == live
        assert again.refresh().digest() == live_digest
        full = state_at(again.log, at_seq=again.log.last_seq, from_start=True)
        assert full.digest() == live_digest
        at_ck = state_at(again.log, at_seq=ck)
        assert at_ck.digest() == state_at(again.log, at_seq=ck, from_start=True).digest()
        assert again.refresh().metrics.cas["a5"] == [1, 0, 1]


# ---------------------------------------------------------------- update


def test_update_read_modify_write_and_no_op(swarm: Swarm) -> None:
    b = swarm.board
    b.cas("n", 0, content="a counter", value="0")
    for _ in range(5):
        b.update("n", lambda f: {"value": str(int(f.value or "0") + 1)}, agent="inc")
    assert b.get("n").value == "5"
    v = b.get("n").version
    assert b.update("n", lambda f: None) == v == swarm.log.version("n")
    with pytest.raises(UnknownFact):
        b.update("missing", lambda f: {"value": "1"})
    with pytest.raises(InvalidEvent, match="unknown cas argument"):
        b.update("n", lambda f: {"colour": "red"})


def test_update_gives_up_after_its_budget_and_records_conflicts(swarm: Swarm) -> None:
    b = swarm.board
    b.cas("hot", 0, content="hot fact", value="0")
    rival = Board(swarm.log, swarm.refresh, agent="rival")
    seen: list[int] = []

    def meddle(f: Fact) -> dict[str, Any]:
        seen.append(f.version)
        rival.cas("hot", f.version, value=f"r{len(seen)}")  # someone always gets there first
        return {"value": "mine"}

    b.base_delay = 0.0001
    with pytest.raises(BoardContention) as e:
        b.update("hot", meddle, retries=3, agent="loser")
    assert e.value.attempts == 4 and len(seen) == 4
    assert e.value.last is not None and e.value.last.actual == b.get("hot").version
    assert "gave up updating 'hot' after 4" in str(e.value)
    assert b.get("hot").value == "r4"
    assert swarm.refresh().metrics.cas["loser"] == [4, 0, 4]


def test_update_carries_conflict_records_into_the_winning_batch(swarm: Swarm) -> None:
    b = swarm.board
    b.cas("c", 0, content="c", value="0")
    rival = Board(swarm.log, swarm.refresh, agent="rival")
    calls = 0

    def once(f: Fact) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        if calls == 1:
            rival.cas("c", f.version, value="r")
        return {"value": "w"}

    before = swarm.log.last_seq
    v = b.update("c", once, agent="w")
    new = list(swarm.log.read(before + 1))
    assert [e.type for e in new] == [T.FACT_UPDATED, T.BOARD_CONFLICT, T.FACT_UPDATED]
    assert new[-1].seq == v and swarm.refresh().metrics.cas["w"] == [2, 1, 1]


def test_backoff_is_full_jitter_within_the_cap(swarm: Swarm) -> None:
    b = Board(swarm.log, swarm.refresh, base_delay=0.001, max_delay=0.01)
    for attempt in range(12):
        cap = min(0.01, 0.001 * 2**attempt)
        ds = [b.backoff(attempt) for _ in range(50)]
        assert all(0.0 <= d <= cap for d in ds) and max(ds) > cap / 4


# ---------------------------------------------------------------- CLI


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("SWARMLOG_ROOT", None)
    return subprocess.run(
        [sys.executable, "-c", "from dashboards.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


@pytest.mark.slow
def test_cli_board_show_cas_and_exit_codes(tmp_path: Path) -> None:
    root = str(tmp_path / "swarm")
    with Swarm.open(root) as sw:
        fid = _fact(sw)
        v = sw.board.get(fid).version
    # list, before and after the command name
    r = _cli("--root", root, "board")
    assert r.returncode == 0 and fid in r.stdout
    r = _cli("board", "--json", "--root", root)
    assert r.returncode == 0 and [f["id"] for f in orjson.loads(r.stdout)] == [fid]
    # one fact with its history
    r = _cli("board", fid, "--root", root, "--json")
    assert r.returncode == 0, r.stderr
    d = orjson.loads(r.stdout)
    assert d["fact"]["version"] == v and [h["type"] for h in d["history"]] == [T.FACT_CREATED]
    r = _cli("--root", root, "board", fid)
    assert r.returncode == 0 and "history (1 events)" in r.stdout
    # a winning cas prints the new version
    r = _cli(
        "board", "cas", fid, "--expect", str(v), "--value", "9", "--agent", "op", "--root", root
    )
    assert r.returncode == 0, r.stderr
    new = int(r.stdout.strip())
    assert new > v
    # a stale one exits 3 printing the current version
    r = _cli("--root", root, "board", "cas", fid, "--expect", str(v), "--value", "10")
    assert r.returncode == 3 and r.stdout.strip() == str(new)
    assert r.stderr.strip() == f"conflict: {fid} is at version {new}, not {v} (1 event(s) since)"
    r = _cli("--root", root, "board", "cas", fid, "--expect", str(v), "--value", "1", "--json")
    assert r.returncode == 3
    j = orjson.loads(r.stdout)
    assert (j["ok"], j["version"], [e["seq"] for e in j["events"]]) == (False, new, [new])
    # one-line errors, exit 1
    cases = {
        ("board", "cas", "ghost", "--expect", "4", "--value", "1"): "error: unknown fact 'ghost'",
        ("board", "ghost"): "error: unknown fact 'ghost'",
        ("board", "cas", fid, "--expect", "-1", "--value", "1"): "error: bad version '-1'",
        ("board", "cas", fid, "--expect", "seven", "--value", "1"): "error: bad version 'seven'",
        ("board", "cas", fid, "--expect", str(new), "--status", "gone"): (
            "error: invalid status 'gone'"
        ),
    }
    for args, msg in cases.items():
        r = _cli("--root", root, *args)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert r.stderr.startswith(msg) and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # create, retract through the CLI
    r = _cli("board", "cas", "todo", "--expect", "0", "--content", "write docs", "--root", root)
    assert r.returncode == 0
    t = int(r.stdout)
    r = _cli("board", "cas", "todo", "-e", str(t), "--status", "retracted", "--root", root)
    assert r.returncode == 0
    with Swarm.open(root) as sw:
        assert sw.board.get("todo").status == "retracted"
        assert sw.board.get(fid).value == "9"
        assert sw.refresh().metrics.cas["op"] == [1, 1, 0]
