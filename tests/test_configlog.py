"""The configuration lives in the log (docs/design.md §4): init --set, config show/set, Swarm.open.

Every process folds under the log's ``swarm.configured`` events, so Python, the CLI and
JetStream agree; a later change takes effect from its seq and replay stays exact.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swarmlog import Event, open_log
from synthesizer import events as T
from synthesizer.config import SynthConfig
from synthesizer.configlog import (
    KEYS,
    change_config,
    log_config,
    parse_settings,
    with_settings,
)
from synthesizer.errors import ConfigError, UnknownEmbedder
from synthesizer.replay import load_checkpoint, save_checkpoint, state_at
from synthesizer.search.embed import HashingEmbedder, embedder_for
from synthesizer.state import SwarmState, fold
from synthesizer.swarm import Swarm
from synthesizer.worker.synth import Synthesizer
from tests.cli_util import run_cli
from tests.conftest import LogTarget

ROOT = Path(__file__).resolve().parent.parent

TOPICS = [
    "The login page crashes on Safari 17",
    "Nightly exports time out after 30 minutes",
    "The billing service rounds taxes down",
    "Search ignores accented characters",
    "Mobile push tokens expire after a week",
    "The CSV importer drops the last row",
    "Avatars upload as rotated images",
    "Webhooks retry forever on HTTP 410",
    "Dark mode hides the error banner",
    "Password reset mails land in spam",
]


def _where(t: LogTarget) -> list[str]:
    return ["--url", t.target] if t.backend == "nats" else ["--root", t.target]


def _cli_json(*args: str) -> dict:  # type: ignore[type-arg]
    r = run_cli(*args, "--json")
    assert r.code == 0, r.err
    doc: dict = orjson.loads(r.out)  # type: ignore[type-arg]
    return doc


# ---------------------------------------------------------------- acceptance 2


@pytest.mark.slow
def test_init_set_capacity_is_what_every_process_folds_under(log_target: LogTarget) -> None:
    where = _where(log_target)
    r = run_cli(*where, "init", "--set", "pool.capacity=5")
    assert r.code == 0, r.err
    sw = Swarm.open(log_target.target)  # no config: the log's
    for i, text in enumerate(TOPICS[:6]):
        sw.agent(f"a{i % 3}").share(text)
    sw.synthesize()
    assert run_cli(*where, "synth", "--once").code == 0  # nothing left: same answer
    for i, text in enumerate(TOPICS[6:]):
        sw.agent(f"a{i % 3}").share(text)
    assert run_cli(*where, "synth", "--once").code == 0  # another "process" decides these
    state = sw.state()
    assert state.metrics.raw_total == 10 and not state.metrics.duplicates
    assert len(state.facts) == 5
    assert state.metrics.evictions == {"capacity": 5}
    assert sw.config.pool.capacity == 5
    stats = _cli_json(*where, "stats")
    assert stats["facts_total"] == 5 and stats["capacity"] == 5
    assert stats["embedder"] == "hash" and stats["decay_rate"] == 0.05
    assert _cli_json(*where, "replay")["digest"] == state.digest()
    shown = _cli_json(*where, "config", "show")
    assert shown["seq"] == 1 and shown["settings"]["pool.capacity"] == 5
    assert shown["changed"] == {"pool.capacity": 5}
    sw.close()


def test_conflicting_config_on_open_is_a_one_line_error(log_target: LogTarget) -> None:
    assert run_cli(*_where(log_target), "init", "--set", "pool.capacity=5").code == 0
    other = SynthConfig.model_validate({"pool": {"capacity": 6, "decay_rate": 0.2}})
    with pytest.raises(ConfigError) as ei:
        Swarm.open(log_target.target, config=other)
    msg = str(ei.value)
    assert "\n" not in msg
    assert "pool.capacity is 5, not 6" in msg and "pool.decay_rate" in msg
    assert "seq 1" in msg
    with pytest.raises(ConfigError):
        Synthesizer(open_log(log_target.target), other)
    same = SynthConfig.model_validate({"pool": {"capacity": 5}})
    with Swarm.open(log_target.target, config=same) as sw:  # equal: fine, nothing written
        assert sw.log.last_seq == 1


@pytest.mark.slow
def test_config_set_mid_log_takes_effect_from_its_seq(log_target: LogTarget) -> None:
    where = _where(log_target)
    sw = Swarm.open(log_target.target)
    for text in TOPICS[:4]:
        sw.agent("a1").share(text)
    sw.synthesize()
    sw.tick()
    before = sw.state()
    assert {round(f.strength, 6) for f in before.facts.values()} == {0.95}
    ck1 = sw.checkpoint()  # under the defaults
    r = run_cli(*where, "config", "set", "pool.decay_rate=0.5", "pool.capacity=3")
    assert r.code == 0, r.err
    set_seq = log_config(sw.log).seq
    assert set_seq == sw.log.last_seq
    after_set = sw.state()
    assert len(after_set.facts) == 3  # a smaller capacity evicts at once
    assert after_set.metrics.evictions == {"capacity": 1}
    sw.tick()
    now = sw.state()
    assert {round(f.strength, 6) for f in now.facts.values()} == {0.475}  # 0.95 * (1 - 0.5)
    # time travel: the configuration follows the seq
    assert sw.state(at_seq=set_seq - 1).config.pool.decay_rate == 0.05
    assert sw.state(at_seq=set_seq).config.pool.decay_rate == 0.5
    sw.agent("a2").share(TOPICS[5])
    sw.synthesize()
    ck2 = sw.checkpoint()  # under the new configuration
    sw.agent("a3").share(TOPICS[6])
    sw.synthesize()
    live = sw.state().digest()
    log = sw.log
    from_start = state_at(log, from_start=True).digest()
    assert from_start == live
    for ck in (ck1, ck2):  # checkpoints of either configuration load, and agree
        loaded = load_checkpoint(log, ck)
        assert loaded is not None and loaded.last_seq == ck
        assert state_at(log, at_seq=log.last_seq).digest() == live
    assert load_checkpoint(log, ck1).config.pool.decay_rate == 0.05  # type: ignore[union-attr]
    assert load_checkpoint(log, ck2).config.pool.decay_rate == 0.5  # type: ignore[union-attr]
    assert _cli_json(*where, "replay")["digest"] == live
    assert _cli_json(*where, "replay", "--from-start")["digest"] == live
    sw.close()


# ---------------------------------------------------------------- Swarm.open records


def test_first_open_with_config_records_it_as_the_first_event(log_target: LogTarget) -> None:
    cfg = SynthConfig.model_validate(
        {"pool": {"capacity": 2}, "synthesizer": {"near_duplicate": 0.95}}
    )
    with Swarm.open(log_target.target, config=cfg) as sw:
        first = next(iter(sw.log.read(1, 1)))
        assert first.type == T.SWARM_CONFIGURED and first.key == T.CONFIG_KEY
        assert SynthConfig.model_validate(first.body["config"]) == cfg
        for text in TOPICS[:4]:
            sw.agent("a1").share(text)
        sw.synthesize()
    with Swarm.open(log_target.target) as again:  # no config: folds under the log's
        assert again.config == cfg
        assert len(again.state().facts) == 2
        assert sum(1 for e in again.log.read() if e.type == T.SWARM_CONFIGURED) == 1


def test_existing_swarm_without_recorded_config_has_the_defaults(tmp_path: Path) -> None:
    with Swarm.open(tmp_path / "s") as sw:
        sw.agent("a1").share(TOPICS[0])
    with Swarm.open(tmp_path / "s", config=SynthConfig()) as sw:  # the defaults: equal
        assert log_config(sw.log).seq == 0 and sw.log.last_seq == 1
    with pytest.raises(ConfigError, match="none recorded"):
        Swarm.open(tmp_path / "s", config=SynthConfig.model_validate({"pool": {"capacity": 9}}))


_OPENER = """
import sys
from synthesizer import Swarm, SynthConfig
cfg = SynthConfig.model_validate({"pool": {"capacity": 7}})
with Swarm.open(sys.argv[1], config=cfg) as sw:
    sw.agent("p" + sys.argv[2]).share("process " + sys.argv[2] + " reporting")
