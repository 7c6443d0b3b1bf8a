"""Run LangGraph's Postgres store tests (langgraph-checkpoint-postgres 3.2.0, vendored
here with their import lines and database fixtures swapped) against SwarmStore:
swarm_postgres.py opens each store as a SwarmStore on a fresh log directory.
Coroutine tests and fixtures run on anyio's asyncio backend (upstream uses
pytest-asyncio's auto mode). Tests that do not apply are listed in ``NOT_APPLICABLE``
with why; they are skipped, not hidden."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")
pytest.importorskip("langchain_core")

from tests.upstream_langgraph_postgres import swarm_postgres

_SQL_TTL = (
    "expires rows by writing expires_at through store._cursor() (SQL) and reads the"
    " table back; a log's items expire by the clock (test_store_ttl runs)"
)

NOT_APPLICABLE: dict[str, str] = {
    "test_escape_like_literal": "tests a Postgres LIKE helper, not a store",
    "test_namespace_match_pattern": "tests a Postgres regex helper, not a store",
    "test_nonnull_migrations": "tests Postgres' schema migrations; a log has none",
    "test_omit_expired_filters_read_paths": _SQL_TTL,
    "test_omit_expired_disabled_preserves_expired_rows": _SQL_TTL,
    "test_omit_expired_refresh_ttl_only_refreshes_live_rows": _SQL_TTL,
    "test_omit_expired_search_pagination": _SQL_TTL,
    "test_store_ttl": (
        "timed by wall-clock sleeps (a 6 s TTL with 1-2 s margins, 17 s a run): this"
        " project's tests make no timing assertions on its loaded 2-core CI machine; it"
        " passed here when run (sync and async), and tests/test_langgraph_store.py tests"
        " SwarmStore's TTL and refresh on read without sleeping"
    ),
    "test_no_running_loop": (
        "AsyncPostgresStore refuses its sync methods on the event loop's thread;"
        " SwarmStore is one store with both, and its sync methods work anywhere"
    ),
    "test_abatch_uses_single_pool_checkout": (
        "counts checkouts from Postgres' connection pool (_ainternal); a log has no pool"
    ),
}
"""Upstream test name -> why it does not apply to SwarmStore."""


@pytest.fixture
def fake_embeddings() -> swarm_postgres.CharacterEmbeddings:
    """Upstream's conftest fixture, as it is there."""
    return swarm_postgres.CharacterEmbeddings(dims=500)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: Any, name: str, obj: object) -> None:
    """Mark coroutine tests for anyio before they are parametrized (then collect as usual)."""
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.anyio(obj)


SLOW = {"test_large_batches", "test_large_batches_async"}
"""Upstream tests that take seconds here (marked slow: scripts/test --all runs them)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        name = getattr(item, "originalname", item.name)
        if "upstream_langgraph_postgres" not in str(item.path):
            continue
        if name in NOT_APPLICABLE:
            item.add_marker(pytest.mark.skip(reason=NOT_APPLICABLE[name]))
        if name in SLOW:
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish() -> None:
    swarm_postgres.cleanup()
