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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from synthesizer.langgraph import SwarmStore
from tests.upstream_langgraph_postgres.embed_test_utils import CharacterEmbeddings

__all__ = ["VECTOR_TYPES", "CharacterEmbeddings", "PostgresStore", "fresh_store"]

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


def _escape_like_literal(label: str) -> str:
    raise NotImplementedError("a Postgres helper: no SwarmStore counterpart")


def _namespace_match_pattern(path: tuple[str, ...], how: str) -> str:
    raise NotImplementedError("a Postgres helper: no SwarmStore counterpart")


def cleanup() -> None:
    shutil.rmtree(_roots, ignore_errors=True)
