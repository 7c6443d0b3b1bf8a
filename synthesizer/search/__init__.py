"""Similarity search over facts: embedders, vector indexes and recall.

``embed`` (the embedder protocol, the hashing embedder, the registry) and ``minilm`` (the
real model, extra ``embed``); ``vindex`` (exact in-memory index), ``quantindex`` (one-bit
codes for large indexes), ``prune`` (exact candidate pruning above a cosine floor),
``factindex`` (the index of live facts kept in step with a state) and ``recall`` (the
ranking a query sees). A face name is never a module name (a submodule import would
replace it). The fold never imports this package (tests/test_imports.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from synthesizer.search.embed import Embedder, embedder_for, register_embedder
    from synthesizer.search.factindex import FactIndex
    from synthesizer.search.recall import Hit

__all__ = ["Embedder", "FactIndex", "Hit", "embedder_for", "register_embedder"]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "Embedder": ".embed",
        "FactIndex": ".factindex",
        "Hit": ".recall",
        "embedder_for": ".embed",
        "register_embedder": ".embed",
    },
)
