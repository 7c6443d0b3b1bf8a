"""A pluggable judge for the pairs the merge rule cannot settle (off by default).

``synthesizer.judge`` in the swarm's configuration names it: a name registered with
``register_judge``, ``module:callable`` (a Python callable ``(a, b) -> answer``), or the
URL of an OpenAI-compatible chat-completions endpoint (``synthesizer.judge_model`` is the
model it names; a bearer token, if needed, comes from ``SWARMLOG_JUDGE_KEY``). Ollama
(``http://localhost:11434/v1/chat/completions``), vLLM (``:8000``) and llama.cpp's server
(``:8080``) all speak it.

The judge is never asked inside a decision: the synthesizer records the question
(``judge.asked``) and the judge worker (``synthesizer.worker.judging``) asks it later and
records the answer (``judge.answered``); a replay folds both and never asks again.

Answers are parsed strictly (``parse_answer``): ``{"verdict": "same"}`` (the endpoint is
asked for a JSON object) or the bare word, and nothing else. A hedged or negated answer
("not the same", "maybe same") is no answer: the question stays open. The HTTP client
has one deadline for the whole call (connect, headers and body, however slowly a server
trickles them) and a cap on the answer's size.
"""

from __future__ import annotations

import http.client
import importlib
import json
import logging
import os
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "ANSWERS",
    "MAX_ANSWER_BYTES",
    "PROMPT",
    "TIMEOUT_S",
    "Judge",
    "JudgeError",
    "judge_for",
    "parse_answer",
    "register_judge",
]

ANSWERS = ("same", "contradicts", "different")
LOG = logging.getLogger("synthesizer.judge")
TIMEOUT_S = 20.0
"""The whole HTTP call's deadline (connect, send, headers, body)."""
MAX_ANSWER_BYTES = 64 * 1024
"""An HTTP answer longer than this is a failure (a chat completion of one word is ~500 B)."""
PROMPT = (
    "Two agents wrote these statements into a shared memory.\n"
    "A: {a}\nB: {b}\n"
    'Reply with a JSON object {{"verdict": V}} where V is "same" if they state the same '
    'fact in other words, "contradicts" if they are about the same thing and cannot both '
    'be true, "different" if they are about different things.'
)

_REGISTRY: dict[str, Callable[[str, str], str]] = {}


class JudgeError(RuntimeError):
    """A judge call that failed (transport, deadline, size, malformed response)."""


def register_judge(name: str, fn: Callable[[str, str], str]) -> None:
    """Make ``fn(a, b) -> answer`` the judge named ``name`` (``synthesizer.judge=name``)."""
    _REGISTRY[name] = fn


_WORD = re.compile(r"\s*(same|contradicts|different)\s*[.!]?\s*", re.IGNORECASE)


def parse_answer(text: str) -> str | None:
    """The verdict ``text`` states, strictly: a JSON object whose ``verdict`` is one of
    ``ANSWERS``, or one of them alone (any case, a full stop allowed); None for anything
    else — a hedge, a negation, a sentence, another key. Why strict: an answer merges or
    contests facts, and "not the same" must never read as "same"."""
    t = text.strip()
    if t.startswith("{"):
        try:
            got = json.loads(t)
        except ValueError:
            return None
        if not isinstance(got, dict) or set(got) - {"verdict", "reason"}:
            return None
        v = got.get("verdict")
        return v if isinstance(v, str) and v in ANSWERS else None
    m = _WORD.fullmatch(t)
    return m.group(1).lower() if m else None


@dataclass
class Judge:
    """A judge: ``answer(a, b)`` returns one of ``ANSWERS`` or None (no usable answer)
    and raises when the call fails; ``ask`` is the same with a failure as None."""

    name: str
    model: str
    fn: Callable[[str, str], str]

    def answer(self, a: str, b: str) -> str | None:
        """The judge's verdict on statements ``a`` and ``b`` (raises when the call fails)."""
        return parse_answer(str(self.fn(a, b)))

    def ask(self, a: str, b: str) -> str | None:
        """``answer``, with a failure logged and returned as None."""
        try:
            return self.answer(a, b)
        except Exception as e:  # a judge is advice: its failure leaves the question open
            LOG.warning("judge %s failed: %s", self.name, e)
            return None


