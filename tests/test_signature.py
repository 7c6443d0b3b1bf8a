"""Content normalisation and signatures (exact-duplicate detection)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from synthesizer.worker.signature import normalise_content, signature


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  Hello,   WORLD!! ", "hello world"),
        ("ＡＰＩ　ｓｅｒｖｅｒ：８０８０", "api server 8080"),  # full-width forms (NFKC)
        ("Straße", "strasse"),  # casefold, not lower
        ("don't stop", "dont stop"),  # apostrophes join
        ("don\u2019t stop", "dont stop"),
        ("a 12-month cycle", "a 12 month cycle"),  # other punctuation separates
        ("line one\nline\ttwo", "line one line two"),
        ("...", ""),
        ("", ""),
    ],
)
def test_normalise_content(text: str, expected: str) -> None:
    assert normalise_content(text) == expected


def test_signature_ignores_case_punctuation_whitespace() -> None:
    base = signature("The API server listens on port 8080.")
    assert signature("the api server listens on port 8080") == base
    assert signature("  THE API server -- listens on port 8080!!!") == base
    assert signature("The  API\tserver listens on port 8080 ?") == base


def test_signature_distinguishes_different_words() -> None:
    assert signature("The API server listens on port 8080") != signature(
        "The API server listens on port 8081"
    )
    assert signature("cache is warm") != signature("cache is cold")
    assert signature("ab c") != signature("a bc")


def test_signature_format_and_value() -> None:
    sig = signature("Hello, World!")
    assert len(sig) == 32
    assert int(sig, 16) >= 0
    assert sig == hashlib.blake2b(b"hello world", digest_size=16).hexdigest()


def test_signature_stable_across_processes() -> None:
    code = (
        "from synthesizer.worker.signature import signature;"
        " print(signature('Ünïcode Tëxt, 42!'))"
    )
    outs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
        ).stdout.strip()
        outs.add(out)
    assert outs == {signature("Ünïcode Tëxt, 42!")}
