"""Installing and running from a clone (polish work): the wheel, --version, missing extras
and a closed pipe, each as a user meets them (real processes, real pipes)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from swarmlog.version import __version__
from tests.cli_util import run_cli

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
pytestmark = pytest.mark.timeout(300)


def _swarmlog(*args: str) -> list[str]:
    return [sys.executable, "-m", "dashboards", *args]


def test_docs_never_install_from_a_registry_name() -> None:
    # `pip install 'swarmlog[mcp]'` finds no distribution: swarmlog comes from its clone
    for p in DOCS:
        text = p.read_text()
        assert not re.search(r"pip install\s+'?swarmlog\[", text), p.name
    for p in [*ROOT.glob("dashboards/*.py"), *ROOT.glob("synthesizer/*.py")]:
        assert "install 'swarmlog[" not in p.read_text() and "install swarmlog[" not in (
            p.read_text()
        ), p.name


def test_version_flag() -> None:
    for args in (["--version"], ["-V"], ["--root", "x", "--version"]):
        r = run_cli(*args)
        assert (r.code, r.out.strip()) == (0, f"swarmlog {__version__}"), (args, r)
    probe = "from importlib import metadata; print(metadata.version('swarmlog'))"
    meta = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
    )
    assert meta.stdout.strip() == __version__  # pyproject reads swarmlog/version.py


@pytest.mark.slow
def test_wheel_builds_and_runs_outside_the_clone(tmp_path: Path) -> None:
    # `python -m build`: an sdist, then the wheel built from that sdist (so both are whole)
    try:
        import build  # noqa: F401

        cmd = [sys.executable, "-m", "build", "-o", str(tmp_path / "dist"), str(ROOT)]
    except ImportError:
        cmd = [sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w",
               str(tmp_path / "dist")]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp_path / "dist").glob("swarmlog-*.whl")
    assert wheel.name.startswith(f"swarmlog-{__version__}-")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        z.extractall(tmp_path / "site")
    assert "dashboards/demo/scenarios/triage.json" in names or any(
        n.startswith("dashboards/demo/scenarios/") and n.endswith(".json") for n in names
    )
    assert {"swarmlog/py.typed", "synthesizer/py.typed", "swarmlog/version.py"} <= names
    assert not any(n.startswith("tests/") for n in names)
    for extra in ("mcp", "nats", "langgraph", "embed", "charts"):
        assert f"Provides-Extra: {extra}" in meta, extra
    assert re.search(r"Requires-Dist: langgraph[<>=!,\d. ]*; extra == \"langgraph\"", meta)
    # the unpacked wheel alone (no clone on the path) runs a swarm end to end
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    work = tmp_path / "elsewhere"
    work.mkdir()
    out = subprocess.run(
        [sys.executable, "-m", "dashboards", "--version"],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.strip() == f"swarmlog {__version__}", out.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import dashboards, synthesizer; print(dashboards.__file__)"],
        cwd=work, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert probe.stdout.startswith(str(tmp_path / "site")), probe.stdout
    outs = []
    for args in (["init"], ["append", "-a", "a1", "the cache ttl is five minutes"],
                 ["synth", "--once"], ["search", "cache ttl"]):  # fmt: skip
        run = subprocess.run(
            [sys.executable, "-m", "dashboards", "--root", "s", *args],
            cwd=work, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 0, (args, run.stderr)
        outs.append(run.stdout)
    assert "the cache ttl is five minutes" in outs[-1]


def _many_events(root: Path, n: int = 3000) -> None:
    lines = "".join(
        f'{{"type":"memory.shared","body":{{"content":"finding number {i} about the cache",'
        f'"category":"x","importance":0.5}}}}\n'
        for i in range(n)
    )
    assert run_cli("--root", str(root), "init").code == 0
    r = run_cli("--root", str(root), "append", "-a", "a1", "--jsonl", stdin=lines)
    assert r.code == 0, r.err


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "typer"])
def test_a_closed_pipe_ends_quietly(tmp_path: Path, fast: bool) -> None:
    root = tmp_path / "s"
    _many_events(root)
    env = dict(os.environ)
    if not fast:
        env["SWARMLOG_NO_FASTPATH"] = "1"
    for args in (["tail", "--from", "1"], ["tail", "--from", "1", "--json"]):
        p = subprocess.Popen(
            _swarmlog("--root", str(root), *args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()  # as `| head -1`: read a line, then go away
        p.stdout.close()
        err = p.stderr.read().decode()
        code = p.wait(timeout=60)
        assert first.strip()
        assert err == "", err  # no "error: Broken pipe", no traceback
        assert code == 0, code  # (through typer too: click's own EPIPE exit is 1)


@pytest.mark.parametrize("fast", [True, False], ids=["fastpath", "typer"])
def test_tail_into_head_through_a_shell_pipe(tmp_path: Path, fast: bool) -> None:
    """``swarmlog tail | head -2`` as a user types it: head gets its lines, and the
    command, whose reader went away, exits 0 and prints nothing on stderr."""
    root = tmp_path / "s"
    _many_events(root)  # (far more than a pipe's buffer: the writer meets EPIPE)
    env = dict(os.environ, SWARMLOG_NO_FASTPATH="" if fast else "1")
    cmd = " ".join(map(shlex.quote, _swarmlog("--root", str(root), "tail", "--from", "1")))
    script = f'{cmd} 2>"$ERR" | head -2; echo "${{PIPESTATUS[0]}}" >"$RC"'
    err, rc = tmp_path / "err", tmp_path / "rc"
    out = subprocess.run(
        ["bash", "-c", script], env={**env, "ERR": str(err), "RC": str(rc)},
        capture_output=True, timeout=120, check=True,
    )  # fmt: skip
    lines = out.stdout.decode().splitlines()
    assert len(lines) == 2 and "finding number 0 " in lines[0], lines
    assert err.read_text() == ""
    assert rc.read_text().strip() == "0"


MISSING = """
import sys
sys.modules[sys.argv[1]] = None  # as if the extra were not installed
from dashboards.cli import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize(
    ("module", "extra", "args"),
    [
        ("nats", "nats", ["--url", "nats://127.0.0.1:1/team", "tail"]),
        ("mcp", "mcp", ["mcp", "--agent", "a1"]),
    ],
)
def test_a_missing_extra_is_one_line_naming_a_command_that_works(
    tmp_path: Path, module: str, extra: str, args: list[str]
) -> None:
    r = subprocess.run(
        [sys.executable, "-c", MISSING, module, "--root", str(tmp_path / "s"), *args]
        if module != "nats"
        else [sys.executable, "-c", MISSING, module, *args],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert f"scripts/setup {extra}" in lines[0] and f"pip install '.[{extra}]'" in lines[0]
    assert "swarmlog[" not in lines[0]


def test_langgraph_import_without_the_extra_names_it() -> None:
    r = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['langgraph'] = None\n"
         "import synthesizer.integrations.langgraph"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(
        "ModuleNotFoundError: synthesizer.integrations.langgraph needs the langgraph extra"
    )
    assert "scripts/setup langgraph" in last


def test_the_langgraph_extra_installs_langgraph_itself() -> None:
    pytest.importorskip("langgraph.graph")  # a StateGraph, not only the store's base


def test_jsonl_body_errors_name_the_line(tmp_path: Path) -> None:
    good = '{"type":"memory.shared","body":{"content":"x","category":"c","importance":0.5}}\n'
    root = str(tmp_path / "s")
    assert run_cli("--root", root, "init").code == 0
    r = run_cli(
        "--root", root, "append", "-a", "a1", "--jsonl",
        stdin=good + '{"type":"memory.shared","body":{"category":"c"}}\n',
    )  # fmt: skip
    assert r.code == 1 and r.err.strip().startswith("error: line 2: memory.shared body"), r.err
    assert run_cli("--root", root, "tail", "--json").out == ""  # nothing appended


def test_setup_after_the_test_extra_covers_the_demos_extras(tmp_path: Path) -> None:
    from tests.test_small_items import _pip_calls, _run_setup, _setup_copy

    tmp = _setup_copy(tmp_path)
    assert _run_setup(tmp, "test").returncode == 0
    calls = _pip_calls(tmp)
    for extras in ("mcp,charts", "mcp", "langgraph", ""):  # scripts/demo's, and others
        r = _run_setup(tmp, *([extras] if extras else []))
        assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r
    assert _pip_calls(tmp) == calls  # nothing installed again
    assert _run_setup(tmp, "mcp,other").returncode == 0  # not covered: installs
    assert ".[mcp,other]" in _pip_calls(tmp)[-1]


def test_scripts_demo_installs_the_mcp_extra() -> None:
    text = (ROOT / "scripts" / "demo").read_text()
    assert "scripts/setup mcp,charts" in text


def test_a_missing_embed_extra_is_one_line(tmp_path: Path) -> None:
    """A swarm configured for minilm, run where onnxruntime is missing."""
    root = str(tmp_path / "s")
    assert run_cli("--root", root, "init", "--set", "embedder=minilm").code == 0
    assert run_cli("--root", root, "append", "-a", "a1", "the cache is cold").code == 0
    r = subprocess.run(
        [sys.executable, "-c", MISSING, "onnxruntime", "--root", root, "synth", "--once"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1, r.stderr
    assert "scripts/setup embed" in lines[0] and "pip install '.[embed]'" in lines[0]
