"""Erasure end to end on FileLog (trust work, acceptance 1 and "the chain survives forget").

Agents share unique marker strings (alone, and on facts another agent corroborates, in
both orders), recall with a marker in the query, reinforce; others quote the identity
in a recall and a board write; checkpoints exist before and after. ``swarmlog forget``
then leaves no marker in any file under the root, the log verifies with the same
anchor, seqs and ids are unchanged, the corroborated facts survive on the other agent's
evidence alone, replay from a checkpoint equals replay from the start, and what the
CLI prints (tail --json, dashboard, markdown, board, stats) holds no marker.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import FileLog, MemoryLog
from swarmlog.redaction import TOMBSTONE, kind_of
from synthesizer import Swarm
from synthesizer.compat.store import MemoryEntry, MemoryIdentity, MemoryStore
from synthesizer.events import IDENTITY_FORGOTTEN
from synthesizer.forget.erase import ForgetError, Identity, forget
from synthesizer.replay import state_at
from synthesizer.state.erasure import REDACTED
from synthesizer.worker.synth import facts_digest
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(120)

SEASON = "the quarterly sales dataset shows a strong twelve month seasonal cycle"
SAFARI = "login crash on safari seventeen right after the big browser update today"


def marker(tag: str) -> str:
    return f"ZQX{tag.upper()}{uuid.uuid4().hex[:10]}"


def quiet_marker() -> str:
    """A unique marker of punctuation only: added to a statement it leaves the statement
    the same for the merge rule (a word would make it another statement)."""
    return (
        "\u00a7"
        + uuid.uuid4().hex[:12].translate(str.maketrans("0123456789abcdef", "!#&*+/:;<=>?@^~|"))
        + "\u00a7"
    )


def files_with(root: Path, markers: list[str]) -> list[str]:
    """Every file under ``root`` holding any marker (a byte scan, gzip archives opened
    as stored: a marker inside one would be compressed, so archives are checked by the
    reader too, in the retention test)."""
    found = []
    needles = [m.encode() for m in markers]
    for dirpath, _, names in os.walk(root):
        for n in names:
            data = (Path(dirpath) / n).read_bytes()
            if any(x in data for x in needles):
                found.append(os.path.relpath(Path(dirpath) / n, root))
    return found


def envelope_list(root: Path) -> list[tuple[int, str, str]]:
    log = FileLog(root)
    try:
        return [(ev.seq or 0, ev.id, ev.type) for ev in log.read()]
    finally:
        log.close()


def same_but_chosen_ids(
    after: list[tuple[int, str, str]], before: list[tuple[int, str, str]]
) -> bool:
    """Seqs and types unchanged, and every id too but the identity's own (a pseudonym
    replaces an id it chose: the trust work); at least one was replaced."""
    if [(q, t) for q, _, t in after] != [(q, t) for q, _, t in before]:
        return False
    moved = [(a, b) for (_, a, _), (_, b, _) in zip(after, before, strict=True) if a != b]
    return bool(moved) and all(a.startswith("~erased-") for a, _ in moved)


def outputs(root: Path) -> str:
    """What the CLI prints about the swarm (every format that shows content)."""
    out = []
    for args in (
        ("tail", "--json", "--from", "1"),
        ("tail", "--from", "1"),
        ("dashboard", "--format", "markdown"),
        ("dashboard",),
        ("stats", "--json"),
        ("board",),
        ("board", "--json"),
        ("search", "seasonal cycle", "--json"),
    ):
        r = run_cli("--root", str(root), *args)
        assert r.code == 0, (args, r.err)
        out.append(r.out + r.err)
    return "\n".join(out)


def scenario(
    root: Path, who: Callable[[Swarm], Any], other: Callable[[Swarm], Any]
) -> dict[str, Any]:
    """The identity (``who(swarm)``: an agent handle in its scope) shares markers alone
    and on facts ``other(swarm)`` corroborates (it first, and the identity first),
    recalls with a marker, reinforces; the other agent quotes it in a recall and a board
    write. Checkpoints before and after."""
    m = {k: marker(k) for k in ("alone", "query", "quote")}
    m["corr"], m["first"] = quiet_marker(), quiet_marker()  # on statements others repeat
    sw = Swarm.open(root)
    try:
        v, o = who(sw), other(sw)
        o.share(SEASON, category="discovery")
        sw.synthesize()
        v.share(f"{m['alone']} private note about the garage door code", category="note")
        v.share(f"{SEASON} {m['corr']}", category="discovery")
        v.share(f"{SAFARI} {m['first']}", category="bug")
        sw.synthesize()
        sw.checkpoint()
        o.share(SAFARI, category="bug")
        sw.synthesize()
        hits = v.recall(f"{m['query']} seasonal cycle")
        assert hits
        v.reinforce(hits[0].fact.id)
        quoted = f"{m['quote']} the garage door code is written on the wall"
        v.share(quoted, category="note")
        o.recall(f"what about {quoted}?")
        sw.synthesize()
        st = sw.refresh()
        season = next(f for f in st.facts.values() if f.content == SEASON)
        safari = next(f for f in st.facts.values() if f.content.startswith(SAFARI))
        assert {e.agent for e in season.evidence} >= {"other"} and len(season.evidence) == 2
        assert len(safari.evidence) == 2, "the identity's discovery is corroborated"
        sw.board.cas(season.id, season.version, value=f"see {quoted}")
        sw.tick()
        sw.checkpoint()
        assert len(sw.log.checkpoints.list()) >= 2
        m["season"], m["safari"] = season.id, safari.id
    finally:
        sw.close()
    return m


def check_forgotten(
    root: Path,
    m: dict[str, Any],
    before: list[tuple[int, str, str]],
    anchor: tuple[int, str],
    thread: bool = False,
) -> None:
    markers = [v for k, v in m.items() if k not in ("season", "safari")]
    assert files_with(root, markers) == []
    # lowercased too: a checkpoint's lexical index holds words folded to lower case
    assert files_with(root, [x.lower() for x in markers]) == []
    log = FileLog(root)
    try:
        rep = log.verify()
        assert rep.ok, rep.problems
        # the chain survives: the anchor taken before the forget still holds
        line = next(
            ln
            for ln in (root / "segments").glob("*.jsonl")
            for ln in ln.read_bytes().splitlines()
            if ln.startswith(b'{"seq":%d,' % anchor[0])
        )
        assert orjson.loads(line)["chain"] == anchor[1]
        after = [(ev.seq or 0, ev.id, ev.type) for ev in log.read()]
        assert same_but_chosen_ids(after[: len(before)], before)
        assert after[len(before)][2] == IDENTITY_FORGOTTEN
        assert any(kind_of(ev.envelope) == TOMBSTONE for ev in log.read())
    finally:
        log.close()
    sw = Swarm.open(root)
    try:
        st = sw.refresh()
        season = st.facts[m["season"]]
        assert season.evidence[0].agent == "other"
        # a thread's evidence on a fact of no thread stays as a bare (seq, agent) record:
        # the fold's evidence does not say which thread a memory was in
        assert [e.agent for e in season.evidence] == ["other"] or thread
        assert season.content == SEASON
        if thread:  # the fold drops every fact of a forgotten thread
            assert m["safari"] not in st.facts
        else:  # discovered by the identity: survives on the other's evidence, in the
            # other's own words (merge-rule work, item 5), never as a placeholder
            safari = st.facts[m["safari"]]
            assert [e.agent for e in safari.evidence] == ["other"]
            assert safari.content == SAFARI
            assert safari.session == "so"
        assert not [f.id for f in st.facts.values() if REDACTED in f.content]
        assert not [f.id for f in st.evicted.values() if REDACTED in f.content]
        assert markers[0] not in str(st.to_dict())
        ck = state_at(sw.log)
        assert sw.log.checkpoints.list(), "a checkpoint was rebuilt"
        assert ck.digest() == state_at(sw.log, from_start=True).digest() == st.digest()
    finally:
        sw.close()
    text = outputs(root)
    assert not [x for x in markers if x in text]
    assert '"redacted":"tombstone:' in text and "(erased)" in text


def anchor_of(root: Path) -> tuple[int, str]:
    r = run_cli("--root", str(root), "verify", "--anchor")
    assert r.code == 0, r.err
    last = next(ln for ln in r.out.splitlines() if ln.startswith("anchor:")).split()
    return int(last[2]), last[3]


@pytest.mark.parametrize(
    "flag,who",
    [
        ("--agent", lambda sw: sw.agent("victim", session="sv")),
        ("--session", lambda sw: sw.agent("alice", session="secret-session")),
        ("--thread", lambda sw: sw.agent("bob", thread="secret-thread")),
    ],
    ids=["agent", "session", "thread"],
)
@pytest.mark.slow
def test_forget_leaves_no_byte_and_keeps_the_rest(tmp_path: Path, flag: str, who: Any) -> None:
    root = tmp_path / "swarm"
    m = scenario(root, who, lambda sw: sw.agent("other", session="so"))
    name = {"--agent": "victim", "--session": "secret-session", "--thread": "secret-thread"}
    assert files_with(root, [m["alone"]]), "the marker is on disk before"
    assert any(
        f.startswith("checkpoints") and "lex-" in f for f in files_with(root, [m["alone"].lower()])
    ), "and in a checkpoint's lexical index"
    before = envelope_list(root)
    anchor = anchor_of(root)
    r = run_cli("--root", str(root), "forget", flag, name[flag])
    assert r.code == 0, r.err
    assert "forgot" in r.out
    check_forgotten(root, m, before, anchor, thread=flag == "--thread")
    again = run_cli("--root", str(root), "forget", flag, name[flag], "--json")
    assert again.code == 0, again.err
    assert orjson.loads(again.out)["redacted"] == 0  # done already: nothing to rewrite


def test_rewritten_log_folds_to_the_facts_of_the_original_fold(tmp_path: Path) -> None:
    """The identity.forgotten on the original log and the rewritten log give the same
    facts (so a process that folded the intent before the rewrite agrees)."""
    root = tmp_path / "swarm"
    scenario(root, lambda sw: sw.agent("victim"), lambda sw: sw.agent("other"))
    twin = tmp_path / "twin"
    shutil.copytree(root, twin)
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    log = FileLog(twin)
    try:
        log.append(
            __import__("swarmlog").Event(
                agent="operator", type=IDENTITY_FORGOTTEN, body={"agent": "victim"}
            )
        )
        original = state_at(log, from_start=True)
    finally:
        log.close()
    sw = Swarm.open(root)
    try:
        rewritten = state_at(sw.log, from_start=True)
    finally:
        sw.close()
    assert sorted(original.facts) == sorted(rewritten.facts)
    assert original.signatures == rewritten.signatures
    for fid, f in rewritten.facts.items():
        g = original.facts[fid]
        same = ("content", "evidence", "strength", "tier", "energy", "status", "signature")
        assert [getattr(f, k) for k in same] == [getattr(g, k) for k in same]
        # the one difference: another agent's board write quoting the identity's words
        # is scrubbed in the log; the original fold cannot know it quoted anyone
        assert f.value == g.value or f.value == "see " + REDACTED
    assert facts_digest(rewritten) != "" and "ZQX" not in str(rewritten.to_dict())


@pytest.mark.slow
def test_forget_a_store_identity(tmp_path: Path) -> None:
    root = tmp_path / "swarm"
    secret, kept = marker("store"), marker("kept")
    victim = MemoryIdentity(tenant="acme", principal="victim")
    other = MemoryIdentity(tenant="acme", principal="other")
    store = MemoryStore(root)
    try:
        store.put(victim, MemoryEntry(id="e1", value=f"{secret} home address"))
        store.put(victim, MemoryEntry(id="e2", value={"note": f"{secret} again"}))
        store.put(other, MemoryEntry(id="e1", value=f"{kept} other's entry"))
        store.swarm.checkpoint()
        assert store.get(victim, "e1") is not None
        store.feedback(victim, "e1", 1.0)
        store.record_signature(victim, f"sig-{secret}")
        store.swarm.checkpoint()
    finally:
        store.close()
    before = envelope_list(root)
    r = run_cli("--root", str(root), "forget", "--tenant", "acme", "--principal", "victim")
    assert r.code == 0, r.err
    assert files_with(root, [secret]) == []
    assert files_with(root, [kept]), "the other identity's entry is untouched"
    assert same_but_chosen_ids(envelope_list(root)[: len(before)], before)
    store = MemoryStore(root)
    try:
        assert store.get(victim, "e1") is None
        assert not store.seen(victim, f"sig-{secret}")
        got = store.get(other, "e1")
        assert got is not None and kept in str(got.value)
        st = store.swarm.refresh()
        assert state_at(store.log).digest() == state_at(store.log, from_start=True).digest()
        assert st.digest() == state_at(store.log, from_start=True).digest()
    finally:
        store.close()
    assert FileLog(root).verify().ok
    assert secret not in outputs(root)


def test_forget_reaches_archives(tmp_path: Path) -> None:
    """An affected seq in a compacted archive: the archive is rewritten (read back
    through the reader, which decompresses it) and verify stays clean."""
    root = tmp_path / "swarm"
    secret = marker("arch")
    sw = Swarm.open(root, segment_bytes=4096)
    try:
        v, o = sw.agent("victim"), sw.agent("other")
        v.share(f"{secret} in the oldest segment of all", category="note")
        for i in range(60):
            o.share(f"filler memory number {i} about topic {i * 7}", category="misc")
        sw.synthesize()
        sw.checkpoint(pinned=True)
    finally:
        sw.close()
    r = run_cli("--root", str(root), "config", "set", "retention.keep_checkpoints=1")
    assert r.code == 0, r.err
    r = run_cli("--root", str(root), "compact")
    assert r.code == 0, r.err
    assert list((root / "archive").glob("*.jsonl.gz")), "something was archived"
    r = run_cli("--root", str(root), "forget", "--agent", "victim")
    assert r.code == 0, r.err
    log = FileLog(root)
    try:
        assert log.verify().ok, log.verify().problems
        assert not any(secret in orjson.dumps(ev.envelope).decode() for ev in log.read())
        first = next(iter(log.read(1, 1)))
        assert kind_of(first.envelope) == TOMBSTONE
    finally:
        log.close()
    assert files_with(root, [secret]) == []
    assert len(list((root / "archive").glob("*.jsonl.gz"))) == len(
        {p.name.split(".")[0] for p in (root / "archive").glob("*.jsonl.gz")}
    ), "no orphaned archive files"


def test_forgetting_another_identity_needs_an_operator(tmp_path: Path) -> None:
    root = tmp_path / "swarm"
    sw = Swarm.open(root)
    try:
        sw.agent("victim").share(f"{marker('x')} a note", category="note")
        with pytest.raises(ForgetError, match="needs an operator"):
            sw.forget(agent="victim", by="mallory")
        assert not [ev for ev in sw.log.read() if ev.type == IDENTITY_FORGOTTEN]
        with pytest.raises(ForgetError, match="synthesizer"):
            Identity(agent="synthesizer")
        with pytest.raises(ForgetError, match="exactly one"):
            Identity(agent="a", session="b")
        # one's own: allowed (its memory, and its request naming its pseudonym)
        assert sw.forget(agent="victim", by="victim").redacted == 2
    finally:
        sw.close()
    r = run_cli("--root", str(root), "forget", "--agent", "x", "--as", "mallory")
    assert r.code == 1 and r.err.startswith("error:") and "Traceback" not in r.err
    r = run_cli("--root", str(root), "forget")
    assert r.code == 1 and "exactly one" in r.err


def test_memorylog_forget_and_followers_see_tombstones(tmp_path: Path) -> None:
    """The same flow on MemoryLog; a FileLog follower reading after the rewrite gets the
    tombstone, and an appender that held the old segment keeps appending (to the new)."""
    log = MemoryLog()
    sw = Swarm(log)
    secret = marker("mem")
    sw.agent("victim").share(f"{secret} only in memory", category="note")
    sw.agent("other").share(SEASON, category="note")
    sw.synthesize()
    res = forget(sw, Identity(agent="victim"))
    # the tombstone, its fact.created's content signature, the request (a pseudonym)
    assert res.redacted == 3
    assert not any(secret in orjson.dumps(ev.envelope).decode() for ev in log.read())
    assert log.verify().ok

    root = tmp_path / "f"
    a, b = FileLog(root), FileLog(root)
    try:
        a.append(__import__("swarmlog").Event(agent="v", type="x.note", body={"t": secret}))
        b.append(__import__("swarmlog").Event(agent="o", type="x.note", body={"t": "kept"}))
        follower = b.follow(1, timeout=0.5)
        assert next(follower).body == {"t": secret}
        assert a.redact({1: None}) == 1
        b.append(__import__("swarmlog").Event(agent="o", type="x.note", body={"t": "after"}))
        assert [ev.body for ev in b.read()] == [{}, {"t": "kept"}, {"t": "after"}]
        assert [ev.body for ev in follower] == [{"t": "kept"}, {"t": "after"}]
        assert [ev.body for ev in a.read(1, 1)] == [{}]
        assert a.verify().ok
        assert files_with(root, [secret]) == []
    finally:
        a.close()
        b.close()
