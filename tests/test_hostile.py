"""The robustness work, item 6: hostile content — deep bodies, terminal escapes, absurd timestamps.

Bodies are bounded to 64 levels before anything recursive runs (one-line error, API and
CLI); every face that prints agent content escapes control characters; and a stored ts
that no calendar holds (written straight into a segment with a valid CRC, as an old log
or a hostile writer could) neither crashes a face nor shows up as a latency.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest

from swarmlog import Event, FileLog, InvalidEvent
from swarmlog.envelope import check_crc

from .cli_util import run_cli


def nested(depth: int) -> dict[str, Any]:
    """A body ``depth`` levels deep (the body itself is level 1)."""
    body: dict[str, Any] = {}
    cur = body
    for _ in range(depth - 1):
        cur["a"] = {}
        cur = cur["a"]
    return body


def memory(body_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"content": "deep", "category": "discovery", "importance": 0.5, **(body_extra or {})}


def test_depth_1000_body_is_one_line_error_in_the_api(tmp_path: Path) -> None:
    with pytest.raises(InvalidEvent, match="nested more than 64 levels"):
        Event(agent="a", type="test.event", body=nested(1000))
    with pytest.raises(InvalidEvent, match="nested more than 64 levels"):
        Event(agent="a", type="memory.shared", body=memory({"x": nested(65)}))
    Event(agent="a", type="test.event", body=nested(64))  # at the bound: fine
    cyclic: dict[str, Any] = {"l": []}
    cyclic["l"].append(cyclic)
    with pytest.raises(InvalidEvent, match="nested"):
        Event(agent="a", type="test.event", body=cyclic)
    with FileLog(tmp_path / "log", notify=False) as log:
        ev = Event(agent="a", type="test.event", body={"x": {}})
        ev.body["x"]["y"] = nested(1000)  # deepened after it was made
        with pytest.raises(InvalidEvent, match="nested"):
            log.append(ev)
        with pytest.raises(InvalidEvent, match="nested"):
            log.append_many([Event(agent="a", type="test.event"), ev])
        assert log.last_seq == 0


def test_depth_1000_body_is_one_line_error_in_the_cli(tmp_path: Path) -> None:
    root = str(tmp_path / "log")
    assert run_cli("--root", root, "init").code == 0
    deep = '{"a":' * 999 + "{}" + "}" * 999  # 1,000 levels
    for args, stdin in (
        (["append", "-a", "x", "--type", "test.event", "--body", deep], ""),
        (["append", "-a", "x", "--jsonl"], '{"type":"test.event","body":' + deep + "}\n"),
    ):
        r = run_cli("--root", root, *args, stdin=stdin)
        assert r.code == 1, r
        assert len(r.err.strip().splitlines()) == 1 and "nested more than 64" in r.err, r.err
    assert run_cli("--root", root, "verify").out.startswith("ok: 0 events")


HOSTILE = "clean start \x1b]0;pwned\x07\x1b[2J\x1b[31mred\r\u202eevil\x9b1m end"
RAW_CONTROL = ("\x1b", "\x07", "\r", "\u202e", "\x9b")


def _write_raw(root: Path, seq: int, ts: float, content: str, agent: str) -> None:
    """Append one memory.shared record with a valid CRC straight to the segment."""
    d = {
        "seq": seq,
        "id": f"raw{seq}",
        "ts": ts,
        "swarm": "log",
        "agent": agent,
        "type": "memory.shared",
        "body": {"category": "discovery", "content": content, "importance": 0.5},
    }
    head = orjson.dumps(d)[:-1]
    line = head + b',"crc":%d}\n' % zlib.crc32(head)
    assert check_crc(line)
    (seg,) = sorted((root / "segments").iterdir())
    with open(seg, "ab") as f:
        f.write(line)


@pytest.fixture
def hostile_log(tmp_path: Path) -> Path:
    root = tmp_path / "log"
    assert run_cli("--root", str(root), "init").code == 0
    r = run_cli("--root", str(root), "append", "-a", "mallory", HOSTILE, "--key", "k\x1b[2J")
    assert r.code == 1  # names are checked: a key cannot carry control characters
    assert run_cli("--root", str(root), "append", "-a", "mallory", HOSTILE).code == 0
    assert run_cli("--root", str(root), "append", "-a", "bob", "a normal memory").code == 0
    _write_raw(root, 3, 1e20, "from the far future", "clock1")
    _write_raw(root, 4, -1e20, "from before time", "clock2")
    r = run_cli("--root", str(root), "synth")
    assert r.code == 0, r
    return root


FACES = [
    ["tail"],
    ["tail", "--follow", "--timeout", "0.2"],
    ["board"],
    ["board", "f1"],
    ["search", "clean start red evil"],
    ["stats"],
    ["dashboard"],
    ["dashboard", "--format", "markdown"],
]


@pytest.mark.parametrize("face", FACES, ids=" ".join)
def test_faces_escape_control_characters_and_survive_any_ts(
    hostile_log: Path, face: list[str]
) -> None:
    r = run_cli("--root", str(hostile_log), *face)
    assert r.code == 0 and "Traceback" not in r.err, r
    for ch in RAW_CONTROL:
        assert ch not in r.out, (face, ch, r.out)
    if face[0] in ("tail", "board", "search"):
        assert "\\x1b]0;pwned\\x07" in r.out, r.out
    if face[0] == "tail":
        assert "ts=1e+20" in r.out and "ts=-1e+20" in r.out, r.out


def test_latency_ignores_impossible_timestamps(hostile_log: Path) -> None:
    r = run_cli("--root", str(hostile_log), "stats", "--json")
    assert r.code == 0, r
    m = orjson.loads(r.out)
    assert m["latency_n"] >= 1
    assert abs(m["latency_p99"]) < 366 * 86400 and abs(m["latency_p50"]) < 366 * 86400
    text = run_cli("--root", str(hostile_log), "stats").out
    assert "e+20" not in text.split("visibility latency")[1].splitlines()[0]