def _post(url: str, payload: bytes, headers: dict[str, str], deadline_s: float, cap: int) -> bytes:
    """POST ``payload`` and return the response body, within ``deadline_s`` overall and
    at most ``cap`` bytes. A timer shuts the socket at the deadline, so a server that
    trickles bytes (each within a per-read timeout) cannot stretch the call."""
    u = urllib.parse.urlsplit(url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise JudgeError(f"not an http(s) URL: {url!r}")
    end = time.monotonic() + deadline_s
    cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = cls(u.hostname, u.port, timeout=deadline_s)
    expired = threading.Event()

    def _expire() -> None:
        expired.set()
        sock = conn.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(deadline_s, _expire)
    timer.daemon = True
    timer.start()
    try:
        path = u.path or "/"
        if u.query:
            path += "?" + u.query
        conn.request("POST", path, body=payload, headers=headers)
        resp = conn.getresponse()
        if resp.status != 200:
            raise JudgeError(f"HTTP {resp.status}")
        length = resp.getheader("Content-Length")
        if length is not None and length.isdigit() and int(length) > cap:
            raise JudgeError(f"answer of {length} bytes (max {cap})")
        chunks: list[bytes] = []
        size = 0
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise JudgeError(f"no complete answer within {deadline_s:g} s")
            if conn.sock is not None:
                conn.sock.settimeout(left)
            chunk = resp.read1(min(8192, cap + 1 - size)) if size <= cap else b""
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                raise JudgeError(f"answer over {cap} bytes")
        if expired.is_set():
            raise JudgeError(f"no complete answer within {deadline_s:g} s")
        return b"".join(chunks)
    except (OSError, http.client.HTTPException) as e:
        if expired.is_set():
            raise JudgeError(f"no complete answer within {deadline_s:g} s") from None
        raise JudgeError(f"{type(e).__name__}: {e}") from None
    finally:
        timer.cancel()
        conn.close()


def _chat(
    url: str, model: str, deadline_s: float = TIMEOUT_S, cap: int = MAX_ANSWER_BYTES
) -> Callable[[str, str], str]:
    """A chat-completions client for ``url`` (stdlib HTTP, no SDK): the verdict's text."""

    def ask(a: str, b: str) -> str:
        body = {
            "model": model,
            "temperature": 0,
            "max_tokens": 32,
            "response_format": {"type": "json_object"},
            "messages": [{"role": "user", "content": PROMPT.format(a=a, b=b)}],
        }
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get("SWARMLOG_JUDGE_KEY")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        raw = _post(url, json.dumps(body).encode(), headers, deadline_s, cap)
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as e:
            raise JudgeError(f"not a chat completion: {type(e).__name__}") from None
        if not isinstance(content, str):
            raise JudgeError("not a chat completion: content is not text")
        return content

    return ask


def judge_for(spec: str, model: str = "", deadline_s: float = TIMEOUT_S) -> Judge | None:
    """The judge ``spec`` names (see module docstring); None when ``spec`` is empty.

    Raises ValueError for a spec that names nothing usable.
    """
    spec = spec.strip()
    if not spec:
        return None
    if spec in _REGISTRY:
        return Judge(spec, model, _REGISTRY[spec])
    if spec.startswith(("http://", "https://")):
        return Judge(spec, model, _chat(spec, model, deadline_s))
    mod, sep, attr = spec.partition(":")
    if sep and mod and attr:
        try:
            fn = getattr(importlib.import_module(mod), attr)
        except (ImportError, AttributeError) as e:
            raise ValueError(f"judge {spec!r}: {e}") from None
        if callable(fn):
            return Judge(spec, model or str(getattr(fn, "model", "")), fn)
    raise ValueError(f"judge {spec!r} is not a registered name, module:callable or http(s) URL")
