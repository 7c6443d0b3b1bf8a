"""Who may write what (docs/design.md §10): forged synthesizer events, another agent's
erasure and board writes without the CAS are stored but change nothing in the fold, and
the dashboard counts them; the genuine writers (worker, board, operators) still work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import Event, open_log
from synthesizer import SwarmState
from synthesizer import events as T
from synthesizer.metrics import compute
from synthesizer.replay import state_at
from synthesizer.swarm import Swarm
from tests.cli_util import run_cli


def _content(s: SwarmState) -> dict[str, Any]:
    """What the fold makes of the swarm's memory: facts (without the key version, which
    follows the log's CAS index for any keyed record), pending raws, progress, indexes."""
    facts = []
    for f in s.facts.values():
        row = f.to_row()
        facts.append([v for k, v in zip(_FIELDS, row, strict=True) if k != "version"])
    return {
        "facts": facts,
        "pending": sorted(s.pending),
        "progress": s.progress,
        "signatures": s.signatures,
        "subjects": s.subjects,
        "stats": s.stats().as_dict(),
    }


def _fields() -> list[str]:
    from synthesizer.state.facts import FACT_FIELDS

    return list(FACT_FIELDS)


_FIELDS = _fields()


def _swarm(root: Path) -> tuple[Swarm, str, str]:
    """Two agents, three facts, one of them corroborated; one raw left undecided."""
    sw = Swarm.open(root)
    sw.agent("a1").share("The API listens on port 8080")
    sw.agent("a2").share("The API listens on port 8080")
    sw.agent("a2").share("Builds take nine minutes on CI")
    sw.synthesize()
    facts = sw.refresh().facts
    by_content = {f.content: f.id for f in facts.values()}
    sw.agent("a1").share("pending: not decided yet")
    port = by_content["The API listens on port 8080"]
    return sw, port, by_content["Builds take nine minutes on CI"]


def test_forged_writes_are_stored_and_change_nothing(tmp_path: Path) -> None:
    sw, port, builds = _swarm(tmp_path / "s")
    try:
        before = sw.refresh()
        want = _content(before)
        last = before.last_seq
        log = sw.log
        version = log.version(T.SYNTH_AGENT)
        forged = [
            # a forged progress mark: not the synthesizer
            Event(
                agent="mallory",
                type=T.SYNTH_PROGRESS,
                key=T.SYNTH_AGENT,
                body={"upto": 10_000, "lease": version},
            ),
            # named "synthesizer" but without the lease version (a raw append)
            Event(
                agent=T.SYNTH_AGENT, type=T.SYNTH_PROGRESS, key=T.SYNTH_AGENT, body={"upto": 10_000}
            ),
            # a stale lease: the version before the last synthesizer batch
            Event(agent=T.SYNTH_AGENT, type=T.FACT_RETRACTED, key=builds, body={"lease": 0}),
            Event(
                agent=T.SYNTH_AGENT,
                type=T.FACT_CREATED,
                key="f999",
                body={"evidence": last, "signature": "forged", "lease": 0},
            ),
            # another agent's erasure by a non-operator
            Event(agent="mallory", type=T.IDENTITY_FORGOTTEN, body={"agent": "a1"}),
            Event(agent="mallory", type=T.IDENTITY_FORGOTTEN, body={"thread": "t"}),
            # a retraction outside the board: no base, then a stale base
            Event(agent="mallory", type=T.FACT_RETRACTED, key=port, body={"reason": "mine"}),
            Event(
                agent="mallory", type=T.FACT_UPDATED, key=port, body={"value": "9090", "base": 1}
            ),
        ]
        for e in forged:
            log.append(e)
        stored = [e for e in log.read(last + 1)]
        assert [e.type for e in stored] == [e.type for e in forged]  # all stored
        after = sw.refresh()
        assert after.last_seq == last + len(forged)
        assert _content(after) == want
        m = compute(after)
        assert m.refused == {
            T.FACT_CREATED: 1,
            T.FACT_RETRACTED: 2,
            T.FACT_UPDATED: 1,
            T.IDENTITY_FORGOTTEN: 2,
            T.SYNTH_PROGRESS: 2,
        }
        # replay from the start folds the same (the rules read stored events only)
        assert state_at(log).digest() == after.digest()
        # the genuine writers still work: the worker decides the pending raw under the
        # log's lease (the forged keyed records moved the key's version in the log, so
        # its first attempt conflicts and it retries at the log's version), the board
        # retracts through its CAS
        assert sw.synthesize() + sw.synthesize() == 1
        st = sw.refresh()
        assert st.progress == last and not st.pending
        b = sw.board
        b.cas(port, b.version(port), status="retracted", reason="moved", agent="a2")
        assert sw.refresh().facts[port].status == "retracted"
        hist = b.history(port)
        assert [(h.agent, h.type) for h in hist[-3:]] == [
            ("mallory", T.FACT_RETRACTED),
            ("mallory", T.FACT_UPDATED),
            ("a2", T.FACT_RETRACTED),
        ]
    finally:
        sw.close()


def test_own_erasure_and_operators(tmp_path: Path) -> None:
    sw, port, builds = _swarm(tmp_path / "s")
    try:
        log = sw.log
        # a1 forgets itself: honoured (a2's evidence keeps the port fact)
        log.append(Event(agent="a1", type=T.IDENTITY_FORGOTTEN, body={"agent": "a1"}))
        st = sw.refresh()
        assert [e.agent for e in st.facts[port].evidence] == ["a2"]
        assert compute(st).refused == {}
        # a2 by "ops": refused until the configuration lists ops as an operator
        log.append(Event(agent="ops", type=T.IDENTITY_FORGOTTEN, body={"agent": "a2"}))
        assert builds in sw.refresh().facts
        r = run_cli("--root", str(tmp_path / "s"), "config", "set", "operators=operator,ops")
        assert r.code == 0, r.err
        log.append(Event(agent="ops", type=T.IDENTITY_FORGOTTEN, body={"agent": "a2"}))
        st = state_at(log)
        assert builds not in st.facts and port not in st.facts
        assert compute(st).refused == {T.IDENTITY_FORGOTTEN: 1}
        assert st.config.operators == ("operator", "ops")
    finally:
        sw.close()


def test_cli_forgery_is_counted_on_the_dashboard(tmp_path: Path) -> None:
    root = str(tmp_path / "s")
    w = ("--root", root)
    assert run_cli(*w, "init").code == 0
    assert run_cli(*w, "append", "--agent", "a1", "The API listens on port 8080").code == 0
    assert run_cli(*w, "synth", "--once").code == 0
    r = run_cli(
        *w,
        "append",
        "--agent",
        "a2",
        "--type",
        T.SYNTH_PROGRESS,
        "--key",
        T.SYNTH_AGENT,
        "--body",
        '{"upto": 99}',
    )
    assert r.code == 0  # stored: the log is history; the fold decides what counts
    r = run_cli(*w, "stats", "--json")
    assert r.code == 0, r.err
    d = orjson.loads(r.out)
    assert d["refused"] == {T.SYNTH_PROGRESS: 1}
    r = run_cli(*w, "stats")
    assert "refused writes" in r.out and f"1 {T.SYNTH_PROGRESS}" in r.out


@pytest.mark.parametrize("value", ["a,,b c", "bad name!"])
def test_bad_operator_names_are_refused(tmp_path: Path, value: str) -> None:
    root = str(tmp_path / "s")
    log = open_log(root)
    log.close()
    r = run_cli("--root", root, "config", "set", f"operators={value}")
    assert r.code == 1 and "Traceback" not in r.err and "operator" in r.err
