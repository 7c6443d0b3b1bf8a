"""Synthetic memory text shared by the benchmark scripts: a topic vocabulary and sentences.

Deterministic for a given ``random.Random``: every run of a script measures the same text.
"""

from __future__ import annotations

import random

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
    "timeout",
    "queue",
    "index",
    "shard",
    "replica",
    "deploy",
    "config",
    "parser",
    "socket",
    "thread",
    "worker",
    "buffer",
    "stream",
    "schema",
    "migration",
    "session",
    "cookie",
    "header",
    "encoder",
    "decoder",
    "scheduler",
]
"""Topic words: shared words make memories similar, as a swarm's notes on one system are."""


def sentence(rng: random.Random, i: int) -> str:
    """Six topic words and a module number: a memory distinct from the others for each i."""
    return f"{' '.join(rng.choices(WORDS, k=6))} fails in module {i}"
