"""The commands an agent runs once per action import only what they use (small-items work).

Each check runs a command through ``dashboards.cli.main`` in a fresh interpreter and then
looks at ``sys.modules``: what a command must not load (numpy, rich, the synthesizer
worker, the dashboard, the demo) is asserted absent, and what it needs is asserted
present, so the check cannot pass by running nothing. No timing here (see
scripts/bench/cli_bench.py).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from synthesizer.swarm import Swarm

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import sys
from dashboards.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
else:
    code = 0
import orjson
sys.stderr.write("\\nMODULES " + orjson.dumps({"code": code, "mods": sorted(sys.modules)}).decode())
"""

HEAVY = {
    "numpy",
    "rich",
    "typer",
    "click",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "dashboards.app",
    "dashboards.commands.dash",
    "dashboards.dashboard",
    "synthesizer.worker.synth",
    "synthesizer.demo",
    "synthesizer.metrics",
    "synthesizer.search.embed",
    "watchfiles",
}


def _modules(*args: str) -> tuple[int, set[str]]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    data = orjson.loads(r.stderr.rsplit("\nMODULES ", 1)[1])
    return int(data["code"] or 0), set(data["mods"])


@pytest.fixture(scope="module")
def swarm_root(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("cli-imports") / "swarm"
    with Swarm.open(root) as sw:
        sw.agent("ann").share("The cache drops keys under load")
        sw.synthesize()
        fid = next(iter(sw.state().facts))
    return str(root), fid


def _loaded(mods: set[str], name: str) -> bool:
    return any(m == name or m.startswith(name + ".") for m in mods)


def test_append_loads_the_log_and_the_plain_body_checks_only(swarm_root: tuple[str, str]) -> None:
    root, _ = swarm_root
    code, mods = _modules("--root", root, "append", "--agent", "bob", "a new finding")
    assert code == 0
    assert {"swarmlog.file.log", "synthesizer.events", "dashboards.commands.act_log"} <= mods
    assert not any(_loaded(mods, h) for h in HEAVY), sorted(h for h in HEAVY if _loaded(mods, h))
    for name in ("synthesizer.state", "synthesizer.swarm", "dashboards.commands.synth"):
        assert name not in mods


def test_tail_loads_no_body_models(swarm_root: tuple[str, str]) -> None:
    root, _ = swarm_root
    code, mods = _modules("--root", root, "tail", "--json")
    assert code == 0 and "dashboards.commands.act_log" in mods
    assert not any(_loaded(mods, h) for h in HEAVY)
    assert "synthesizer.events" not in mods and "synthesizer.state" not in mods


@pytest.mark.parametrize(
    "args",
    [
        ("board",),
        ("board", "{fid}"),
        ("board", "cas", "plan", "--expect", "0", "--content", "the plan"),
        ("reinforce", "--agent", "cid", "{fid}"),
    ],
)
def test_board_and_reinforce_fold_without_numpy_pydantic_or_typer(
    swarm_root: tuple[str, str], args: tuple[str, ...]
) -> None:
    root, fid = swarm_root
    code, mods = _modules("--root", root, *(a.format(fid=fid) for a in args))
    assert code == 0
    assert "synthesizer.state" in mods  # they do fold the log
    assert not any(_loaded(mods, h) for h in HEAVY), sorted(h for h in HEAVY if _loaded(mods, h))


def test_a_losing_cas_records_its_conflict_without_pydantic(swarm_root: tuple[str, str]) -> None:
    root, _ = swarm_root
    assert (
        _modules("--root", root, "board", "cas", "lose", "--expect", "0", "--content", "a")[0] == 0
    )
    code, mods = _modules("--root", root, "board", "cas", "lose", "--expect", "0", "--content", "b")
    assert code == 3  # the conflict, recorded as a board.conflict event
    assert "synthesizer.state" in mods
    assert not any(_loaded(mods, h) for h in HEAVY), sorted(h for h in HEAVY if _loaded(mods, h))
    from swarmlog import open_log

    log = open_log(root)
    try:
        assert any(ev.type == "board.conflict" for ev in log.read(1))
    finally:
        log.close()


def test_search_needs_the_embedder_but_not_rich_or_the_worker(
    swarm_root: tuple[str, str],
) -> None:
    root, _ = swarm_root
    code, mods = _modules("--root", root, "search", "cache keys")
    assert code == 0 and "numpy" in mods and "synthesizer.search.embed" in mods
    for name in (
        "rich",
        "typer",
        "click",
        "pydantic",
        "synthesizer.worker.synth",
        "synthesizer.demo",
        "dashboards.commands.dash",
    ):
        assert not _loaded(mods, name), name


def test_stats_loads_the_metrics_but_not_rich_typer_or_the_dashboard(
    swarm_root: tuple[str, str],
) -> None:
    root, _ = swarm_root
    code, mods = _modules("--root", root, "stats", "--json")
    assert code == 0 and "synthesizer.metrics" in mods and "dashboards.commands.act_stats" in mods
    for name in (
        "rich",
        "typer",
        "click",
        "pydantic",
        "numpy",
        "dashboards.commands.dash",
        "dashboards.dashboard",
        "dashboards.demo",
        "synthesizer.worker.synth",
    ):
        assert not _loaded(mods, name), name


@pytest.mark.parametrize("name", ["append", "tail", "search", "reinforce", "board", "cas"])
def test_typer_help_lists_every_declared_option(name: str) -> None:
    """The typer command is built from the same declaration the fast path parses."""
    from dashboards.commands import act_board, act_log, act_synth
    from tests.cli_util import run_cli

    cmd = {
        "append": act_log.APPEND,
        "tail": act_log.TAIL,
        "search": act_synth.SEARCH,
        "reinforce": act_synth.REINFORCE,
        "board": act_board.BOARD,
        "cas": act_board.CAS,
    }[name]
    args = ("board", "cas", "--help") if name == "cas" else (name, "--help")
    r = run_cli(*args)
    assert r.code == 0 and "Usage:" in r.out
    for p in cmd.params:
        for decl in p.decls:
            assert decl in r.out, (name, decl)
        if p.positional:
            assert (p.metavar or p.name) in r.out


def test_help_and_other_commands_see_every_command() -> None:
    code, mods = _modules("--help")
    assert code == 0
    assert {
        "dashboards.commands.board",
        "dashboards.commands.dash",
        "dashboards.commands.log",
        "dashboards.commands.synth",
    } <= mods


def test_importing_the_app_does_not_import_the_cli_back() -> None:
    code = "import sys, dashboards.app; print('dashboards.cli' in sys.modules)"
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert r.returncode == 0 and r.stdout.strip() == "False"


def test_the_library_imports_nothing_heavy_by_itself() -> None:
    code = (
        "import sys, swarmlog, synthesizer.board, synthesizer.swarm; "
        "print(sorted(m for m in ('numpy', 'pydantic', 'watchfiles', 'rich', 'typer') "
        "if m in sys.modules))"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    # the body checks and the configuration are plain Python: nothing heavy at all
    assert r.returncode == 0 and r.stdout.strip() == "[]"
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, swarmlog; print('pydantic' in sys.modules, 'watchfiles' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert r.stdout.strip() == "False False"


# ---------------------------------------------------------------------- the fast path

LINES: list[tuple[str, ...]] = [
    ("tail", "--json"),
    ("tail", "--from", "2", "--agent", "bob"),
    ("board",),
    ("board", "--json"),
    ("board", "{fid}"),
    ("board", "{fid}", "--json"),
    ("board", "show", "{fid}"),
    ("board", "nope"),
    ("search", "cache keys", "--json", "--limit", "3"),
    ("search", "cache", "--limit", "0"),
    ("search", "cache", "--limit", "x"),
    ("append", "--agent", "dan", "Another finding", "--importance", "0.9"),
    ("append", "--agent", "dan", "--json", "--body", '{"content": "x", "importance": 0.2}'),
    ("append", "--agent", "dan"),
    ("append", "--agent", "dan", "x", "--expect", "3"),
    ("append", "--agent=dan", "x", "--bogus"),
    ("append", "x"),
    ("append", "--help"),
    ("reinforce", "--agent", "eve", "{fid}"),
    ("reinforce", "--agent", "eve", "f999", "--json"),
    ("board", "cas", "plan", "--expect", "0", "--content", "the plan", "--evidence", "1"),
    ("board", "cas", "plan", "--expect", "0", "--value", "again", "--json"),
    ("board", "cas", "plan", "--expect", "zero"),
    ("board", "cas", "plan"),
    ("board", "--json", "{fid}"),
]


def _normal(text: str) -> str:
    """Output with what differs between two identical swarms (ids, times) masked."""
    import re

    text = re.sub(r"[0-9a-f]{32}", "ID", text)
    text = re.sub(r"\b1\d{9}(\.\d+)?(e[+-]?\d+)?", "T", text)  # unix times
    text = re.sub(r"\d\d:\d\d:\d\d(\.\d+)?", "HH:MM:SS", text)
    return re.sub(r"\d{4}-\d\d-\d\d", "DATE", text)


def _same_swarm(root: Path) -> str:
    with Swarm.open(root, name="same") as sw:
        sw.agent("ann").share("The cache drops keys under load")
        sw.agent("bob").share("The cache drops keys under load")
        sw.agent("bob").share("Uploads time out after 30 s")
        sw.synthesize()
        return sorted(sw.state().facts)[0]


@pytest.mark.slow
def test_fast_path_and_typer_give_the_same_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every line, run through the fast path on one swarm and through typer on an
    identical one: same exit code, same output (ids and times masked), same log."""
    from swarmlog import open_log
    from tests.cli_util import run_cli

    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fid = _same_swarm(fast)
    assert _same_swarm(slow) == fid
    for line in LINES:
        args = [a.replace("{fid}", fid) for a in line]
        monkeypatch.delenv("SWARMLOG_NO_FASTPATH", raising=False)
        a = run_cli("--root", str(fast), *args)
        monkeypatch.setenv("SWARMLOG_NO_FASTPATH", "1")
        b = run_cli("--root", str(slow), *args)
        assert (a.code, _normal(a.out), _normal(a.err)) == (
            b.code,
            _normal(b.out),
            _normal(b.err),
        ), args
    with open_log(fast) as lf, open_log(slow) as ls:
        ea, eb = list(lf.read()), list(ls.read())
    assert [(e.type, e.agent, e.key, e.body) for e in ea] == [
        (e.type, e.agent, e.key, e.body) for e in eb
    ]


@pytest.mark.slow
def test_plain_lines_skip_typers_parser(swarm_root: tuple[str, str]) -> None:
    root, fid = swarm_root
    _, mods = _modules("--root", root, "tail")
    assert "dashboards.fastpath" in mods and "typer._adapters" not in mods
    _, mods = _modules("--root", root, "board", fid, "--json")
    assert "typer._adapters" not in mods
    code, mods = _modules("--root", root, "tail", "--help")
    assert code == 0 and "typer._adapters" in mods  # help is typer's


def test_a_started_worker_builds_the_body_models_it_appends() -> None:
    """The per-action commands keep the synthesizer's body models lazy; a worker loads
    them when it starts (``worker.warm``, first thing in ``run``), not in its first batch."""
    code = (
        "import sys\n"
        "from synthesizer.worker.synth import warm\n"
        "before = 'synthesizer.body_models' in sys.modules\n"
        "warm()\n"
        "print(before, 'synthesizer.body_models' in sys.modules, 'pydantic' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]
