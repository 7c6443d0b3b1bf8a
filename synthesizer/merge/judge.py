"""A pluggable judge for the pairs the merge rule cannot settle (off by default).

``synthesizer.judge`` in the swarm's configuration names it: a name registered with
``register_judge``, ``module:callable`` (a Python callable ``(a, b) -> answer``), or the
URL of an OpenAI-compatible chat-completions endpoint (``synthesizer.judge_model`` is the
model it names; a bearer token, if needed, comes from ``SWARMLOG_JUDGE_KEY``). The judge
is asked only about candidate pairs whose verdict is ``unsure``; its answer — ``same``,
``contradicts`` or ``different`` — goes into the synthesizer's decision event with the
judge's name and model, so a replay folds the decision and never asks again.

A judge that fails (an exception, a timeout, an answer that is none of the three) counts
as no answer: the pair stays apart, as without a judge.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["ANSWERS", "Judge", "judge_for", "register_judge"]

ANSWERS = ("same", "contradicts", "different")
LOG = logging.getLogger("synthesizer.judge")
TIMEOUT_S = 20.0
PROMPT = (
    "Two agents wrote these statements into a shared memory.\n"
    "A: {a}\nB: {b}\n"
    "Answer with one word: 'same' if they state the same fact in other words, "
    "'contradicts' if they are about the same thing and cannot both be true, "
    "'different' if they are about different things."
)

_REGISTRY: dict[str, Callable[[str, str], str]] = {}


def register_judge(name: str, fn: Callable[[str, str], str]) -> None:
    """Make ``fn(a, b) -> answer`` the judge named ``name`` (``synthesizer.judge=name``)."""
    _REGISTRY[name] = fn


def _answer(text: str) -> str | None:
    """The first of the three answers the text says, None if it says none."""
    m = re.search(r"\b(same|contradicts?|contradictory|different)\b", text.lower())
    if m is None:
        return None
    word = m.group(1)
    return "contradicts" if word.startswith("contradict") else word


@dataclass
class Judge:
    """A judge: ``ask(a, b)`` returns one of ``ANSWERS`` or None (no usable answer)."""

    name: str
    model: str
    fn: Callable[[str, str], str]

    def ask(self, a: str, b: str) -> str | None:
        """The judge's answer for statements ``a`` and ``b``; None when it fails."""
        try:
            return _answer(str(self.fn(a, b)))
        except Exception as e:  # a judge is advice: its failure keeps the pair apart
            LOG.warning("judge %s failed: %s", self.name, e)
            return None


def _chat(url: str, model: str) -> Callable[[str, str], str]:
    """A chat-completions client for ``url`` (stdlib HTTP, no SDK)."""

    def ask(a: str, b: str) -> str:
        body = {
            "model": model,
            "temperature": 0,
            "messages": [{"role": "user", "content": PROMPT.format(a=a, b=b)}],
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get("SWARMLOG_JUDGE_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        with urllib.request.urlopen(req, timeout=TIMEOUT_S) as resp:
            got = json.loads(resp.read())
        return str(got["choices"][0]["message"]["content"])

    return ask


def judge_for(spec: str, model: str = "") -> Judge | None:
    """The judge ``spec`` names (see module docstring); None when ``spec`` is empty.

    Raises ValueError for a spec that names nothing usable.
    """
    spec = spec.strip()
    if not spec:
        return None
    if spec in _REGISTRY:
        return Judge(spec, model, _REGISTRY[spec])
    if spec.startswith(("http://", "https://")):
        return Judge(spec, model, _chat(spec, model))
    mod, sep, attr = spec.partition(":")
    if sep and mod and attr:
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"judge {spec!r}: {e}") from None
        if callable(fn):
            return Judge(spec, model or str(getattr(fn, "model", "")), fn)
    raise ValueError(f"judge {spec!r} is not a registered name, module:callable or http(s) URL")
