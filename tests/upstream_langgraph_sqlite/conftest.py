"""Run LangGraph's SQLite store tests (langgraph-checkpoint-sqlite 3.1.2, vendored here
unchanged but for their import lines) against SwarmStore: swarm_sqlite.py gives every
``SqliteStore``/``AsyncSqliteStore`` they open as a SwarmStore on a log directory.
Coroutine tests and fixtures run on anyio's asyncio backend (upstream uses
pytest-asyncio's auto mode). Tests that do not apply are listed in ``NOT_APPLICABLE``
with why; they are skipped, not hidden."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")
pytest.importorskip("langchain_core")

from tests.upstream_langgraph_sqlite import swarm_sqlite

NOT_APPLICABLE: dict[str, str] = {
    "test_escape_glob_literal": "tests an SQLite GLOB helper, not a store",
    "test_namespace_match_pattern": "tests an SQLite REGEXP helper, not a store",
    "test_list_namespaces_prefix_uses_indexable_condition": (
        "tests the SQL that SQLite's query builder writes (an index-friendly GLOB)"
    ),
    "test_nonnull_migrations": "tests SQLite's schema migrations; a log has none",
    "test_vector_store_initialization": (
        "reads SQLite's sqlite_master through store.conn for the vector tables"
    ),
    "test_sql_injection_vulnerability": (
        "SQLite refuses filter keys it could not splice into SQL safely ('Invalid filter"
        " key'); SwarmStore builds no SQL: such a key is a JSON path that matches nothing"
        " (tests/test_langgraph_parity.py shows the same malicious key finds nothing)"
    ),
    "test_no_running_loop": (
        "AsyncSqliteStore refuses its sync methods on the event loop's thread;"
        " SwarmStore is one store with both, and its sync methods work anywhere"
    ),
}
"""Upstream test name -> why it does not apply to SwarmStore."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: object) -> None:
    """Mark coroutine tests for anyio before they are parametrized (then collect as usual)."""
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.anyio(obj)


SLOW = {"test_large_batches_async"}
"""Upstream tests that take seconds here (marked slow: scripts/test --all runs them)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", item.name)
        if "upstream_langgraph_sqlite" not in str(item.path):
            continue
        if name in NOT_APPLICABLE:
            item.add_marker(pytest.mark.skip(reason=NOT_APPLICABLE[name]))
        if name in SLOW:
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish() -> None:
    swarm_sqlite.cleanup()
