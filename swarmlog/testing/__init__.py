"""Test helpers for backend authors: the Log contract as a reusable suite.

``LogContract`` (subclass it with a ``make_log``) and ``run_contract`` (run it without
pytest) live in ``swarmlog.testing.contract``; see docs/backends.md. Importing this
package needs no test framework.
"""

from __future__ import annotations

from swarmlog.testing.contract import ContractResult, LogContract, raises, run_contract

__all__ = ["ContractResult", "LogContract", "raises", "run_contract"]
