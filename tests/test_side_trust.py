"""The faults work item 3: a vector side file is used only when its bytes are the ones written.

On main ``vectors.attach`` checked a side file's header and size only: zeroed, permuted
or another swarm's rows (same size) were served, and 10 of 10 queries returned other
facts while ``verify`` said ok. Now the checkpoint names each side file with its SHA-256;
the file is hashed (once, in the background) before the vectors are first used, and a
mismatch deletes it with one warning line and re-embeds: the answers are the right ones.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from synthesizer import Swarm
from tests.cli_util import run_cli

pytestmark = pytest.mark.timeout(180)

TOPICS = ["cache", "database", "network", "deploy", "queue", "auth", "search", "billing"]
QUERIES = [f"{TOPICS[i % 8]} note {i * 7} tuning" for i in range(10)]
HEADER, DIM = 4096, 384


def build(path: Path, shift: int = 0) -> None:
    """120 facts; another swarm (``shift``) holds other notes in the same number of rows."""
    with Swarm.open(path) as swarm:
        agent = swarm.agent("a1")
        for k in range(120):
            i = k + shift
            agent.share(f"{TOPICS[i % 8]} note {i} about {TOPICS[(i * 3) % 8]} tuning")
        swarm.synthesize()
        swarm.checkpoint()


def answers(path: Path) -> list[list[str]]:
    with Swarm.open(path) as swarm:
        return [
            [h.fact.id for h in swarm.agent("r").recall(q, limit=5, log=False)] for q in QUERIES
        ]


def vec_file(path: Path) -> Path:
    (vec,) = path.rglob("vec-*.f32")
    return vec


def rows(vec: Path) -> tuple[int, np.ndarray]:
    """(n, the n live rows) of a vector file."""
    import orjson

    h = orjson.loads(vec.read_bytes()[:HEADER])
    n, dim = int(h["n"]), int(h["dim"])
    raw = np.frombuffer(vec.read_bytes(), dtype=np.float32, count=n * dim, offset=HEADER)
    return n, raw.reshape(n, dim)


def put_rows(vec: Path, new: np.ndarray) -> None:
    data = bytearray(vec.read_bytes())
    b = np.ascontiguousarray(new, dtype=np.float32).tobytes()
    data[HEADER : HEADER + len(b)] = b
    vec.write_bytes(bytes(data))


@pytest.mark.slow
@pytest.mark.parametrize("damage", ["zeroed", "permuted", "another swarm's rows"])
def test_damaged_vectors_are_never_served(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "s"
    build(path)
    want = answers(path)  # from the intact vector file
    assert all(want)
    vec = vec_file(path)
    n, live = rows(vec)
    if damage == "zeroed":
        put_rows(vec, np.zeros_like(live))
    elif damage == "permuted":
        put_rows(vec, live[::-1])
    else:
        build(tmp_path / "other", shift=1000)
        n2, theirs = rows(vec_file(tmp_path / "other"))
        assert n2 == n
        put_rows(vec, theirs)
    # verify names the file (it said ok on main)
    r = run_cli("--root", str(path), "verify")
    assert r.code == 1 and vec.name in r.out and "checksum mismatch" in r.out, r.out
    with caplog.at_level(logging.WARNING, logger="swarmlog.checkpoint"):
        got = answers(path)
    assert got == want  # every query answered as from the intact file
    notes = [r.getMessage() for r in caplog.records if vec.name in r.getMessage()]
    assert len(notes) == 1 and "not used" in notes[0], notes
    assert not vec.exists()  # discarded, never served again
    assert answers(path) == want
    assert run_cli("--root", str(path), "verify").code == 0


def test_intact_vectors_are_mapped_not_embedded(tmp_path: Path) -> None:
    """The check costs no embedding: an intact file is used (the facts are not embedded)."""
    from tests.test_vecckpt import CountingEmbedder

    path = tmp_path / "s"
    build(path)
    vec = vec_file(path)
    emb = CountingEmbedder()
    with Swarm.open(path, embedder=emb) as swarm:
        assert swarm.agent("r").recall("cache note", limit=3, log=False)
    assert len(emb.texts) == 1  # the query only
    assert vec.exists()
    with Swarm.open(path) as swarm:  # the checkpoint names the file with its SHA-256
        from synthesizer.checkpoints import vectors

        info = swarm.log.checkpoints.list()[-1]
        assert vectors.file_name(info) == vec.name
        assert info.side_files()[vec.name] in vec.name
