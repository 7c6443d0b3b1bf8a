"""swarmlog.testing: the public contract suite works for a backend that is not ours.

docs/backends.md's dict-backed log (its python block, run as written) passes the suite
under pytest's own runner here and under ``run_contract``; a backend that breaks a
promise fails the check of that promise; the module imports without pytest.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from swarmlog.testing import LogContract, run_contract
from tests.test_docs import python_blocks

ROOT = Path(__file__).resolve().parent.parent
CROSS_PROCESS = {
    "test_batches_are_atomic_for_readers",
    "test_cas_race_eight_processes",
    "test_concurrent_writers_gapless_exactly_once",
    "test_follow_in_another_process",
    "test_id_reused_from_two_processes_at_once",
    "test_idempotent_append_two_processes_at_once",
}


def _docs_backend() -> dict[str, Any]:
    """The names docs/backends.md's block defines (it runs the suite as it loads)."""
    (block,) = [code for _, code in python_blocks(ROOT / "docs" / "backends.md")]
    namespace: dict[str, Any] = {"__name__": "docs_backends"}
    exec(compile(block, "docs/backends.md", "exec"), namespace)
    return namespace


DOCS = _docs_backend()


class TestDocsDictLog(DOCS["TestDictLog"]):  # type: ignore[misc]
    """The docs' backend collected by pytest like any backend author's test class."""


def test_run_contract_passes_the_docs_backend_and_skips_only_cross_process() -> None:
    result = run_contract(DOCS["TestDictLog"])
    assert result.ok, result.failed
    assert set(result.skipped) == CROSS_PROCESS
    checks = {n for n in dir(LogContract) if n.startswith("test_")}
    assert set(result.passed) == checks - CROSS_PROCESS


def test_a_broken_promise_fails_its_check() -> None:
    """A log that ignores expectations fails the expectations check, and only that."""

    class Careless(DOCS["DictLog"]):  # type: ignore[misc]
        def append_many(self, events: Any, expect: Any = None) -> Any:
            return super().append_many(events, None)

    class TestCareless(LogContract):
        def make_log(self) -> Any:
            return Careless()

        def reopen(self, log: Any) -> Any:
            return Careless(log.store, log.name)

    result = run_contract(TestCareless)
    assert set(result.failed) == {"test_expectations"}, result
    assert isinstance(result.failed["test_expectations"], AssertionError)


def test_without_reopen_the_handle_checks_skip() -> None:
    class TestOneHandle(LogContract):
        def make_log(self) -> Any:
            return DOCS["DictLog"]()

    result = run_contract(TestOneHandle, only="idempotent_append")
    assert result.passed == [] and "reopen" in result.skipped["test_idempotent_append"]


def test_the_module_imports_without_pytest() -> None:
    code = (
        "import sys; sys.modules['pytest'] = None; sys.modules['_pytest'] = None\n"
        "import swarmlog.testing as t; assert t.LogContract and t.run_contract\n"
        "assert 'pytest' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
