"""Scale past brute force: recall's approximate path (synthesizer.search.quantindex).

Below the size threshold recall is the exact path (the codes are never even declared);
above it (a small threshold here) recall@10 against exact is >= 0.99 on generated
clustered data, through ``recall`` and through the candidates directly; the codes follow
their rows through removals, appends and replacements; results are equal before and
after a reopen (the codes then come from the checkpoint's file, not re-encoded); two
real processes share the mapped code file (read from /proc), which no process writes,
and a new checkpoint — the old file pruned and unlinked — leaves an open reader
recalling as a fresh process does.
"""

from __future__ import annotations

import hashlib
import mmap
import random
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from swarmlog import Event
from synthesizer import Swarm, SynthConfig
from synthesizer import events as T
from synthesizer.checkpoints import vectors
from synthesizer.config import PoolConfig
from synthesizer.search import quantindex
from synthesizer.search.vindex import VectorIndex

pytestmark = pytest.mark.timeout(300)

WORDS = [
    "cache",
    "proxy",
    "login",
    "export",
    "token",
    "retry",
    "locale",
    "upload",
    "webhook",
    "crash",
    "leak",
    "queue",
]
QUERIES = [f"{a} {b} issue" for a, b in zip(WORDS, WORDS[1:] + WORDS[:1], strict=True)]


def mapped(arr: object) -> bool:
    """Whether ``arr`` is (a view of) a memory map."""
    while arr is not None:
        if isinstance(arr, np.memmap | mmap.mmap):
            return True
        arr = getattr(arr, "base", None)
    return False


def content(i: int, rng: random.Random) -> str:
    """Clustered memories: two topic words of twelve, three of a 500-word vocabulary."""
    words = [rng.choice(WORDS), rng.choice(WORDS)] + [f"w{rng.randrange(500)}" for _ in range(3)]
    return f"note {i}: " + " ".join(words)


