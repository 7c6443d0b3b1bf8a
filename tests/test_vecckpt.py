"""The scale work, acceptance 1 and 3: vectors saved with a checkpoint.

Opening a swarm from a checkpoint embeds only the facts after it, and recalls the same
as before the reopen; two real processes map one checkpoint's vector file (read from
/proc), and a checkpoint written — and the old one pruned and unlinked — while they
have it mapped leaves them recalling as before.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from synthesizer import Swarm
from synthesizer.checkpoints import vectors
from synthesizer.search.embed import HashingEmbedder

pytestmark = pytest.mark.timeout(120)


class CountingEmbedder:
    """The default embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()
        self.texts: list[str] = []

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed(texts)


TOPICS = ["cache", "database", "network", "deploy", "queue", "auth", "search", "billing"]


def build(swarm: Swarm, n: int, start: int = 0) -> None:
    """Share ``n`` distinct memories and synthesize them into facts."""
    agent = swarm.agent("a1")
    for i in range(start, start + n):
        agent.share(f"{TOPICS[i % 8]} note {i} about {TOPICS[(i * 3) % 8]} tuning")
    swarm.synthesize()


def hits(swarm: Swarm, query: str) -> list[tuple[str, float, float]]:
    return [
        (h.fact.id, h.similarity, h.relevance)
        for h in swarm.agent("r").recall(query, limit=8, log=False)
    ]


def test_open_embeds_only_facts_after_the_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with Swarm.open(path) as swarm:
        build(swarm, 60)
        swarm.agent("a2").reinforce(sorted(swarm.refresh().facts)[3])
        swarm.tick()
        swarm.checkpoint()
        files = list((path).rglob("vec-*.f32"))
        assert len(files) == 1
        build(swarm, 7, start=60)  # 7 facts after the checkpoint
    with Swarm.open(path) as swarm:
        swarm.tick()
        before = {q: hits(swarm, q) for q in TOPICS}
    emb = CountingEmbedder()
    with Swarm.open(path, embedder=emb) as swarm:
        after = {q: hits(swarm, q) for q in TOPICS}
        n_facts = len(swarm.refresh().facts)
    assert n_facts == 67
    # the 7 facts after the checkpoint and the 8 queries: nothing else
    assert len(emb.texts) == 7 + len(TOPICS), emb.texts[:20]
    assert after == before
    # without the vector file every fact is embedded, with the same results
    for f in files:
        f.unlink()
    emb2 = CountingEmbedder()
    with Swarm.open(path, embedder=emb2) as swarm:
        again = {q: hits(swarm, q) for q in TOPICS}
    # same ranking; the last float32 bits of a vector depend on the embedding batch
    for q in TOPICS:
        assert [h[0] for h in again[q]] == [h[0] for h in before[q]]
        assert [h[1] for h in again[q]] == pytest.approx([h[1] for h in before[q]], abs=1e-6)
    assert len(emb2.texts) == 67 + len(TOPICS)


