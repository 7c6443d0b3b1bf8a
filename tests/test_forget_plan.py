"""A forget's plan in the log (trust work: "a scrubbed record is accepted only if a forget
request's own plan lists that seq and type"; synthesizer/forget/planned.py).

Before, ``verify`` judged a scrubbed record by its form, so a record of another agent
edited by hand to look like forget's scrub (a ``[redacted]`` in a recall's query, the
marker naming its own chain value, the CRC recomputed) passed. Now ``forget`` appends
the seqs and types it is about to rewrite before rewriting, and ``verify`` accepts a
redacted record only if a plan lists it with its type.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from swarmlog import FileLog
from swarmlog.redaction import kind_of, redact_line
from synthesizer import Swarm
from synthesizer.forget.planned import PLANNED, listed, runs
from tests.cli_util import run_cli


def _swarm(root: Path) -> None:
    sw = Swarm.open(root)
    try:
        sw.agent("victim-ZQXPLAN").share("the victim's secret words about the vault door")
        sw.agent("alice").share("alice's honest note about the build")
        sw.agent("bob").recall("what about the victim's secret words about the vault?")
        sw.agent("carol").recall("where is the build cache kept these days")
        sw.synthesize()
    finally:
        sw.close()


def _forge(root: Path, needle: bytes, body: dict[str, object], kind_type: bytes = b"") -> int:
    """Rewrite the record holding ``needle`` into a scrubbed marker with ``body`` (its
    own chain value in the marker, CRC recomputed: the chain walk accepts it)."""
    seg_path = sorted((root / "segments").iterdir())[0]
    lines = seg_path.read_bytes().split(b"\n")
    k = next(i for i, ln in enumerate(lines) if needle in ln)
    src = lines[k]
    if kind_type:
        d = orjson.loads(src)
        src = src.replace(b'"type":"%s"' % d["type"].encode(), b'"type":"%s"' % kind_type)
    new = redact_line(src + b"\n", body)
    assert new is not None
    lines[k] = new[:-1]
    seg_path.write_bytes(b"\n".join(lines))
    return int(orjson.loads(new)["seq"])


@pytest.mark.slow
def test_the_plan_lists_exactly_what_forget_rewrote(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _swarm(root)
    assert run_cli("--root", str(root), "forget", "--agent", "victim-ZQXPLAN").code == 0
    evs = [e.envelope for e in FileLog(root).read()]
    plans = [d for d in evs if d["type"] == PLANNED]
    assert len(plans) == 1 and b"ZQXPLAN" not in orjson.dumps(plans[0])
    got = listed(plans[0]["body"])
    assert got is not None
    request, seqs = got
    assert evs[request - 1]["type"] == "identity.forgotten"
    redacted = {d["seq"]: d["type"] for d in evs if kind_of(d) is not None}
    assert seqs == redacted and request in redacted
    assert plans[0]["seq"] > request  # appended after its request, before the rewrite
    r = run_cli("--root", str(root), "verify")
    assert r.code == 0 and "problem" not in r.out, r.out
    # a re-run finds its plan: nothing appended
    assert run_cli("--root", str(root), "forget", "--agent", "victim-ZQXPLAN").code in (0, 1)
    assert sum(e.type == PLANNED for e in FileLog(root).read()) == 1


def test_a_record_edited_to_mimic_a_scrub_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _swarm(root)
    assert run_cli("--root", str(root), "forget", "--agent", "victim-ZQXPLAN").code == 0
    seq = _forge(root, b"where is the build cache", {"query": "where is the [redacted]"})
    assert FileLog(root).verify().ok  # the chain walk accepts the marker
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1, r.out
    assert f"seq {seq}: a redacted memory.recalled by agent 'carol' that no forget's plan" in r.out


def test_a_listed_seq_with_another_type_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "s"
    _swarm(root)
    assert run_cli("--root", str(root), "forget", "--agent", "victim-ZQXPLAN").code == 0
    seq = _forge(root, b'"type":"fact.created"', {"evidence": 1}, kind_type=b"fact.updated")
    r = run_cli("--root", str(root), "verify")
    assert r.code == 1, r.out
    assert f"seq {seq}: a redacted fact.updated that a forget's plan lists as fact.created" in r.out


def test_runs_round_trip() -> None:
    types = {3: "a", 4: "a", 5: "b", 9: "b", 10: "b", 12: "a"}
    names, rs = runs(types)
    assert rs == [[3, 2, 0], [5, 1, 1], [9, 2, 1], [12, 1, 0]]
    got = listed({"request": 13, "types": names, "runs": rs})
    assert got == (13, types)
    assert listed({"request": 13, "types": names, "runs": [[1, 1, 7]]}) is None
