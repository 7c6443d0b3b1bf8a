"""Event types of the seeds' facades (pool 000, store 001, bank 004), for the facades.

The names are defined in ``synthesizer/seedvocab.py`` (the fold needs them and may not
import this package); this module re-exports them where the facades look for them.
"""

from __future__ import annotations

from synthesizer.seedvocab import (
    BANK_CONSOLIDATED,
    BANK_PRUNED,
    BANK_STORED,
    FACADE_OF,
    MEMORY_TYPES,
    POOL_RESET,
    POOL_SHARED,
    STORE_ACCESSED,
    STORE_DELETED,
    STORE_FEEDBACK,
    STORE_FORGOTTEN,
    STORE_PUT,
    STORE_SIGNATURE,
)

__all__ = [
    "BANK_CONSOLIDATED",
    "BANK_PRUNED",
    "BANK_STORED",
    "FACADE_OF",
    "MEMORY_TYPES",
    "POOL_RESET",
    "POOL_SHARED",
    "STORE_ACCESSED",
    "STORE_DELETED",
    "STORE_FEEDBACK",
    "STORE_FORGOTTEN",
    "STORE_PUT",
    "STORE_SIGNATURE",
]
