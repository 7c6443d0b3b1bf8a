"""CLI papercuts of the polish work: board --limit/--at, search --thread/--min-score, help on
every option, and ``swarmlog diff`` (facts added, removed, changed between two points)."""

from __future__ import annotations

from datetime import datetime, timezone

import orjson
import pytest
import typer.main

from tests.cli_util import run_cli


def _fill(root: str, n: int) -> None:
    lines = "".join(
        orjson.dumps(
            {
                "type": "memory.shared",
                "thread": f"t{i % 2}",
                "body": {
                    "content": f"distinct finding {i} about subsystem q{i * 7919 % 1000} z{i}",
                    "category": "x",
                    "importance": 0.5,
                },
            }
        ).decode()
        + "\n"
        for i in range(n)
    )
    assert run_cli("--root", root, "append", "-a", "a1", "--jsonl", stdin=lines).code == 0
    assert run_cli("--root", root, "synth", "--once").code == 0


def test_board_limit_and_at(cli_root: str) -> None:
    _fill(cli_root, 60)
    r = run_cli("--root", cli_root, "board")
    rows = [ln for ln in r.out.splitlines() if ln.startswith("f")]
    assert len(rows) == 50 and rows[-1].startswith("f60 ")  # the newest 50
    assert "... 10 more fact(s) (--limit 0 lists all)" in r.out
    r = run_cli("--root", cli_root, "board", "--limit", "3")
    assert [ln.split()[0] for ln in r.out.splitlines()[1:4]] == ["f58", "f59", "f60"]
    assert len([ln for ln in run_cli("--root", cli_root, "board", "--limit", "0").out.splitlines()
                if ln.startswith("f")]) == 60  # fmt: skip
    assert len(orjson.loads(run_cli("--root", cli_root, "board", "--json").out)) == 60
    # --at: the board as it stood: before the synthesizer's pass, no fact at all
    assert "the board is empty" in run_cli("--root", cli_root, "board", "--at", "60").out
    at = orjson.loads(run_cli("--root", cli_root, "board", "--at", "70", "--json").out)
    assert 0 < len(at) < 60
    r = run_cli("--root", cli_root, "board", "--limit", "-1")
    assert r.code == 1 and "--limit" in r.err


def test_search_thread_and_min_score(cli_root: str) -> None:
    _fill(cli_root, 20)
    hits = orjson.loads(run_cli("--root", cli_root, "search", "distinct finding", "--json",
                                "-n", "20").out)  # fmt: skip
    assert len(hits) == 20
    odd = orjson.loads(
        run_cli("--root", cli_root, "search", "distinct finding", "--thread", "t1", "-n", "20",
                "--json").out
    )
    assert odd and {int(h["content"].split()[2]) % 2 for h in odd} == {1}
    cut = sorted(h["relevance"] for h in hits)[10]
    strong = orjson.loads(
        run_cli("--root", cli_root, "search", "distinct finding", "--min-score", str(cut),
                "-n", "20", "--json").out
    )
    assert strong and all(h["relevance"] >= cut for h in strong) and len(strong) < 20


def test_every_option_has_help() -> None:
    from dashboards.cli import load_commands

    missing = []

    def walk(c: object, path: list[str]) -> None:
        for p in getattr(c, "params", []):
            if not getattr(p, "help", None) and p.name != "help":
                missing.append(f"{' '.join(path)} {p.name}")
        for name, sub in getattr(c, "commands", {}).items():
            walk(sub, [*path, name])

    walk(typer.main.get_command(load_commands([])), ["swarmlog"])
    assert missing == []
    r = run_cli("dashboard", "--help")
    assert "DESIGN" not in r.out


@pytest.mark.slow
def test_diff_between_seqs_and_times(cli_root: str) -> None:
    _fill(cli_root, 4)  # seq 1-4 memories, then the synthesizer's decisions
    last = orjson.loads(run_cli("--root", cli_root, "replay", "--json").out)["seq"]
    r = run_cli("--root", cli_root, "board", "cas", "f2", "--expect",
                str(orjson.loads(run_cli("--root", cli_root, "board", "f2", "--json").out)
                    ["fact"]["version"]),
                "--status", "retracted", "--reason", "wrong")  # fmt: skip
    assert r.code == 0, r.err
    d = orjson.loads(run_cli("--root", cli_root, "diff", "--from", "4", "--json").out)
    assert d["from_seq"] == 4 and d["to_seq"] == last + 1
    assert [f["id"] for f in d["added"]] == ["f1", "f2", "f3", "f4"] and d["removed"] == []
    d = orjson.loads(
        run_cli("--root", cli_root, "diff", "--from", str(last), "--to", str(last + 1),
                "--json").out
    )
    assert d["added"] == [] and [c["id"] for c in d["changed"]] == ["f2"]
    assert d["changed"][0]["changes"]["status"] == ["active", "retracted"]
    text = run_cli("--root", cli_root, "diff", "--from", str(last)).out.splitlines()
    assert text[0].endswith("0 added, 0 removed, 1 changed")
    assert text[1].startswith("~ f2") and "status active -> retracted" in text[1]
    # times: from long ago to now is everything; ISO without a zone is UTC
    old = datetime(2000, 1, 1, tzinfo=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    d = orjson.loads(run_cli("--root", cli_root, "diff", "--from", old, "--json").out)
    assert d["from_seq"] == 0 and len(d["added"]) == 4
    for args, needle in (
        (["--from", "yesterday"], "--from takes a seq"),
        (["--from", "5", "--to", "2"], "swap them"),
        (["--from", "99999"], "past the end"),
    ):
        r = run_cli("--root", cli_root, "diff", *args)
        assert r.code == 1 and needle in r.err and len(r.err.strip().splitlines()) == 1, r