def bulk(swarm: Swarm, n: int, seed: int = 1) -> None:
    """``n`` facts written the way the synthesizer decides distinct memories (in bulk)."""
    rng = random.Random(seed)
    start = len(swarm.refresh().facts)
    shares = [
        Event(
            agent=f"a{i % 4}",
            type=T.MEMORY_SHARED,
            body={
                "content": content(start + i, rng),
                "category": rng.choice(["discovery", "decision"]),
                "importance": rng.choice([0.2, 0.5, 0.9]),
            },
        )
        for i in range(n)
    ]
    stored = swarm.log.append_many(shares)
    lease = swarm.log.version("synthesizer")  # decisions are honoured under the lease (authz)
    made = [
        Event(
            agent=T.SYNTH_AGENT,
            type=T.FACT_CREATED,
            key=f"f{e.seq}",
            body={"evidence": e.seq, "signature": f"s{e.seq}", "lease": lease},
        )
        for e in stored
    ]
    made.append(
        Event(
            agent=T.SYNTH_AGENT,
            type=T.SYNTH_PROGRESS,
            key="synthesizer",
            body={"upto": stored[-1].seq, "lease": lease},
        )
    )
    swarm.log.append_many(made, expect={"synthesizer": lease})


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The approximate path from 1,000 rows on, re-ranking 1/64 of the rows (at least 64)."""
    monkeypatch.setattr(quantindex, "APPROX_MIN_ROWS", 1000)
    monkeypatch.setattr(quantindex, "MIN_CANDIDATES", 128)
    yield


def exact_ids(swarm: Swarm, query: str, monkeypatch: pytest.MonkeyPatch, **kw: object) -> list:
    with monkeypatch.context() as m:
        m.setattr(quantindex, "APPROX_MIN_ROWS", 1 << 60)
        return ids(swarm, query, **kw)


def ids(swarm: Swarm, query: str, **kw: object) -> list[tuple[str, float]]:
    hits = swarm.agent("r").recall(query, limit=10, log=False, **kw)  # type: ignore[arg-type]
    return [(h.fact.id, round(h.relevance, 6)) for h in hits]


def recall_at_10(got: list[tuple[str, float]], want: list[tuple[str, float]]) -> float:
    """Share of the exact top-10 found; a hit tied with the exact 10th score counts."""
    if not want:
        return 1.0
    cut = want[-1][1]
    exact = {fid for fid, _ in want}
    found = sum(1 for fid, score in got if fid in exact or score >= cut)
    return min(found, len(want)) / len(want)


def big_swarm(path: Path, n: int) -> Swarm:
    sw = Swarm.open(path, config=SynthConfig(pool=PoolConfig(capacity=2 * n + 1000)))
    bulk(sw, n)
    sw.refresh()
    return sw


@pytest.mark.slow
def test_below_threshold_is_the_exact_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with big_swarm(tmp_path / "s", 1500) as sw:
        monkeypatch.setattr(quantindex, "APPROX_MIN_ROWS", 1501)
        below = {q: ids(sw, q) for q in QUERIES}
        with pytest.raises(KeyError):
            sw.index.default.column("b0")  # no code was ever made
        assert below == {q: exact_ids(sw, q, monkeypatch) for q in QUERIES}
        assert all(len(v) == 10 for v in below.values())


@pytest.mark.slow
def test_recall_at_10_against_exact_through_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_threshold: None
) -> None:
    with big_swarm(tmp_path / "s", 8000) as sw:
        scores = []
        for q in QUERIES:
            approx = ids(sw, q)
            exact = exact_ids(sw, q, monkeypatch)
            scores.append(recall_at_10(approx, exact))
            cat = ids(sw, q, category="decision")  # a filter: 4x the candidates
            scores.append(recall_at_10(cat, exact_ids(sw, q, monkeypatch, category="decision")))
            assert len(approx) == 10
        idx = sw.index.default
        assert idx.column("qok").all()  # the approximate path ran: every row coded
        assert quantindex.candidate_count(len(idx)) < len(idx) // 50
        assert np.mean(scores) >= 0.99, scores


def clustered(n: int, dim: int, clusters: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, dim))
    rows = centres[rng.integers(0, clusters, n)] + 0.6 * rng.standard_normal((n, dim))
    return rows.astype(np.float32), centres


def test_recall_at_10_on_clustered_vectors(small_threshold: None) -> None:
    n, dim = 20_000, 96
    rows, centres = clustered(n, dim, 50, seed=3)
    idx = VectorIndex("e", dim)
    rng = np.random.default_rng(4)
    idx.add_many([f"r{i:05d}" for i in range(n)], rows, rng.choice([0.2, 0.5, 0.9, 1.0], n))
    want = quantindex.candidate_count(n)
    assert want == 128  # the floor: 0.64% of the rows, a real cut
    scores = []
    for j in range(100):
        q = centres[j % 50] + 0.8 * rng.standard_normal(dim)
        exact = [(h.id, h.score) for h in idx.search(q, 10)]
        cand = quantindex.candidates(idx, q, want)
        assert cand.shape[0] >= want
        mask = np.zeros(n, dtype=bool)
        mask[cand] = True
        got = [(h.id, h.score) for h in idx.search(q, 10, mask=mask)]
        scores.append(recall_at_10(got, exact))
    assert np.mean(scores) >= 0.99, scores


def test_codes_follow_their_rows() -> None:
    rows, _ = clustered(3000, 64, 10, seed=5)
    idx = VectorIndex("e", 64, capacity=16)
    idx.add_many([f"r{i}" for i in range(2000)], rows[:2000])
    quantindex.ensure_codes(idx)
    for i in range(0, 2000, 7):
        idx.remove(f"r{i}")  # the last rows move into the holes, codes with them
    for i in range(2000, 3000):
        idx.add(f"r{i}", rows[i])
    idx.add("r1", -rows[1])  # a replaced vector: its code is made again
    cols = quantindex.ensure_codes(idx)
    _, mat = idx.matrix()
    want = quantindex.encode(mat)
    assert len(cols) == 1
    assert np.array_equal(cols[0], want[0])
    assert idx.column("qok").all()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_reopen_maps_the_saved_codes_and_recalls_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small_threshold: None
) -> None:
    path = tmp_path / "s"
    with big_swarm(path, 3000) as sw:
        sw.checkpoint()
        before = {q: ids(sw, q) for q in QUERIES}
    files = list(path.rglob("bits-*.u64"))
    assert len(files) == 1
    with Swarm.open(path) as sw:
        sw.refresh()
        idx = sw.index.default
        assert mapped(idx.column("b0"))
        after = {q: ids(sw, q) for q in QUERIES}
        assert after == before
        bulk(sw, 50, seed=9)  # facts after the checkpoint are coded in this process only
        grown = ids(sw, QUERIES[0])
        assert len(sw.index.default) == 3050 and sw.index.default.column("qok").all()
        assert recall_at_10(grown, exact_ids(sw, QUERIES[0], monkeypatch)) >= 0.9
    assert list(path.rglob("bits-*.u64")) == files


READER = textwrap.dedent(
    """
    import json, sys
    from synthesizer import Swarm
    from synthesizer.search import quantindex
    quantindex.APPROX_MIN_ROWS = 1000
    quantindex.MIN_CANDIDATES = 64
    sw = Swarm.open(sys.argv[1])
    def hits():
        return [h.fact.id for h in sw.agent("r").recall("cache token issue", limit=10, log=False)]
    first = hits()
    def maps():
        return [l for l in open("/proc/self/maps") if "bits-" in l]
    print(json.dumps({"hits": first, "maps": maps()}), flush=True)
    sys.stdin.readline()  # the parent writes facts and a new checkpoint meanwhile
    print(json.dumps({"hits": hits(), "maps": maps()}), flush=True)
    """
)


def _smaps_shared(pid: int, name: str) -> int:
    """Shared_Clean kB of the mappings of file ``name`` in process ``pid``."""
    total, inside = 0, False
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:
            inside = line.rstrip().endswith(name)
        elif inside and line.startswith("Shared_Clean:"):
            total += int(head[1])
    return total


@pytest.mark.slow
def test_readers_share_the_code_file_and_survive_a_new_checkpoint(
    tmp_path: Path, small_threshold: None
) -> None:
    import json

    path = tmp_path / "s"
    with big_swarm(path, 3000) as sw:
        sw.checkpoint()
    (old,) = list(path.rglob("bits-*.u64"))
    digest = _digest(old)
    mode = old.stat().st_mode
    readers = [
        subprocess.Popen(
            [sys.executable, "-c", READER, str(path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        firsts = [json.loads(p.stdout.readline()) for p in readers]  # type: ignore[union-attr]
        for r in firsts:
            assert r["maps"] and all(old.name in m for m in r["maps"])
            assert all(m.split()[1].endswith("p") for m in r["maps"])  # private: never written back
        assert firsts[0]["hits"] == firsts[1]["hits"] and len(firsts[0]["hits"]) == 10
        for p in readers:
            assert _smaps_shared(p.pid, old.name) > 0  # both map the same pages
        assert _digest(old) == digest and old.stat().st_mode == mode  # nothing reached the file
        with Swarm.open(path) as sw:  # a writer: more facts, a new checkpoint, old one pruned
            bulk(sw, 400, seed=11)
            sw.refresh()
            sw.checkpoint()
            sw.log.checkpoints.prune(keep=1)
            vectors.prune(sw.log)
        assert not old.exists()  # unlinked while both readers have it mapped
        seconds = []
        for p in readers:
            p.stdin.write("\n")  # type: ignore[union-attr]
            p.stdin.flush()  # type: ignore[union-attr]
            seconds.append(json.loads(p.stdout.readline()))  # type: ignore[union-attr]
    finally:
        for p in readers:
            p.kill()
            p.wait()
    for r in seconds:
        assert all("(deleted)" in m for m in r["maps"] if old.name in m)
    with Swarm.open(path) as sw:
        fresh = [h.fact.id for h in sw.agent("r").recall("cache token issue", limit=10, log=False)]
    for r in seconds:
        assert r["hits"] == fresh  # the open readers recall as a fresh process on the new state
