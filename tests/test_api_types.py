"""The public API's annotations tell the truth: a type checker sees what a call returns.

``Agent.share`` (and ``Log.append``) return the stored event, a ``StoredEvent``, whose
``seq`` is an int: code that uses it as one type-checks, code that treats it as another
type does not. Checked with mypy's API on a snippet, as a user's code would be.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swarmlog import Event, MemoryLog, StoredEvent
from synthesizer.swarm import Swarm

ROOT = Path(__file__).resolve().parent.parent

SNIPPET = '''
from swarmlog import Event, open_log
from synthesizer.swarm import Agent


def next_seq(agent: Agent) -> int:
    return agent.share("The API listens on port 8080").seq + 1


def appended(target: str) -> list[int]:
    log = open_log(target)
    one: int = log.append(Event(agent="a", type="t.x")).seq
    return [one, *(e.seq for e in log.append_many([]))]


def wrong(agent: Agent) -> str:
    return agent.share("x").seq  # the one error expected: an int is not a str
'''


@pytest.mark.slow
def test_share_returns_a_stored_event_whose_seq_is_an_int(tmp_path: Path) -> None:
    mypy_api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "uses_share.py"
    snippet.write_text(SNIPPET)
    out, err, code = mypy_api.run(
        [str(snippet), "--config-file", str(ROOT / "pyproject.toml"), "--no-error-summary"]
    )
    errors = [ln for ln in out.splitlines() if ": error:" in ln]
    assert code == 1 and len(errors) == 1, out + err
    assert "uses_share.py:17:" in errors[0] and '"int"' in errors[0], errors


def test_what_share_returns_is_a_stored_event() -> None:
    with Swarm.open(":memory:") as swarm:
        got = swarm.agent("a1").share("The API listens on port 8080")
        assert isinstance(got, StoredEvent) and isinstance(got.seq, int)
        assert type(got.seq) is int and got.seq >= 1
        (read,) = swarm.log.read(got.seq, got.seq)
        assert isinstance(read, StoredEvent) and read == got
    log = MemoryLog()
    ev = log.append(Event(agent="a", type="t.x"))
    assert isinstance(ev, StoredEvent) and ev.seq == 1
