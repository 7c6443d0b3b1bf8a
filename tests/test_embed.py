"""The deterministic hashing embedder: shape, normalisation, determinism, quality."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from synthesizer.search.embed import Embedder, HashingEmbedder, check_vector, normalise, tokenize

EMB = HashingEmbedder()


def cos(a: str, b: str, emb: HashingEmbedder = EMB) -> float:
    va, vb = emb.embed([a, b])
    return float(va @ vb)


# -- shape, normalisation, API ------------------------------------------------------


def test_id_dim_and_protocol() -> None:
    assert EMB.id == "hash-v1-384"
    assert EMB.dim == 384
    small = HashingEmbedder(dim=256)
    assert small.id == "hash-v1-256"
    assert small.embed(["hello"]).shape == (1, 256)
    assert isinstance(EMB, Embedder)


@pytest.mark.parametrize("dim", [0, 4, -1, 3.5, True])
def test_bad_dim_rejected(dim: object) -> None:
    with pytest.raises(ValueError):
        HashingEmbedder(dim=dim)  # type: ignore[arg-type]


def test_rows_are_unit_float32() -> None:
    texts = ["The API server listens on port 8080", "a", "x y z " * 50, "Ünïcödé façade"]
    out = EMB.embed(texts)
    assert out.dtype == np.float32
    assert out.shape == (4, 384)
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)


@pytest.mark.parametrize("text", ["", "   ", "!!! ... ???", "—"])
def test_text_without_words_is_zero_vector(text: str) -> None:
    vec = EMB.embed_one(text)
    assert vec.shape == (384,)
    assert not vec.any()
    assert float(vec @ EMB.embed_one("anything at all")) == 0.0


def test_empty_batch() -> None:
    out = EMB.embed([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_embed_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError):
        EMB.embed("not a list")


def test_tokenize_folds_case_accents_apostrophes() -> None:
    assert tokenize("Café DON'T snake_case  x2") == ["cafe", "dont", "snake", "case", "x2"]


# -- determinism ----------------------------------------------------------------------

TEXTS = [
    "The dataset has a 12-month seasonal cycle",
    "Ünïcödé, façade & naïve café — ＦＵＬＬ width",
    "repeat repeat repeat words words",
    "",
]


def test_row_independent_of_batch_and_instance() -> None:
    batch = EMB.embed([*TEXTS, *(f"filler sentence {i}" for i in range(40))])
    for i, text in enumerate(TEXTS):
        assert EMB.embed_one(text).tobytes() == batch[i].tobytes()
        assert HashingEmbedder().embed([text]).tobytes() == batch[i].tobytes()


def test_independent_of_cache_history() -> None:
    tiny = HashingEmbedder(cache_words=8)  # cache cleared again and again
    for i in range(30):
        tiny.embed([f"warm {i} up with unrelated vocabulary number {i * 7}"])
    fresh = HashingEmbedder()
    many = [f"sentence {i} about topic {i % 7} and more words" for i in range(60)]
    assert tiny.embed(many).tobytes() == fresh.embed(many).tobytes()


def test_same_bytes_in_other_processes() -> None:
    code = (
        "import sys, json; from synthesizer.search.embed import HashingEmbedder; "
        "texts = json.loads(sys.argv[1]); "
        "print(HashingEmbedder().embed(texts).tobytes().hex())"
    )
    import json

    expected = EMB.embed(TEXTS).tobytes().hex()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code, json.dumps(TEXTS)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        ).stdout.strip()
        assert out == expected


# -- quality --------------------------------------------------------------------------


def test_paraphrase_beats_unrelated() -> None:
    a = "The dataset has a 12-month seasonal cycle"
    para = cos(a, "the data set shows a seasonal cycle of 12 months")
    unrelated = cos(a, "The login button crashes on Safari")
    assert para > 0.5
    assert abs(unrelated) < 0.15
    assert para - unrelated > 0.4


@pytest.mark.parametrize(
    "variant",
    [
        "the api server listens on port 8080",
        "THE API SERVER LISTENS ON PORT 8080!!!",
        "  The   API server, listens on port 8080 . ",
        "The API-server listens on port 8080?",
    ],
)
def test_case_whitespace_punctuation_invariant(variant: str) -> None:
    assert cos("The API server listens on port 8080", variant) >= 0.95


NEAR_DUPLICATES = [
    ("The API server listens on port 8080", "The API server is listening on port 8080"),
    ("The API server listens on port 8080", "On port 8080 the API server listens"),
    ("The API server listens on port 8080", "The API server listens on the port 8080"),
    ("Deploys run every night at 2am", "Deploys are run every night at 2am"),
    ("Use pytest for the unit tests", "Use pytest for all unit tests"),
    ("Retries use exponential backoff", "Retries use an exponential backoff"),
    ("Customer churn peaks in January", "In January customer churn peaks"),
    (
        "The cache is invalidated when the user logs out",
        "The cache gets invalidated when a user logs out",
    ),
    ("The dataset has a 12-month seasonal cycle", "The dataset has a seasonal cycle of 12 months"),
    (
        "Memory usage spikes during nightly batch jobs",
        "Memory usage spikes during the nightly batch job",
    ),
    (
        "The scheduler retries failed tasks three times",
        "Failed tasks are retried three times by the scheduler",
    ),
]

DIFFERENT_FACTS = [
    ("The API server listens on port 8080", "The database listens on port 5432"),
    ("The API server listens on port 8080", "The API server listens on port 9090"),
    ("The dataset has a 12-month seasonal cycle", "The dataset has a 6-month trend"),
    ("Deploys run every night at 2am", "Backups run every night at 3am"),
    ("Use pytest for the unit tests", "Use unittest for the integration tests"),
    ("Customer churn peaks in January", "Customer signups peak in March"),
    ("Memory usage spikes during nightly batch jobs", "CPU usage drops during nightly batch jobs"),
    ("The frontend uses React with TypeScript", "The backend uses Django with Python"),
    ("The scheduler retries failed tasks three times", "The scheduler skips failed tasks"),
]


@pytest.mark.parametrize(("a", "b"), NEAR_DUPLICATES)
def test_near_duplicates_score_at_least_0_9(a: str, b: str) -> None:
    assert cos(a, b) >= 0.9


@pytest.mark.parametrize(("a", "b"), DIFFERENT_FACTS)
def test_different_facts_on_same_topic_stay_below_0_9(a: str, b: str) -> None:
    assert cos(a, b) < 0.8


def test_accents_and_inflections_match() -> None:
    assert cos("café opening hours", "cafe opening hours") > 0.99
    assert cos("listens", "listening") > 0.6
    assert cos("listens", "database") < 0.2


def test_negation_is_not_a_stopword() -> None:
    assert cos("the build is passing", "the build is not passing") < cos(
        "the build is passing", "the build is passing now"
    )


def test_check_vector_accepts_and_converts() -> None:
    out = check_vector([0.0, 1.0, 2.0], 3)
    assert out.dtype == np.float32
    assert out.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("vec", "fragment"),
    [
        (np.zeros(256), "dimension 256, expected 384"),
        (np.zeros((2, 384)), "1-D"),
        (np.array([np.nan] + [0.0] * 383), "non-finite"),
        (np.array([np.inf] + [0.0] * 383), "non-finite"),
        (["a"] * 384, "not numeric"),
    ],
)
def test_check_vector_rejects(vec: object, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        check_vector(vec, 384)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_normalise() -> None:
    v = normalise(np.array([3.0, 4.0]))
    assert v.dtype == np.float32
    assert np.allclose(v, [0.6, 0.8])
    assert not normalise(np.zeros(5)).any()
    m = normalise(np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 2.0]]))
    assert np.allclose(m, [[0.6, 0.8], [0.0, 0.0], [0.0, 1.0]])