"""


def test_concurrent_first_opens_record_one_configuration(tmp_path: Path) -> None:
    target = str(tmp_path / "s")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _OPENER, target, str(i)], env=env, cwd=ROOT)
        for i in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    events = list(open_log(target).read())
    configured = [e for e in events if e.type == T.SWARM_CONFIGURED]
    assert [e.seq for e in configured] == [1]
    assert sorted(e.agent for e in events if e.type == T.MEMORY_SHARED) == ["p0", "p1", "p2", "p3"]


# ---------------------------------------------------------------- checkpoints


def test_checkpoint_folded_under_a_callers_config_is_passed_over(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A checkpoint written before the configuration lived in the log (folded under a
    caller's config) is not the log's state: it is skipped, never trusted."""
    log = open_log(tmp_path / "s")
    for i, text in enumerate(TOPICS):
        log.append(Event(agent=f"a{i}", type=T.MEMORY_SHARED, body={"content": text}))
    Synthesizer(log).run_once()
    events = list(log.read())
    small = SynthConfig.model_validate({"pool": {"capacity": 2}})
    save_checkpoint(log, fold(events, SwarmState(small)))
    assert load_checkpoint(log) is None
    assert "skipping checkpoint" in caplog.text and "never recorded" in caplog.text
    default = fold(events, SwarmState())  # the defaults, as the log has them: usable
    save_checkpoint(log, fold(events[:5], SwarmState()))
    loaded = load_checkpoint(log)
    assert loaded is not None and loaded.last_seq == 5 and loaded.config_seq == 0
    assert state_at(log).digest() == state_at(log, from_start=True).digest() == default.digest()
    assert len(default.facts) == 10


