"""The names LangGraph's SQLite store tests import, made of SwarmStore.

``SqliteStore.from_conn_string(conn)`` (and its async twin) yields a SwarmStore on a log
directory: a fresh one for ``":memory:"``, and for a file path always the same one (so a
test that opens one file twice finds its items again); ``setup()`` has nothing to do.
SQLite's own internals (its SQL helpers, migrations, connection) have no SwarmStore
counterpart: their names are here only so the module imports, and the tests that use
them are listed in conftest.NOT_APPLICABLE.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from synthesizer.integrations.langgraph import SwarmStore

_roots = tempfile.mkdtemp(prefix="swarmstore-sqlite-")
_n = itertools.count()
_files: dict[str, str] = {}

SqliteIndexConfig = dict
"""SQLite's index config is a TypedDict; a dict serves."""
NS_MATCH_FUNCTION = "swarmstore has no SQL match function"


def _root(conn_string: str) -> str:
    """The log directory a connection string stands for (see the module docstring)."""
    if conn_string == ":memory:":
        return f"{_roots}/m{next(_n)}"
    return _files.setdefault(conn_string, f"{_roots}/f{next(_n)}")


def _index(index: dict[str, Any] | None) -> dict[str, Any] | None:
    """SQLite's ``text_fields`` is the base config's ``fields``."""
    if not index:
        return index
    cfg = dict(index)
    fields = cfg.pop("text_fields", None)
    if fields is not None:
        cfg.setdefault("fields", fields)
    return cfg


class SqliteStore(SwarmStore):
    """``SqliteStore`` as its tests use it: a SwarmStore (see the module docstring)."""

    MIGRATIONS: list[str] = []

    @classmethod
    @contextmanager
    def from_conn_string(
        cls, conn_string: str, *, index: Any = None, ttl: Any = None
    ) -> Iterator[SqliteStore]:
        store = cls(_root(conn_string), index=_index(index), ttl=ttl)
        try:
            yield store
        finally:
            store.close()

    def setup(self) -> None:
        """Nothing to set up: the log directory is created on open."""


class AsyncSqliteStore(SwarmStore):
    """``AsyncSqliteStore`` as its tests use it: a SwarmStore (its ``a*`` methods)."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, index: Any = None, ttl: Any = None
    ) -> AsyncIterator[AsyncSqliteStore]:
        store = cls(_root(conn_string), index=_index(index), ttl=ttl)
        try:
            yield store
        finally:
            store.close()

    async def setup(self) -> None:  # type: ignore[override]
        """Nothing to set up: the log directory is created on open."""


class BaseSqliteStore:
    """SQLite's query builder: no SwarmStore counterpart (its test is not applicable)."""


def _escape_glob_literal(label: str) -> str:
    raise NotImplementedError("an SQLite helper: no SwarmStore counterpart")


def _namespace_match_pattern(path: tuple[str, ...], how: str) -> str:
    raise NotImplementedError("an SQLite helper: no SwarmStore counterpart")


def cleanup() -> None:
    shutil.rmtree(_roots, ignore_errors=True)
