"""Knowledge that compounds (docs/design.md §12): task swarms promote into a global memory, and new
swarms bootstrap from it, with provenance across swarms, idempotence, stale-state updates
and erasure that crosses the boundary. Real files, real processes, a real nats-server."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from swarmlog import Event, InvalidEvent, SwarmlogError
from synthesizer import Swarm
from synthesizer.config import SynthConfig
from synthesizer.promotion.promote import PromotionError
from synthesizer.replay import state_at
from synthesizer.state.facts import RETRACTED
from tests.cli_util import run_cli

SHARED = "The staging database is rebuilt every night at 02:00"


def _task(root: Path, agent: str, texts: list[str], session: str = "s1") -> Swarm:
    sw = Swarm.open(root)
    a = sw.agent(agent, session=session)
    for t in texts:
        a.share(t, importance=0.9)
    sw.synthesize()
    return sw


def _by_content(sw: Swarm) -> dict[str, object]:
    return {f.content: f for f in sw.state().facts.values()}


PROMOTER = textwrap.dedent(
    """
    import sys
    from synthesizer import Swarm
    sw = Swarm.open(sys.argv[1])
    r = sw.promote(sys.argv[2], tier="working")
    print(r.promoted, r.updated, r.unchanged)
    """
)


@pytest.mark.slow
def test_two_swarms_promote_concurrently_into_one_global_fact(tmp_path: Path) -> None:
    a = _task(tmp_path / "a", "ana", [SHARED, "Feature flags are read at process start"])
    b = _task(tmp_path / "b", "bo", [SHARED, "The CDN caches images for one hour"])
    a.close()
    b.close()
    g = tmp_path / "global"
    Swarm.open(g).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROMOTER, str(tmp_path / name), str(g)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b", "a", "b")  # each swarm twice, all at once
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    with Swarm.open(g) as glob:
        glob.synthesize()
        facts = [f for f in glob.state().facts.values() if f.status != RETRACTED]
        contents = sorted(f.content for f in facts)
        assert contents == sorted(
            {
                SHARED,
                "Feature flags are read at process start",
                "The CDN caches images for one hour",
            }
        )
        shared = next(f for f in facts if f.content == SHARED)
        assert sorted(o["name"] for o in shared.origins) == ["a", "b"]
        for o in shared.origins:
            assert set(o) >= {"swarm", "name", "fact", "seqs", "version"}
            assert o["seqs"] and all(isinstance(q, int) for q in o["seqs"])
        ids_a = Swarm.open(tmp_path / "a")
        assert {o["swarm"] for o in shared.origins} >= {ids_a.log.swarm_id}
        # promote again: nothing new
        again = ids_a.promote(g, tier="working")
        assert again.promoted == 0 and again.updated == 0 and again.unchanged == 2
        ids_a.close()
        n_events = glob.log.last_seq
    with Swarm.open(tmp_path / "b") as b2:
        assert b2.promote(g, tier="working").promoted == 0
    with Swarm.open(g) as glob:
        assert glob.log.last_seq == n_events  # nothing was appended by the re-runs


@pytest.mark.slow
def test_origin_changes_reach_the_global_memory(tmp_path: Path) -> None:
    g = tmp_path / "global"
    a = _task(tmp_path / "a", "ana", [SHARED, "Backups are kept for 30 days"])
    a.agent("ana").share("The API listens on port 8080", subject="api.port", value="8080")
    a.synthesize()
    first = a.promote(g, tier="working")
    assert (first.promoted, first.updated) == (3, 0)
    facts = _by_content(a)
    # a retraction in the origin: the global fact is retracted
    fid = facts["Backups are kept for 30 days"].id  # type: ignore[attr-defined]
    a.board.cas(fid, a.board.get(fid).version, status="retracted", agent="ana")
    # a new value in the origin: the global holds the new one, the old one is withdrawn
    pid = facts["The API listens on port 8080"].id  # type: ignore[attr-defined]
    a.board.cas(pid, a.board.get(pid).version, value="9090", agent="ana")
    rep = a.promote(g, tier="working")
    assert rep.promoted == 0 and rep.updated == 2 and rep.withdrawn == 2
    with Swarm.open(g) as glob:
        st = glob.state()
        backups = [f for f in st.facts.values() if f.content.startswith("Backups")]
        assert [f.status for f in backups] == [RETRACTED]
        ports = {f.value: f.status for f in st.facts.values() if f.subject == "api.port"}
        assert ports["9090"] == "active" and ports["8080"] == RETRACTED
    # and a third run changes nothing
    assert a.promote(g, tier="working").updated == 0
    a.close()


@pytest.mark.slow
def test_bootstrap_seeds_a_new_swarm_with_provenance(tmp_path: Path) -> None:
    g = tmp_path / "global"
    a = _task(tmp_path / "a", "ana", [SHARED, "Log lines are shipped through Fluent Bit"])
    a.promote(g, tier="working")
    a.close()
    with Swarm.open(g) as glob:
        glob_id = glob.log.swarm_id
        gfact = next(f for f in glob.state().facts.values() if f.content == SHARED)
    new = Swarm.open(
        tmp_path / "next", bootstrap=g, bootstrap_query="when is staging rebuilt", bootstrap_limit=1
    )
    new.synthesize()
    hits = new.agent("nia").recall("nightly rebuild of the staging database", limit=3)
    top = hits[0].fact
    assert top.content == SHARED
    assert top.origins[0]["swarm"] == glob_id and top.origins[0]["fact"] == gfact.id
    assert [o["name"] for o in top.origins[1:]] == ["a"]  # the global fact's own origin
    n = new.log.last_seq
    again = new.bootstrap(g, "when is staging rebuilt", 1)
    assert again.seeded == 0 and again.unchanged == 1 and new.log.last_seq == n
    new.close()


@pytest.mark.slow
def test_global_replays_from_a_checkpoint_to_the_same_digest(tmp_path: Path) -> None:
    g = tmp_path / "global"
    a = _task(tmp_path / "a", "ana", [SHARED, "Releases are cut on Tuesdays"])
    a.promote(g, tier="working")
    with Swarm.open(g) as glob:
        glob.checkpoint()
    fid = _by_content(a)["Releases are cut on Tuesdays"].id  # type: ignore[attr-defined]
    a.board.cas(fid, a.board.get(fid).version, status="retracted", agent="ana")
    a.promote(g, tier="working")
    a.close()
    with Swarm.open(g) as glob:
        live = glob.state()
        scratch = state_at(glob.log, from_start=True)
        assert live.digest() == scratch.digest()
        assert any(f.origins for f in live.facts.values())


@pytest.mark.slow
def test_propagated_erasure_leaves_no_words_in_either_root(tmp_path: Path) -> None:
    g = tmp_path / "global"
    secret = "The vault passphrase is QUOKKA-PELICAN-7731"
    sw = Swarm.open(tmp_path / "a")
    who = "mallory-ZQXPROP"  # its name goes too: a pseudonym in both roots (global-memory work)
    sw.agent(who, session="ms").share(secret, importance=0.9)
    sw.agent(who, session="ms").share(SHARED, importance=0.9)
    sw.agent("ana", session="as").share(SHARED, importance=0.9)
    sw.synthesize()
    assert sw.promote(g, tier="working").promoted == 2
    sw.forget(agent=who, propagate=g)
    with Swarm.open(g) as glob:
        contents = {f.content for f in glob.state().facts.values()}
        assert SHARED in contents and secret not in contents
        assert glob.log.verify().ok
        assert state_at(glob.log).digest() == state_at(glob.log, from_start=True).digest()
    sw.close()
    for root in (tmp_path / "a", g):
        for p in root.rglob("*"):
            if p.is_file():
                data = p.read_bytes()
                assert b"QUOKKA-PELICAN" not in data, p
                assert b"ZQXPROP" not in data, p
        assert run_cli("--root", str(root), "verify").code == 0


def test_session_end_harvest_and_retry(tmp_path: Path) -> None:
    g = tmp_path / "global"
    bad = tmp_path / "missing-parent" / "global"
    cfg = SynthConfig.model_validate(
        {"promotion": {"target": str(bad), "when": "session_end", "tier": "working"}}
    )
    (tmp_path / "missing-parent").write_text("a file where a directory should be")
    sw = Swarm.open(tmp_path / "a", config=cfg)
    sw.agent("ana", session="s1").share(SHARED, importance=0.9)
    sw.synthesize()
    sw.end_session("s1")  # starts a background harvest: it fails (the target is a file)
    for t in threading.enumerate():
        if t.name == "swarmlog-harvest":
            t.join(timeout=60)
    assert list(sw.refresh().promotion_waiting) == ["s1"]
    from synthesizer.promotion.harvest import harvest

    with pytest.raises(SwarmlogError):  # unreachable target: the session keeps waiting
        harvest(sw, wait_s=0)
    assert list(sw.refresh().promotion_waiting) == ["s1"]
    sw.close()
    r = run_cli("--root", str(tmp_path / "a"), "stats")
    assert "1 ended session waiting for promotion" in r.out, r.out
    # the target becomes reachable: the next harvest promotes and marks it done
    (tmp_path / "missing-parent").unlink()
    with Swarm.open(tmp_path / "a") as sw2:
        rep = harvest(sw2, wait_s=0)
        assert rep is not None and rep.promoted == 1
        assert sw2.refresh().promotion_waiting == {}
        assert harvest(sw2, wait_s=0) is None
    with Swarm.open(bad) as glob:
        glob.synthesize()
        assert [f.content for f in glob.state().facts.values()] == [SHARED]
    assert not g.exists()


def test_bad_promotions_are_one_line_errors(tmp_path: Path) -> None:
    a = _task(tmp_path / "a", "ana", [SHARED])
    with pytest.raises(PromotionError, match="into itself"):
        a.promote(tmp_path / "a")
    with pytest.raises(PromotionError, match="tier must be one of"):
        a.promote(tmp_path / "g", tier="forever")
    with pytest.raises(InvalidEvent, match="origin"):  # the API sends no origins; a raw append
        a.log.append(
            Event(agent="x", type="memory.shared", body={"content": "c", "origins": [{"a": 1}]})
        )
    a.close()
    for args in (
        ["--root", str(tmp_path / "a"), "promote"],
        ["--root", str(tmp_path / "a"), "promote", "--to", str(tmp_path / "a")],
        ["--root", str(tmp_path / "a"), "promote", "--to", str(tmp_path / "g"), "--tier", "x"],
        ["init", "--root", str(tmp_path / "n"), "--bootstrap", str(tmp_path / "nowhere")],
    ):
        r = run_cli(*args)
        assert r.code == 1, (args, r.out, r.err)
        assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err


def test_cli_promote_board_origins_and_init_bootstrap(tmp_path: Path) -> None:
    for name, agent in (("a", "ana"), ("b", "bo")):
        _task(tmp_path / name, agent, [SHARED]).close()
    g = str(tmp_path / "global")
    for name in ("a", "b"):
        r = run_cli(*["--root", str(tmp_path / name), "promote", "--to", g, "--tier", "working"])
        assert r.code == 0 and "promoted 1 new" in r.out, r.err
    r = run_cli(*["--root", g, "board", "f1", "--origins"])
    assert r.code == 0, r.err
    assert "origin a/f1" in r.out and "origin b/f1" in r.out and SHARED[:40] in r.out
    r = run_cli(*["init", "--root", str(tmp_path / "n"), "--bootstrap", g, "--limit", "5"])
    assert r.code == 0 and "1 fact(s) seeded" in r.out, r.err


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_jetstream_global_memory(nats_url: str, tmp_path: Path) -> None:
    stream = f"{nats_url}/GLOB{tmp_path.name[-10:].replace('-', '')}"
    a = _task(tmp_path / "a", "ana", [SHARED])
    b = _task(tmp_path / "b", "bo", [SHARED, "Queues are drained before deploys"])
    Swarm.open(stream).close()
    procs = [  # both swarms at once, from their own processes
        subprocess.Popen(
            [sys.executable, "-c", PROMOTER, str(tmp_path / name), stream],
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert [o.split()[0] for o in outs] == ["1", "2"]  # promoted: a 1, b 2
    assert a.promote(stream, tier="working").promoted == 0
    with Swarm.open(stream) as glob:
        glob.synthesize()
        shared = next(f for f in glob.state().facts.values() if f.content == SHARED)
        assert sorted(o["name"] for o in shared.origins) == ["a", "b"]
    new = Swarm.open(tmp_path / "n", bootstrap=stream, bootstrap_query="draining queues")
    new.synthesize()
    assert any(f.origins for f in new.state().facts.values())
    for sw in (a, b, new):
        sw.close()


def test_end_session_harvests_in_the_background(tmp_path: Path) -> None:
    g = tmp_path / "global"
    cfg = SynthConfig.model_validate(
        {"promotion": {"target": str(g), "when": "session_end", "tier": "working"}}
    )
    with Swarm.open(tmp_path / "a", config=cfg) as sw:
        sw.agent("ana", session="s1").share(SHARED, importance=0.9)
        sw.agent("ana", session="s2").share("Not part of the ended session", importance=0.9)
        sw.synthesize()
        sw.end_session("s1")  # returns at once; the harvest runs in a thread beside it
        for t in threading.enumerate():
            if t.name == "swarmlog-harvest":
                t.join(timeout=60)
        assert sw.refresh().promotion_waiting == {}
    with Swarm.open(g) as glob:
        assert [f.content for f in glob.state().facts.values()] == [SHARED]


@pytest.mark.slow
def test_strongest_from_columns_equals_the_plain_loop(tmp_path: Path) -> None:
    from synthesizer.promotion.bootstrap import strongest

    sw = Swarm.open(tmp_path / "g")
    for i in range(60):
        sw.agent(f"a{i % 4}").share(f"Statement number {i} about module m{i}", importance=0.5)
    sw.synthesize()
    for _ in range(3):
        sw.tick()
    fids = sorted(sw.state().facts)
    for fid in fids[::7]:
        sw.agent("b").reinforce(fid)
    sw.board.cas(fids[1], sw.board.get(fids[1]).version, status="retracted", agent="b")
    sw.checkpoint()
    sw.close()
    with Swarm.open(tmp_path / "g") as fresh:  # lazy rows: the columns path
        by_columns = [f.id for f in strongest(fresh.refresh(), 10)]
    with Swarm.open(tmp_path / "g") as plain:
        st = plain.refresh()
        live = [f for f in st.facts.values() if f.status in ("active", "contested")]
        live.sort(key=lambda f: (-f.strength, -f.support, f.created_seq))
        assert by_columns == [f.id for f in live[:10]]
        assert fids[1] not in by_columns


def test_mcp_get_fact_and_search_show_origins(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp.client import Client
    from mcp_types import Implementation

    from dashboards.mcp.server import build_server
    from dashboards.mcp.tools import MemoryTools

    g = tmp_path / "global"
    a = _task(tmp_path / "task-a", "ana", [SHARED])
    a.promote(g, tier="working")
    a.close()
    with Swarm.open(g) as glob:
        tools = MemoryTools(glob, "reader", None, decide_wait=1.0, synth=None)
        server = build_server(tools)

        async def main() -> None:
            async with Client(server, client_info=Implementation(name="r", version="1")) as c:
                r = await c.call_tool("get_fact", {"fact_id": "f1"})
                assert not r.is_error, r.content
                assert r.structured_content is not None
                assert r.structured_content["origins"] == ["task-a/f1@2"]
                r = await c.call_tool("search_memory", {"query": "staging database rebuilt"})
                assert r.structured_content is not None
                hit = r.structured_content["hits"][0]
                assert hit["origins"] == ["task-a/f1@2"]

        anyio.run(main)


def test_the_dashboard_names_a_global_facts_origins(tmp_path: Path) -> None:
    g = tmp_path / "global"
    for name, agent in (("task-a", "ana"), ("task-b", "bo")):
        sw = _task(tmp_path / name, agent, [SHARED])
        sw.promote(g, tier="working")
        sw.close()
    r = run_cli("--root", str(g), "dashboard", "--format", "markdown", "--no-charts")
    assert r.code == 0, r.err
    assert "(from task-a, task-b)" in r.out