# ---------------------------------------------------------------- keys and values


def test_settings_are_parsed_and_validated_by_the_model() -> None:
    cfg = with_settings(
        SynthConfig(),
        parse_settings(
            ["pool.capacity=50000", "synthesizer.checkpoint_every=200", "embedder=minilm"]
        ),
    )
    assert cfg.pool.capacity == 50000 and cfg.synthesizer.checkpoint_every == 200
    assert cfg.embedder == "minilm" and cfg.synthesizer.checkpoint_keep == 3
    assert "synthesizer.checkpoint_keep" in KEYS and "embedder" in KEYS
    for bad, needle in [
        (["pool.capacity=0"], "pool.capacity"),
        (["pool.capacity=many"], "valid integer"),
        (["pool.decay_rate=1.5"], "< 1.0"),
        (["embedder=bert"], "hash, minilm"),
        (["synthesizer.checkpoint_keep=0"], ">= 1"),
    ]:
        with pytest.raises(ConfigError, match=needle) as ei:
            with_settings(SynthConfig(), parse_settings(bad))
        assert "\n" not in str(ei.value)
    with pytest.raises(ConfigError, match=r"unknown configuration key 'pool\.size'; allowed: "):
        parse_settings(["pool.size=3"])
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_settings(["pool.capacity"])


def test_embedder_registry() -> None:
    assert isinstance(embedder_for("hash"), HashingEmbedder)
    with pytest.raises(UnknownEmbedder) as ei:
        embedder_for("bert")
    assert "\n" not in str(ei.value) and "hash" in str(ei.value)


def test_cli_bad_settings_exit_1_in_one_line_and_leave_the_log_alone(cli_root: str) -> None:
    for args in (
        ["config", "set", "pool.capcity=5"],
        ["config", "set", "pool.capacity=-1"],
        ["config", "set", "embedder"],
        ["init", "--set", "tiers.nope=1"],
    ):
        r = run_cli("--root", cli_root, *args)
        assert r.code == 1, args
        assert r.err.startswith("error: ") and r.err.count("\n") == 1, r.err
        assert "Traceback" not in r.err
    assert open_log(cli_root).last_seq == 0
    assert run_cli("--root", cli_root, "config", "set", "pool.capacity=5").code == 0
    r = run_cli("--root", cli_root, "init", "--set", "pool.capacity=6")
    assert r.code == 1 and "config set" in r.err
    assert run_cli("--root", cli_root, "init", "--set", "pool.capacity=5").code == 0  # same
    r = run_cli("--root", cli_root, "config", "set", "pool.capacity=5")  # unchanged: no event
    assert r.code == 0 and "unchanged" in r.out
    assert open_log(cli_root).last_seq == 1
    r = run_cli("--root", cli_root, "config")
    assert r.code == 0 and "pool.capacity = 5  (set here)" in r.out and "seq 1" in r.out


def test_stats_show_the_pool_capacity(cli_root: str) -> None:
    assert run_cli("--root", cli_root, "config", "set", "pool.capacity=50000").code == 0
    with Swarm.open(cli_root) as sw:
        sw.agent("a1").share(TOPICS[0])
    r = run_cli("--root", cli_root, "stats")
    assert r.code == 0
    assert "holds at most 50000 facts · decay 0.05 per tick · embedder hash" in r.out


def test_concurrent_config_sets_lose_nothing(tmp_path: Path) -> None:
    log = open_log(tmp_path / "s")
    a, b = open_log(tmp_path / "s"), open_log(tmp_path / "s")
    change_config(a, {"pool.capacity": "10"})
    change_config(b, {"pool.decay_rate": "0.3"})  # b read nothing stale: CAS re-reads
    cur = log_config(log)
    assert cur.config.pool.capacity == 10 and cur.config.pool.decay_rate == 0.3
    assert cur.seq == 2 and cur.changed == {"pool.decay_rate": 0.3}


