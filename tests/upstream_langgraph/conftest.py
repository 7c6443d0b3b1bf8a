"""Run LangGraph's own store tests (langgraph-checkpoint 4.3.2, vendored here unchanged
but for two imports) against SwarmStore: every ``InMemoryStore`` the module names is a
SwarmStore on a fresh log directory. Coroutine tests run on anyio's asyncio backend
(upstream uses pytest-asyncio's auto mode). Tests that do not apply to SwarmStore are
listed in ``NOT_APPLICABLE`` with why; they are skipped, not hidden."""

from __future__ import annotations

import inspect
import itertools
import shutil
import tempfile
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")
pytest.importorskip("langchain_core")

from synthesizer.integrations.langgraph import SwarmStore

NOT_APPLICABLE: dict[str, str] = {}
"""Upstream test name -> why it does not apply to SwarmStore."""

_roots = tempfile.mkdtemp(prefix="swarmstore-upstream-")
_n = itertools.count()


class SwarmInMemoryStore(SwarmStore):
    """``InMemoryStore(**kwargs)`` as upstream's tests call it: a SwarmStore on a fresh
    log directory (each instance its own swarm)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(f"{_roots}/s{next(_n)}", **kwargs)


@pytest.fixture(autouse=True)
def _swarm_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request.module, "InMemoryStore", SwarmInMemoryStore, raising=False)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: object) -> None:
    """Mark coroutine tests for anyio before they are parametrized (then collect as usual)."""
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.anyio(obj)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", item.name)
        if name in NOT_APPLICABLE:
            item.add_marker(pytest.mark.skip(reason=NOT_APPLICABLE[name]))


def pytest_sessionfinish() -> None:
    shutil.rmtree(_roots, ignore_errors=True)
