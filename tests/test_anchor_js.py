"""``verify --expect SEQ:HASH`` on JetStream (trust work, tamper evidence), real nats-server.

JetStream records hold no chain value (the seal stream does, swarmlog/jetstream/seal/chain.py): the
anchor is
checked against the value ``verify`` recomputes from the stored records and matches to
the seals. An anchor printed by ``verify --anchor`` holds (also after a ``forget``,
which keeps chain values); a wrong value, or a seq with no record, fails with one line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from synthesizer import Swarm
from tests.cli_util import run_cli
from tests.natsserver import NatsServer

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NatsServer]:
    srv = NatsServer(tmp_path / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _anchor(url: str) -> tuple[int, str]:
    r = run_cli("--url", url, "verify", "--anchor")
    assert r.code == 0, r.out
    m = re.search(r"^anchor: seq (\d+) ([0-9a-f]{32})$", r.out, re.M)
    assert m is not None, r.out
    return int(m.group(1)), m.group(2)


def test_expect_on_jetstream(server: NatsServer) -> None:
    url = f"{server.url}/ANCHORJS"
    sw = Swarm.open(url)
    try:
        sw.agent("victim").share("the vault code is nine nine four", category="note")
        for i in range(5):
            sw.agent("ana").share(f"finding {i} about the build cache", category="ops")
        sw.synthesize()
    finally:
        sw.close()
    seq, value = _anchor(url)
    assert seq > 5
    ok = run_cli("--url", url, "verify", "--expect", f"{seq}:{value}")
    assert ok.code == 0 and "problem" not in ok.out, ok.out
    wrong = "0" * 32 if value != "0" * 32 else "1" * 32
    bad = run_cli("--url", url, "verify", "--expect", f"{seq}:{wrong}")
    assert bad.code == 1
    assert f"problem: anchor seq {seq}: chain value {value}, expected {wrong}" in bad.out, bad.out
    past = run_cli("--url", url, "verify", "--expect", f"{seq + 100}:{value}")
    assert past.code == 1 and "no chained record at that seq" in past.out, past.out
    # an earlier record's value (kept by an earlier anchor) holds as well
    sw = Swarm.open(url)
    try:
        sw.agent("ana").share("one more finding after the anchor", category="ops")
        sw.forget(agent="victim")  # erasure keeps chain values: the anchor still holds
    finally:
        sw.close()
    again = run_cli("--url", url, "verify", "--expect", f"{seq}:{value}")
    assert again.code == 0, again.out
    later, _ = _anchor(url)
    assert later > seq
