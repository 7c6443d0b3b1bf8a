"""The names LangGraph's Postgres store tests import, made of SwarmStore.

``fresh_store(index=…, ttl=…)`` is what the swapped fixtures open: a SwarmStore on a
fresh log directory. ``PostgresStore`` is SwarmStore with the two TTL-sweeper methods
Postgres' fixtures and tests call (SwarmStore needs no sweeper: an expired item is
left out by every read, so starting or stopping one changes nothing). Postgres'
internals (its SQL helpers, migrations, ``_cursor``) have no SwarmStore counterpart:
their names are here only so the module imports, and the tests that use them are
listed in conftest.NOT_APPLICABLE.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from types import SimpleNamespace
from typing import Any

from synthesizer.integrations.langgraph import SwarmStore
from tests.upstream_langgraph_postgres.embed_test_utils import CharacterEmbeddings

__all__ = [
    "VECTOR_TYPES",
    "AsyncPostgresStore",
    "CharacterEmbeddings",
    "PostgresStore",
    "afresh_store",
    "fresh_store",
]

VECTOR_TYPES = ["vector", "halfvec"]
"""As upstream's conftest (pgvector's column types; SwarmStore keeps float32 vectors)."""

_roots = tempfile.mkdtemp(prefix="swarmstore-postgres-")
_n = itertools.count()


class PostgresStore(SwarmStore):
    """``PostgresStore`` as its tests use it: a SwarmStore (see the module docstring)."""

    MIGRATIONS: list[str] = []

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Any:
        """Nothing to sweep: reads leave expired items out."""

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Nothing to stop."""
        return True


@contextmanager
def fresh_store(*, index: Any = None, ttl: Any = None) -> Iterator[PostgresStore]:
    """A PostgresStore (SwarmStore) on a fresh log directory, closed after use."""
    store = PostgresStore(f"{_roots}/s{next(_n)}", index=index, ttl=ttl)
    try:
        yield store
    finally:
        store.close()


class AsyncPostgresStore(SwarmStore):
    """``AsyncPostgresStore`` as its tests use it: a SwarmStore (its ``a*`` methods)."""

    MIGRATIONS: list[str] = []

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Any:
        """Nothing to sweep: reads leave expired items out."""

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Nothing to stop."""
        return True


@asynccontextmanager
async def afresh_store(*, index: Any = None, ttl: Any = None) -> AsyncIterator[AsyncPostgresStore]:
    """An AsyncPostgresStore (SwarmStore) on a fresh log directory, closed after use."""
    store = AsyncPostgresStore(f"{_roots}/a{next(_n)}", index=index, ttl=ttl)
    try:
        yield store
    finally:
        store.close()


_ainternal = SimpleNamespace(get_connection=None)
"""Postgres' connection-pool module: no SwarmStore counterpart (its test does not apply)."""


def _escape_like_literal(label: str) -> str:
    raise NotImplementedError("a Postgres helper: no SwarmStore counterpart")


def _namespace_match_pattern(path: tuple[str, ...], how: str) -> str:
    raise NotImplementedError("a Postgres helper: no SwarmStore counterpart")


def cleanup() -> None:
    shutil.rmtree(_roots, ignore_errors=True)
