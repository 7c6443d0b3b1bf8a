"""The markdown report's charts (polish work): PNG files beside the report, embedded in it,
drawn from the swarm (activity over time, strength distribution, per-agent
contributions); without the charts extra the report says how to install it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from synthesizer.swarm import Swarm
from tests.cli_util import run_cli

ROOT = Path(__file__).resolve().parent.parent
PNG = b"\x89PNG\r\n\x1a\n"


def _swarm(root: Path) -> None:
    with Swarm.open(root, name="charted") as sw:
        for i in range(12):
            sw.agent(f"agent-{i % 3}").share(f"finding {i} about part {i * 31 % 97} of the system")
        sw.agent("agent-0").share("finding 0 about part 0 of the system")  # a duplicate
        sw.synthesize()


def test_report_embeds_three_png_charts(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.image

    _swarm(tmp_path / "s")
    out = tmp_path / "reports" / "team.md"
    r = run_cli("--root", str(tmp_path / "s"), "dashboard", "--format", "markdown",
                "--out", str(out))  # fmt: skip
    assert r.code == 0, r.err
    md = out.read_text()
    images = re.findall(r"!\[([^\]]+)\]\(([^)]+)\)", md)
    assert [t for t, _ in images] == [
        "Activity over time", "Strength distribution", "Contributions per agent",
    ]
    for _, name in images:
        path = out.parent / name  # relative to the report: the folder can move as a whole
        assert path.read_bytes()[:8] == PNG
        h, w = matplotlib.image.imread(path).shape[:2]
        assert w >= 600 and h >= 200  # rendered, not an empty stub
    assert md.index("## Charts") < md.index("## Top facts")
    r = run_cli("--root", str(tmp_path / "s"), "dashboard", "--format", "markdown",
                "--out", str(tmp_path / "plain.md"), "--no-charts")  # fmt: skip
    assert r.code == 0 and "## Charts" not in (tmp_path / "plain.md").read_text()
    assert not list(tmp_path.glob("plain-*.png"))


def test_report_without_the_charts_extra_says_how_to_get_them(tmp_path: Path) -> None:
    _swarm(tmp_path / "s")
    out = tmp_path / "r.md"
    code = (
        "import sys; sys.modules['matplotlib'] = None\n"
        "from dashboards.cli import main\n"
        f"main(['--root', {str(tmp_path / 's')!r}, 'dashboard', '--format', 'markdown',"
        f" '--out', {str(out)!r}])"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)  # fmt: skip
    assert r.returncode == 0, r.stderr
    md = out.read_text()
    assert "No charts: they need the charts extra" in md and "scripts/setup charts" in md
    assert not list(tmp_path.glob("r-*.png"))
