"""Propagated erasure into a JetStream global memory (global-memory work, "erasure crosses the
boundary"): ``forget --agent A --propagate nats://…`` leaves no byte of the agent's
words nor of its name in the task swarm's root or in the server's store directory (the
agent's records and the request carry a pseudonym); both logs verify; the global
replays from a checkpoint to the digest of a replay from the start."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from synthesizer import Swarm
from synthesizer.replay import state_at
from tests.cli_util import run_cli
from tests.natsserver import NatsServer
from tests.test_js_redact import _hits

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

SECRET = "The vault passphrase is QUOKKA-PELICAN-7731"
SHARED = "Deploys are frozen on Fridays after noon"
WHO = "mallory-ZQXPROPJS"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[NatsServer]:
    srv = NatsServer(tmp_path / "srv")
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def _scan(root: Path, needles: list[bytes]) -> list[str]:
    return [
        f"{p}: {n!r}"
        for p in root.rglob("*")
        if p.is_file()
        for n in needles
        if n in p.read_bytes()
    ]


def test_propagated_erasure_into_jetstream_leaves_no_name(
    server: NatsServer, tmp_path: Path
) -> None:
    target = f"{server.url}/GLOBPROP"
    root = tmp_path / "task"
    sw = Swarm.open(root)
    try:
        sw.agent(WHO, session="ms").share(SECRET, importance=0.9)
        sw.agent(WHO, session="ms").share(SHARED, importance=0.9)
        sw.agent("ana", session="as").share(SHARED, importance=0.9)
        sw.synthesize()
        assert sw.promote(target, tier="working").promoted == 2
    finally:
        sw.close()
    needles = [b"QUOKKA-PELICAN", b"ZQXPROPJS"]
    assert set(_hits(server.dir / "js", needles)) == {n.decode() for n in needles}
    r = run_cli(
        "--root", str(root), "forget", "--agent", WHO, "--propagate", target, "--as", "operator"
    )
    assert r.code == 0, (r.out, r.err)
    with Swarm.open(target) as glob:
        contents = {f.content for f in glob.state().facts.values()}
        assert SHARED in contents and SECRET not in contents
        assert glob.log.verify().ok
        glob.checkpoint()
        assert state_at(glob.log).digest() == state_at(glob.log, from_start=True).digest()
        assert not [ev for ev in glob.log.read() if ev.agent == WHO]
    assert _hits(server.dir / "js", needles) == {}
    assert _scan(root, needles) == []
    assert run_cli("--root", str(root), "verify").code == 0
    assert run_cli("--url", target, "verify").code == 0