# ---------------------------------------------------------------- determinism


op = st.one_of(
    st.tuples(st.just("share"), st.integers(0, 9)),
    st.tuples(st.just("tick")),
    st.tuples(st.just("synth")),
    st.tuples(st.just("reinforce"), st.integers(0, 20)),
    st.tuples(
        st.just("config"),
        st.sampled_from(["pool.capacity", "pool.decay_rate", "tiers.working_decay"]),
        st.integers(1, 6),
    ),
)


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=30), cut=st.floats(0, 1))
def test_replay_with_config_changes_from_any_checkpoint_is_one_digest(
    ops: list, cut: float  # type: ignore[type-arg]
) -> None:
    with tempfile.TemporaryDirectory() as d:
        sw = Swarm.open(Path(d) / "s")
        for o in ops:
            if o[0] == "share":
                sw.agent(f"a{o[1] % 3}").share(TOPICS[o[1]])
            elif o[0] == "tick":
                sw.tick()
            elif o[0] == "synth":
                sw.synthesize()
            elif o[0] == "reinforce":
                facts = sorted(sw.state().facts)
                if facts:
                    sw.agent("r").reinforce(facts[o[1] % len(facts)])
            else:
                value = str(o[2]) if o[1] == "pool.capacity" else str(o[2] / 10)
                change_config(sw.log, {o[1]: value})
        sw.synthesize()
        live = sw.state()
        assert live.config == log_config(sw.log).config
        log = sw.log
        k = int(cut * log.last_seq)
        save_checkpoint(log, state_at(log, at_seq=k, from_start=True))
        assert state_at(log).digest() == state_at(log, from_start=True).digest() == live.digest()
        assert len(live.facts) <= live.config.pool.capacity
        sw.close()


def test_worker_checkpoints_at_the_logs_cadence(cli_root: str) -> None:
    assert run_cli("--root", cli_root, "config", "set", "synthesizer.checkpoint_every=5").code == 0
    with Swarm.open(cli_root) as sw:
        for text in TOPICS[:6]:
            sw.agent("a1").share(text)
    assert run_cli("--root", cli_root, "synth", "--once").code == 0  # a fresh worker
    log = open_log(cli_root)
    # 14 events >= 5 (not 1000); the pass's lease release mark follows the checkpoint
    assert [c.seq for c in log.checkpoints.list()] == [log.last_seq - 1]
    md = run_cli("--root", cli_root, "dashboard", "--format", "markdown")
    assert "| pool | holds at most 1000 facts · decay 0.05 per tick · embedder hash |" in md.out


class _Letters:
    """A tiny deterministic embedder: letter counts (a stand-in registered as "minilm")."""

    id = "letters-26"
    dim = 26

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


@pytest.mark.slow
def test_config_set_embedder_switches_every_process_from_its_seq(tmp_path: Path) -> None:
    from synthesizer.search import embed

    saved = dict(embed._FACTORIES)
    embed.register_embedder("minilm", _Letters)
    try:
        with Swarm.open(tmp_path / "s") as sw:
            sw.agent("a1").share(TOPICS[0])
            sw.synthesize()
            assert sw.embedder.id.startswith("hash")
            change_config(sw.log, {"embedder": "minilm"})
            sw.agent("a2").share(TOPICS[1])
            sw.synthesize()
            assert sw.embedder.id == "letters-26"
            assert sorted(sw.index.space.namespaces()) == [("letters-26", 26)]
            assert len(sw.state().facts) == 2
            hits = sw.agent("a3").recall(TOPICS[1], limit=1)
            assert hits and hits[0].fact.content == TOPICS[1]
            live = sw.state().digest()
        w = Synthesizer(open_log(tmp_path / "s"))  # a fresh worker: the log's embedder
        w.catch_up()
        assert w.index.embedder.id == "letters-26" and w.state.digest() == live
    finally:
        embed._FACTORIES.clear()
        embed._FACTORIES.update(saved)


def test_the_config_key_is_not_a_fact_id(tmp_path: Path) -> None:
    from swarmlog import InvalidEvent

    with Swarm.open(tmp_path / "s") as sw:
        for reserved in (T.CONFIG_KEY, "synthesizer"):
            with pytest.raises(InvalidEvent, match="reserved key"):
                sw.board.cas(reserved, 0, content="hijack")
        assert sw.log.last_seq == 0
