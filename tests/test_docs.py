"""The documentation runs: README.md and docs/*.md, as a newcomer would use them.

* Every ```python block runs as written, in a fresh temporary directory (the current
  directory while it runs). The blocks of one file run in order and share their names, as
  a tour does. A runnable block holds no ``...`` placeholder. A block that cannot run here
  (one that needs a server, say) opts out with the line ``<!-- docs-test: skip -->``
  right before its fence; use it sparingly.
* The worked example of docs/record-format.md is what the encoder writes.
* Every CLI command has help text and is named (``swarmlog COMMAND``) in the README or docs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer.main

from swarmlog.envelope import Event, encode

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = "<!-- docs-test: skip -->"
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(path: Path) -> list[tuple[int, str]]:
    """(line number, code) of each runnable python block of a markdown file."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        if before != SKIP:
            out.append((text.count("\n", 0, m.start()) + 1, m.group(1)))
    return out


def test_the_block_finder_sees_fences_and_the_skip_marker(tmp_path: Path) -> None:
    md = tmp_path / "x.md"
    md.write_text(
        "intro\n```python\nx = 1\n```\n\n" + SKIP + "\n```python\nimport nats\n```\n"
        "```bash\necho no\n```\n```python\ny = x + 1\n```\n"
    )
    assert python_blocks(md) == [(2, "x = 1\n"), (13, "y = x + 1\n")]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_python_blocks_run_as_written(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SWARMLOG_ROOT", raising=False)
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for line, code in python_blocks(path):
        where = f"{path.relative_to(ROOT)}:{line}"
        assert "..." not in code, f"{where}: a runnable block holds a '...' placeholder"
        exec(compile(code, where, "exec"), namespace)


WORKED_EXAMPLE = [
    Event(
        seq=41, id="b1", ts=1767225600.5, swarm="team", agent="a1", session="s1",
        type="memory.shared",
        body={"importance": 0.8, "content": "Safari 17 crashes on login", "category": "bug"},
    ),
    Event(
        seq=42, id="b2", ts=1767225600.5, swarm="team", agent="a1", session="s1",
        type="memory.recalled", body={"query": "login crash", "hits": ["f12"]}, causes=[40],
    ),
    Event(
        seq=43, id="b3", ts=1767225600.5, swarm="team", agent="a1", type="fact.updated",
        key="f12", body={"value": "3000"},
    ),
]


def test_record_format_worked_example_is_what_the_encoder_writes() -> None:
    text = (ROOT / "docs" / "record-format.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- worked-example -->\n```text\n(.*?)```", text, re.S)
    assert m, "docs/record-format.md lost its worked example"
    written = b"".join(encode(e, more=2 - i) for i, e in enumerate(WORKED_EXAMPLE))
    assert m.group(1).encode() == written
    assert f"these {len(written)} bytes" in text


def cli_commands() -> dict[str, Any]:
    """Every visible command of the ``swarmlog`` CLI by its words (``board cas``).

    Typer builds click commands (its own copy of click); a group is one with ``commands``.
    """
    from dashboards.cli import app

    out: dict[str, Any] = {}

    def walk(group: Any, prefix: str) -> None:
        for name, cmd in group.commands.items():
            if cmd.hidden:
                continue
            out[prefix + name] = cmd
            if getattr(cmd, "commands", None):
                walk(cmd, prefix + name + " ")

    walk(typer.main.get_command(app), "")
    return out


def test_every_command_has_help_and_is_documented() -> None:
    commands = cli_commands()
    assert {"init", "append", "tail", "verify", "board", "board cas"} <= set(commands)
    docs = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    no_help = sorted(n for n, c in commands.items() if not (c.help or c.short_help or "").strip())
    undocumented = sorted(
        n for n in commands if not re.search(rf"swarmlog {re.escape(n)}(?![\w-])", docs)
    )
    problems = []
    if no_help:
        problems.append("commands without help text: " + ", ".join(no_help))
    if undocumented:
        problems.append(
            "commands not named as 'swarmlog COMMAND' in README.md or docs/*.md: "
            + ", ".join(undocumented)
        )
    assert not problems, "\n".join(problems)
