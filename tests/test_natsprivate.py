"""The fence around nats-py's private names (swarmlog/jetstream/natsprivate.py).

A nats-py release may rename, re-sign or stop calling what the adapter overrides; then a
JetStream log would hang or crawl without an error. These tests fail first, naming what
moved: pin nats-py back, or port natsprivate.py and move the pin in pyproject.toml.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

pytest.importorskip("nats")

from nats.aio.client import Client
from nats.aio.subscription import Subscription

from swarmlog.jetstream import natsprivate

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", sorted(natsprivate.OVERRIDDEN))
def test_overridden_client_methods_are_still_there(name: str) -> None:
    theirs = inspect.getattr_static(Client, name, None)
    assert theirs is not None, f"nats-py's Client no longer has {name}: port natsprivate.py"
    params = tuple(inspect.signature(getattr(Client, name)).parameters)
    assert params == natsprivate.OVERRIDDEN[name], (
        f"nats-py's Client.{name} now takes {params}, natsprivate.py was written for "
        f"{natsprivate.OVERRIDDEN[name]}"
    )
    if name == "_process_msg":
        assert inspect.iscoroutinefunction(theirs), "Client._process_msg is no longer async"
    else:
        assert isinstance(theirs, staticmethod), f"Client.{name} is no longer a staticmethod"
    ours = inspect.getattr_static(natsprivate.InlineClient, name, None)
    if ours is not None:  # (the header parser is set per instance)
        assert tuple(inspect.signature(ours).parameters) == natsprivate.OVERRIDDEN[name]


def test_the_parser_still_hands_every_message_to_process_msg() -> None:
    from nats.protocol import parser

    src = inspect.getsource(parser)
    assert re.search(r"self\.nc\._process_msg\(\s*sid, subject, reply, payload, hdr", src), (
        "nats-py's protocol parser no longer calls nc._process_msg(sid, subject, reply, "
        "payload, headers): InlineClient's subscriptions would never see a message"
    )
    client_src = inspect.getsource(Client)
    assert "self._parse_header_lines(" in client_src, "Client no longer uses _parse_header_lines"


def test_a_subscription_is_known_by_its_id() -> None:
    sub = Subscription(None, id=7, subject="x")
    assert natsprivate.subscription_sid(sub) == 7


def test_the_inline_client_routes_by_sid() -> None:
    import asyncio

    nc = natsprivate.InlineClient(lambda raw: {"k": raw.decode()})
    got: list[tuple[bytes, bytes, bytes | None]] = []
    nc.handle_inline(Subscription(nc, id=3, subject="s"), lambda *m: got.append(m))
    asyncio.run(nc._process_msg(3, b"s", b"", b"data", b"hdr"))
    asyncio.run(nc._process_msg(4, b"t", b"", b"other", b""))  # unknown sid: nats-py's path
    assert got == [(b"s", b"data", b"hdr")]
    assert nc._parse_header_lines(b"v") == {"k": "v"}


def test_nats_py_is_pinned_to_a_checked_minor_release() -> None:
    """The pin in both extras names the installed minor release: moving past it means
    running these tests against the new one (and moving the pin) first."""
    from importlib.metadata import version

    major, minor = (int(p) for p in version("nats-py").split(".")[:2])
    pyproject = (ROOT / "pyproject.toml").read_text()
    pins = re.findall(r'"nats-py([^"]*)"', pyproject)
    assert len(pins) == 2, pins  # the nats extra and the test extra
    for pin in pins:
        assert pin == f">={major}.{minor},<{major}.{minor + 1}", pin


def test_no_other_module_touches_nats_private_names() -> None:
    allowed = {"natsprivate.py"}
    for path in sorted((ROOT / "swarmlog").rglob("*.py")):
        if path.name in allowed:
            continue
        src = path.read_text()
        for pat in (r"\._process_msg\b", r"\._parse_header_lines\b", r"\bsub\._id\b"):
            assert not re.search(pat, src), f"{path.relative_to(ROOT)} uses {pat}"