def test_a_truncated_vector_file_is_not_used(tmp_path: Path) -> None:
    path = tmp_path / "s"
    with Swarm.open(path) as swarm:
        build(swarm, 20)
        assert len(swarm.index) == 20
        swarm.checkpoint()
    (vec,) = path.rglob("vec-*.f32")
    # a truncated file is ignored: every fact is embedded instead
    data = vec.read_bytes()
    vec.write_bytes(data[: len(data) // 2])
    emb = CountingEmbedder()
    with Swarm.open(path, embedder=emb) as swarm:
        assert len(hits(swarm, "cache")) > 0
    assert len(emb.texts) == 20 + 1


READER = textwrap.dedent(
    """
    import os, sys
    from synthesizer import Swarm
    swarm = Swarm.open(sys.argv[1])
    def answer():
        hits = swarm.agent("r").recall("cache tuning", limit=5, log=False)
        print(os.getpid(), ",".join(h.fact.id for h in hits), flush=True)
    answer()
    for line in sys.stdin:
        answer()
    """
)


def mappings(pid: int, name: str) -> list[str]:
    """The /proc/PID/smaps blocks of the mappings of a file whose path contains ``name``."""
    text = Path(f"/proc/{pid}/smaps").read_text()
    blocks, cur = [], None
    for line in text.splitlines():
        first = line.split(" ", 1)[0]
        if "-" in first and ":" not in first:
            cur = [line]
            blocks.append(cur)
        elif cur is not None:
            cur.append(line)
    return ["\n".join(b) for b in blocks if name in b[0]]


def smaps_kb(block: str, field: str) -> int:
    for line in block.splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in smaps block")


def test_two_processes_share_one_mapping_and_survive_a_new_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "s"
    writer = Swarm.open(path)
    build(writer, 400)
    writer.checkpoint()
    (vec,) = path.rglob("vec-*.f32")
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        first = []
        for p in procs:
            assert p.stdout is not None
            pid, ids = p.stdout.readline().split()
            first.append(ids)
            assert int(pid) == p.pid
        assert first[0] == first[1] and first[0]
        for p in procs:  # both map the same file, and its pages are shared between them
            blocks = mappings(p.pid, vec.name)
            assert blocks, f"process {p.pid} does not map {vec.name}"
            assert any(str(vec) in b.splitlines()[0] for b in blocks)
            assert sum(smaps_kb(b, "Shared_Clean") for b in blocks) > 0
        # a new checkpoint while the readers map the old one: a new file; the old one
        # is unlinked once its checkpoint is pruned, and the readers go on undisturbed
        build(writer, 10, start=400)
        with writer as swarm:
            swarm.checkpoint()
            store = swarm.log.checkpoints
            old = [i for i in store.list() if vectors.file_name(i) == vec.name]
            for info in old:
                store.delete(info)
            assert vectors.prune(swarm.log) == 2  # its vectors and its lexical index
            want = ",".join(
                h.fact.id for h in swarm.agent("r").recall("cache tuning", 5, log=False)
            )
        assert not vec.exists()
        assert len(list(path.rglob("vec-*.f32"))) == 1
        for p in procs:
            assert p.stdin is not None and p.stdout is not None
            p.stdin.write("again\n")
            p.stdin.flush()
            assert p.stdout.readline().split()[1] == want  # folded the new facts, as a new reader
            blocks = mappings(p.pid, vec.name)
            assert blocks and all("(deleted)" in b.splitlines()[0] for b in blocks)
    finally:
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
            p.wait(timeout=30)


def test_jetstream_vectors_travel_with_the_checkpoint(
    nats_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On JetStream the vector file is published to the checkpoint bucket: a reader on
    another machine (here: an empty cache directory) fetches it instead of re-embedding,
    and recalls the same; a checkpoint's side files go when it does."""
    target = f"{nats_url}/VEC{tmp_path.name[-12:].replace('-', '')}"
    monkeypatch.setenv("SWARMLOG_CACHE_DIR", str(tmp_path / "writer-cache"))
    with Swarm.open(target) as swarm:
        build(swarm, 40)
        swarm.tick()
        seq = swarm.checkpoint()
        build(swarm, 5, start=40)  # 5 facts after the checkpoint
        assert [p.name for p in (tmp_path / "writer-cache").rglob("vec-*.f32")]
    with Swarm.open(target) as swarm:  # opened as the reader will be (the last float32
        before = {q: hits(swarm, q) for q in TOPICS}  # bits depend on the embedding batch)
    monkeypatch.setenv("SWARMLOG_CACHE_DIR", str(tmp_path / "reader-cache"))
    emb = CountingEmbedder()
    with Swarm.open(target, embedder=emb) as swarm:
        after = {q: hits(swarm, q) for q in TOPICS}
        assert len(swarm.refresh().facts) == 45
        store = swarm.log.checkpoints
        fetched = sorted(p.name for p in store.local_dir().glob("vec-*.f32"))
        assert fetched == [vectors.file_name(i) for i in store.list() if i.seq == seq]
    assert len(emb.texts) == 5 + len(TOPICS), emb.texts[:20]  # nothing before the checkpoint
    assert after == before
    # the checkpoint invalidated (as an erasure does): its published side file goes too
    with Swarm.open(target) as swarm:
        store = swarm.log.checkpoints
        assert store.invalidate_after(1) >= 1
        assert vectors.prune(swarm.log) >= 1
    monkeypatch.setenv("SWARMLOG_CACHE_DIR", str(tmp_path / "third-cache"))
    with Swarm.open(target) as swarm:
        assert not any(swarm.log.checkpoints.fetch(name) for name in fetched)


def test_a_concurrent_checkpoint_cleanup_leaves_a_vector_file_being_written(
    tmp_path: Path,
) -> None:
    """Every checkpoint save first deletes the temporary files no live writer holds. A
    vector file being written is held (``checkpoint.side_file``): another process's
    cleanup, run while the file is open, leaves it, and the file lands."""
    from swarmlog.checkpoint import side_file

    path = tmp_path / "s"
    with Swarm.open(path) as swarm:
        build(swarm, 10)
        swarm.checkpoint()
    ckdir = path / "checkpoints"
    target = ckdir / "vec-side-test.f32"
    cleanup = textwrap.dedent(
        f"""
        from swarmlog import FileLog
        with FileLog({str(path)!r}) as log:
            print(log.checkpoints.clean_tmp())
        """
    )
    with side_file(target) as f:
        f.write(b"x" * 4096)
        tmps = [p.name for p in ckdir.iterdir() if p.name.endswith(".tmp")]
        assert len(tmps) == 1
        out = subprocess.run(
            [sys.executable, "-c", cleanup], capture_output=True, text=True, check=True
        )
        assert out.stdout.split() == ["0"]  # held: not deleted
        assert (ckdir / tmps[0]).exists()
    assert target.read_bytes() == b"x" * 4096
    assert not [p for p in ckdir.iterdir() if p.name.endswith(".tmp")]
