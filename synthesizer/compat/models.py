"""The pydantic models of the seeds' facade event bodies (``synthesizer/seedvocab.py`` names the
types and registers these, to be built the first time a body of a type is appended).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from synthesizer.body_models import Content, Finite, Importance, Name, Vector, _Body
from synthesizer.compat.events import (
    BANK_CONSOLIDATED,
    BANK_PRUNED,
    BANK_STORED,
    POOL_RESET,
    POOL_SHARED,
    STORE_ACCESSED,
    STORE_DELETED,
    STORE_FEEDBACK,
    STORE_FORGOTTEN,
    STORE_PUT,
    STORE_SIGNATURE,
)

Namespace = Annotated[str, Field(min_length=2, max_length=4096)]
EntryId = Annotated[str, Field(min_length=1, max_length=1024)]
Days = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]


class PoolShared(_Body):
    """A seed-000 share: its own memory unless ``dup_of`` names a live duplicate."""

    content: Content
    category: Name = "general"
    importance: Importance = 0.5
    signature: Annotated[str, Field(max_length=256)] | None = None
    dup_of: Name | None = None


class PoolReset(_Body):
    """Empty the pool; no fields."""


class StorePut(_Body):
    """Entries of one identity namespace (encoded identity); conditional with ``expected``."""

    ns: Namespace
    entries: Annotated[list[dict[str, Any]], Field(min_length=1)]
    expected: Annotated[int, Field(ge=0)] | None = None


class StoreRef(_Body):
    """One entry of a namespace (deleted / accessed)."""

    ns: Namespace
    id: EntryId


class StoreFeedback(_Body):
    """Usefulness of an entry (finite; clamped to [-1, 1] by the fold)."""

    ns: Namespace
    id: EntryId
    usefulness: Finite


class StoreSignature(_Body):
    """A signature recorded for ``seen``."""

    ns: Namespace
    signature: Annotated[str, Field(min_length=1, max_length=1024)]


class StoreForgotten(_Body):
    """Erase one identity namespace."""

    ns: Namespace


class BankStored(_Body):
    """A seed-004 memory of the envelope's agent (and thread)."""

    content: Content
    memory_type: Annotated[str, Field(pattern="^(insight|fact|relationship|conclusion)$")]
    embedding: Vector | None = None
    embedder: Name | None = None
    metadata: dict[str, Any] | None = None


class BankConsolidated(_Body):
    """Merges decided by the facade: ``[[kept id, [absorbed ids]]]``, re-checked by the fold."""

    older_than_days: Days
    merges: list[tuple[Name, list[Name]]]


class BankPruned(_Body):
    """Remove the agent's memories older than the cutoff."""

    older_than_days: Days


BODY_MODELS: dict[str, type[BaseModel]] = {
    POOL_SHARED: PoolShared,
    POOL_RESET: PoolReset,
    STORE_PUT: StorePut,
    STORE_DELETED: StoreRef,
    STORE_ACCESSED: StoreRef,
    STORE_FEEDBACK: StoreFeedback,
    STORE_SIGNATURE: StoreSignature,
    STORE_FORGOTTEN: StoreForgotten,
    BANK_STORED: BankStored,
    BANK_CONSOLIDATED: BankConsolidated,
    BANK_PRUNED: BankPruned,
}
