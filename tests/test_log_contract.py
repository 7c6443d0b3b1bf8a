"""The Log contract (swarmlog/contract.py, R1-R6), checked on every backend with real processes.

The checks are the public suite ``swarmlog.testing.LogContract``, the one a backend author
runs on a new backend (docs/backends.md); here it runs on each backend of ``log_target``
(``SWARMLOG_BACKENDS``, tests/conftest.py). Only ``open_log(target)`` and the public Log
methods are used, so the JetStream backend and the in-process MemoryLog (the reference)
are held to the same promises as FileLog. Checks that need other processes skip MemoryLog.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swarmlog import Log
from swarmlog.testing import LogContract
from tests.conftest import LogTarget


class TestLogContract(LogContract):
    @pytest.fixture(autouse=True)
    def _backend(self, log_target: LogTarget) -> None:
        self.log_target = log_target

    def make_log(self) -> Log:
        return self.log_target.open()

    def reopen(self, log: Log) -> Log:
        return self.log_target.open()

    def target(self, log: Log) -> str | None:
        return None if self.log_target.memory is not None else self.log_target.where

    @pytest.mark.slow
    def test_concurrent_writers_gapless_exactly_once(self) -> None:
        """The acceptance size: 4 x 10,000 single appends + 2 x 100 batches of 100."""
        super().test_concurrent_writers_gapless_exactly_once()

    def test_concurrent_writers_small(self) -> None:
        """The same race at a size the fast tier affords: 4 x 500 singles, 2 x 5 batches."""
        self.concurrent_singles, self.concurrent_batches = 500, 5
        super().test_concurrent_writers_gapless_exactly_once()


def test_capabilities_are_asked_of_the_log(log_target: LogTarget) -> None:
    """``Log.compactable`` and ``CheckpointStore.local_dir``: a FileLog compacts and keeps
    its checkpoints as local files; the other backends give the documented "no"."""
    with log_target.open() as log:
        store = log.checkpoints
        if log_target.backend == "file":
            assert log.compactable()
            assert store.local_dir() == Path(log_target.where) / "checkpoints"
            store.save(0, b"x", "test/1")
            assert [p.name for p in Path(log_target.where, "checkpoints").iterdir()]
        elif log_target.backend == "nats":  # a cache of the object store's side files
            assert not log.compactable()
            cache = store.local_dir()
            assert cache is not None and cache.is_dir()
            assert str(cache).startswith(os.environ["SWARMLOG_CACHE_DIR"])
        else:
            assert not log.compactable()
            assert store.local_dir() is None
