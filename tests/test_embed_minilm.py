"""The real embedder (extra ``embed``): offline, deterministic, separate vector space,
a one-line error without the extra, and merge quality on the labelled set."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from synthesizer.config import SynthConfig
from synthesizer.errors import UnknownEmbedder
from synthesizer.search.embed import Embedder, HashingEmbedder, embedder_for, near_duplicate_of
from synthesizer.search.minilm import MISSING_EXTRA, MiniLMEmbedder
from synthesizer.swarm import Swarm
from tests.cli_util import run_cli

MINILM = SynthConfig(embedder="minilm")  # the swarm's configuration selects the embedder

DATA = Path(__file__).parent / "data"
TEXTS = [
    "The login test is flaky on CI",
    "The sign-in test passes and fails at random in CI",
    "Customer churn peaks in January",
    "",
    "Nightly backups run at 2am UTC " * 40,  # longer than the 256-token window
]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    emb = embedder_for("minilm")  # the instance every swarm configured with it uses
    assert isinstance(emb, MiniLMEmbedder)
    return emb


def _digest(mat: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(mat, dtype=np.float32).tobytes()).hexdigest()


def test_unit_rows_of_384_and_a_stable_id(minilm: MiniLMEmbedder) -> None:
    vecs = minilm.embed(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert isinstance(minilm, Embedder)
    assert minilm.id.startswith("minilm-l6-v2-int8-") and minilm.id != HashingEmbedder().id
    assert minilm.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        minilm.embed("a bare string")  # type: ignore[arg-type]


def test_meaning_not_wording(minilm: MiniLMEmbedder) -> None:
    v = minilm.embed(TEXTS[:3])
    assert float(v[0] @ v[1]) > 0.6  # a paraphrase the hashing embedder misses
    assert float(v[0] @ v[2]) < 0.3


def test_rows_do_not_depend_on_the_batch(minilm: MiniLMEmbedder) -> None:
    rng = np.random.default_rng(7)
    words = ["cache", "ttl", "port", "deploy", "login", "flaky", "replica", "lag", "not", "on"]
    texts = [" ".join(rng.choice(words, size=int(rng.integers(1, 30)))) for _ in range(30)]
    alone = np.stack([minilm.embed_one(t) for t in texts])
    order = rng.permutation(len(texts))
    shuffled = minilm.embed([texts[i] for i in order])
    assert alone.tobytes() == minilm.embed(texts).tobytes()
    assert alone[order].tobytes() == shuffled.tobytes()


_OFFLINE_SCRIPT = textwrap.dedent(
    """
    import hashlib, json, socket, sys

    class NoNetwork(socket.socket):
        def __init__(self, *a, **k):
            raise OSError("network use is forbidden in this test")

    socket.socket = NoNetwork
    socket.create_connection = lambda *a, **k: (_ for _ in ()).throw(OSError("no network"))
    from synthesizer.search.embed import embedder_for

    texts = json.loads(sys.argv[1])
    vecs = embedder_for("minilm").embed(texts)
    print(hashlib.sha256(vecs.astype("float32").tobytes()).hexdigest())
    """
)


@pytest.mark.slow
def test_offline_and_same_bytes_in_two_processes(minilm: MiniLMEmbedder) -> None:
    outs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", _OFFLINE_SCRIPT, json.dumps(TEXTS)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout.strip())
    assert outs[0] == outs[1] == _digest(minilm.embed(TEXTS))


_BLOCK_EXTRA = textwrap.dedent(
    """
    import sys

    class _Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("onnxruntime", "tokenizers"):
                raise ImportError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, _Block())
    """
)


def test_without_the_extra_minilm_is_a_one_line_error(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(_BLOCK_EXTRA)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), os.getcwd()]))
    script = textwrap.dedent(
        """
        from synthesizer.search.embed import embedder_for
        assert embedder_for("hash").id.startswith("hash-v1")  # the default still works
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            pass
        else:
            raise SystemExit("the block did not take")
        try:
            embedder_for("minilm")
        except Exception as exc:
            print(type(exc).__name__ + ": " + str(exc))
        import sys
        from dashboards.cli import main
        from swarmlog import open_log
        try:
            main(["--root", sys.argv[1], "init", "--set", "embedder=minilm"])
        except SystemExit as e:
            print("exit", e.code, "events", open_log(sys.argv[1]).last_seq)
        """
    )
    root = str(tmp_path / "swarm")
    proc = subprocess.run(
        [sys.executable, "-c", script, root], capture_output=True, text=True, env=env, timeout=120
    )
    lines = proc.stdout.strip().splitlines()
    assert lines == [f"MissingExtra: {MISSING_EXTRA}", "exit 1 events 0"], proc.stderr
    assert "scripts/setup embed" in lines[0] and "pip install '.[embed]'" in lines[0]
    # the CLI: one line on stderr naming the extra, no traceback, nothing recorded
    assert proc.stderr.strip().splitlines() == [f"error: {MISSING_EXTRA}"]


def test_threshold_belongs_to_the_embedder(minilm: MiniLMEmbedder, tmp_path: Path) -> None:
    assert near_duplicate_of(HashingEmbedder()) == 0.9
    assert near_duplicate_of(minilm) < 0.9
    assert near_duplicate_of(object()) == 0.9  # an agent's own embedder without one
    with Swarm.open(tmp_path / "a", config=MINILM) as sw:
        sw.agent("a").share("x")
        sw.synthesize()
        assert sw._synth is not None and sw._synth.near_duplicate == minilm.near_duplicate
    cfg = SynthConfig.model_validate(
        {"embedder": "minilm", "synthesizer": {"near_duplicate": 0.97}}
    )
    with Swarm.open(tmp_path / "b", config=cfg) as sw:
        sw.agent("a").share("x")
        sw.synthesize()
        assert sw._synth is not None and sw._synth.near_duplicate == 0.97


def test_minilm_swarm_never_mixes_with_hashing_vectors(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    hashing = HashingEmbedder()
    assert hashing.dim == minilm.dim  # same width: only the embedder id keeps them apart
    with Swarm.open(tmp_path / "s", config=MINILM) as sw:
        own = sw.agent("a1").share(
            "The cache TTL is five minutes",
            embedding=hashing.embed_one("The cache TTL is five minutes"),
            embedder=hashing.id,
        )
        local = sw.agent("a2").share("The TTL of the cache is five minutes")
        sw.synthesize()
        facts = sw.state().facts
        assert set(facts) == {f"f{own.seq}", f"f{local.seq}"}  # no cross-space merge
        assert sw.index.namespace_of(f"f{own.seq}") == (hashing.id, 384)
        assert sw.index.namespace_of(f"f{local.seq}") == (minilm.id, 384)
        hits = sw.search("how long do cache entries live", limit=10)
        assert [h.fact.id for h in hits] == [f"f{local.seq}"]
        # the swarm's own vectors are the model's, not hashing ones
        stored = sw.index.default.get(f"f{local.seq}")
        assert stored is not None
        assert stored.tobytes() == minilm.embed_one(facts[f"f{local.seq}"].content).tobytes()
        assert sorted(sw.index.space.namespaces()) == sorted([(minilm.id, 384), (hashing.id, 384)])
    # another process's view: the embedder comes from the log, no one passes it
    other = Swarm.open(tmp_path / "s")
    try:
        assert other.config.embedder == "minilm" and other.embedder.id == minilm.id
        later = other.agent("a3").share("The cache's TTL is five minutes").seq
        assert other.synthesize() == 1  # decided (a fresh process holds the lease at once)
        assert other.index.namespace_of(f"f{local.seq}") == (minilm.id, 384)
        merged = other.state().facts
        assert f"f{later}" not in merged  # merged (a rewording), into the minilm fact
        assert later in [e.seq for e in merged[f"f{local.seq}"].evidence]
    finally:
        other.close()
    found = run_cli("--root", str(tmp_path / "s"), "search", "how long do cached items live")
    assert found.code == 0 and "The TTL of the cache is five minutes" in found.out


@pytest.mark.slow
@pytest.mark.soak  # a minute or more
def test_quality_set_no_false_merges_and_most_semantic_paraphrases(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    """Through the synthesizer: every labelled pair shared by two agents into a fresh swarm."""
    pairs = [json.loads(line) for line in (DATA / "quality_pairs.jsonl").open()]
    assert len(pairs) >= 200
    merged: Counter[str] = Counter()
    total: Counter[str] = Counter()
    false_merges = []
    for i, p in enumerate(pairs):
        with Swarm.open(":memory:", config=MINILM) as sw:  # the reference log, in-process
            sw.agent("alpha").share(p["a"])
            sw.agent("beta").share(p["b"])
            sw.synthesize()
            one = len(sw.state().facts) == 1
        total[p["level"]] += 1
        merged[p["level"]] += one
        if one and not p["merge"]:
            false_merges.append((p["level"], p["a"], p["b"]))
    assert false_merges == []
    assert {lv for lv in total if lv.startswith("near_")} == {
        "near_number",
        "near_unit",
        "near_negation",
        "near_component",
    }
    # whole-sentence paraphrases share too little wording for the merge rule to vouch
    # for them: they stay apart, linked as possible duplicates until a judge answers
    # (test_judge_events.py)
    assert merged["trivial"] >= 0.95 * total["trivial"]
    assert merged["light"] >= 0.75 * total["light"]


def test_embedder_for_names() -> None:
    assert isinstance(embedder_for("hash"), HashingEmbedder)
    assert isinstance(embedder_for("minilm"), MiniLMEmbedder)
    assert embedder_for("minilm") is embedder_for("minilm")  # one model per process
    with pytest.raises(UnknownEmbedder, match="not available"):
        embedder_for("word2vec")


def test_shared_subject_is_a_contradiction_not_a_merge(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    """Claims on one subject with other values contest; plain near-misses stay apart."""
    five, two = "The cache TTL is five minutes", "The cache TTL is two hours"
    assert float(minilm.embed_one(five) @ minilm.embed_one(two)) > 0.9  # cosine alone would merge
    with Swarm.open(tmp_path / "s", config=MINILM) as sw:
        a = sw.agent("a1").share(five, subject="cache.ttl", value="300").seq
        b = sw.agent("a2").share(two, subject="cache.ttl", value="7200").seq
        c = sw.agent("a3").share("Cached entries expire after 5 minutes").seq
        d = sw.agent("a4").share("Cached entries expire after 2 hours").seq
        sw.synthesize()
        facts = sw.state().facts
        assert set(facts) == {f"f{a}", f"f{b}", f"f{c}", f"f{d}"}
        assert {facts[f"f{a}"].status, facts[f"f{b}"].status} == {"active", "superseded"}
        # plain statements: not merged, and a contradiction (5 minutes / 2 hours) contested
        assert facts[f"f{c}"].status == facts[f"f{d}"].status == "contested"
        assert facts[f"f{c}"].contested_with == [f"f{d}"]
