"""CLI: synth, search, reinforce, checkpoint, replay — happy paths and bad input."""

from __future__ import annotations

import orjson
import pytest

from tests.cli_util import run_cli


def _share(root: str, agent: str, text: str) -> None:
    r = run_cli("--root", root, "append", "--agent", agent, text)
    assert r.code == 0, r.err


@pytest.mark.slow
def test_synth_search_reinforce_replay(cli_root: str) -> None:
    for a in ("a1", "a2", "a3"):
        _share(cli_root, a, "The export job drops archived projects")
    _share(cli_root, "a1", "Webhook retries are not idempotent")
    r = run_cli("synth", "--once", "--root", cli_root, "--json")
    assert r.code == 0, r.err
    out = orjson.loads(r.out)
    assert out["decisions"] == 4 and out["facts"] == 2
    r = run_cli("--root", cli_root, "search", "export archived projects", "--json")
    hits = orjson.loads(r.out)
    assert hits[0]["id"] == "f1" and hits[0]["support"] == 3
    r = run_cli("--root", cli_root, "search", "webhook idempotent retries")
    assert r.code == 0 and "Webhook retries" in r.out.splitlines()[0]
    r = run_cli("--root", cli_root, "reinforce", "--agent", "a2", "f1")
    assert r.code == 0 and "reinforced f1" in r.out
    r = run_cli("--root", cli_root, "checkpoint")
    assert r.code == 0 and "checkpoint at seq" in r.out
    a = orjson.loads(run_cli("--root", cli_root, "replay", "--json").out)
    b = orjson.loads(run_cli("--root", cli_root, "replay", "--from-start", "--json").out)
    assert a["digest"] == b["digest"] and a["facts"] == 2 and a["seq"] == b["seq"]
    early = orjson.loads(run_cli("--root", cli_root, "replay", "--at", "3", "--json").out)
    assert early["seq"] == 3 and early["facts"] == 0 and early["pending"] == 3
    r = run_cli("--root", cli_root, "replay")
    assert r.code == 0 and r.out.startswith("digest ")
    r = run_cli("--root", cli_root, "checkpoint", "--list")
    assert "swarmstate" in r.out


def test_bad_input(cli_root: str) -> None:
    _share(cli_root, "a1", "something")
    run_cli("--root", cli_root, "synth")
    before = orjson.loads(run_cli("--root", cli_root, "replay", "--json").out)["seq"]
    cases = [
        (("reinforce", "--agent", "a1", "f404"), "unknown fact"),
        (("reinforce", "--agent", "bad name", "f1"), "forbidden character"),
        (("search", "x", "--limit", "0"), "--limit"),
        (("replay", "--at", "-2"), "--at"),
        (("replay", "--at", "3", "--at-time", "5"), "not both"),
        (("replay", "--at-time", "yesterday-ish"), "--at-time"),
        (("synth", "--once", "--follow"), "not both"),
        (("synth", "--batch", "0"), "batch_size"),
        (("append", "--agent", "a1", "--importance", "7", "x"), "importance"),
    ]
    for args, needle in cases:
        r = run_cli("--root", cli_root, *args)
        assert r.code == 1, (args, r)
        assert needle in r.err and r.err.count("\n") == 1 and "Traceback" not in r.err, r.err
    after = orjson.loads(run_cli("--root", cli_root, "replay", "--json").out)["seq"]
    assert after == before
    r = run_cli("--root", cli_root, "replay", "--at", "abc")
    assert r.code == 2


def test_missing_log_is_an_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("--root", str(tmp_path / "nothing"), "synth")
    assert r.code == 1 and "swarmlog init" in r.err
