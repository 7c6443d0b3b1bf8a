"""The seeds' argument objects, read into the facades' keyword arguments.

Seed 000 (the pool) takes a nested config object (``{decay: {rate}, eviction:
{threshold}, capacity: {maxMemories}, reinforcement: {boost, maxStrength}}``) and
``share(agentId, {content, category, importance})``; seed 001 (the store) takes an
options object in ``search(identity, query, {tiers, minScore, embedderId})`` and
``list(identity, {limit, cursor, tiers})``. Both spellings work (camelCase as in the
seeds, snake_case as in Python); an unknown key is a ValueError naming it, never
silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_POOL = {
    ("decay", "rate"): "decay_rate",
    ("eviction", "threshold"): "eviction_threshold",
    ("capacity", "maxMemories"): "capacity",
    ("capacity", "max_memories"): "capacity",
    ("reinforcement", "boost"): "boost",
    ("reinforcement", "maxStrength"): "max_strength",
    ("reinforcement", "max_strength"): "max_strength",
}


def pool_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """Seed 000's (partial) ``MemoryPoolConfig`` -> ``PoolConfig`` fields."""
    out: dict[str, Any] = {}
    for group, inner in config.items():
        if not isinstance(inner, Mapping):
            raise ValueError(f"pool config {group!r} must be an object, got {inner!r}")
        for key, value in inner.items():
            if (group, key) == ("decay", "interval"):
                if value != 1:
                    raise ValueError(
                        "pool config decay.interval must be 1: each decay() call is one tick"
                    )
                continue
            name = _POOL.get((group, key))
            if name is None:
                known = sorted({f"{g}.{k}" for g, k in _POOL} | {"decay.interval"})
                raise ValueError(f"unknown pool config {group}.{key} (known: {', '.join(known)})")
            if name in out:
                raise ValueError(f"pool config {group}.{key} given twice")
            out[name] = value
    return out


def share_input(
    data: Mapping[str, Any], category: str, importance: float
) -> tuple[str, str, float]:
    """Seed 000's ``ShareMemoryInput`` -> (content, category, importance)."""
    unknown = sorted(set(data) - {"content", "category", "importance"})
    if unknown:
        raise ValueError(
            f"unknown share input field {unknown[0]!r} (known: content, category, importance)"
        )
    if "content" not in data:
        raise ValueError("share input needs content")
    return (
        data["content"],
        data.get("category", category),
        data.get("importance", importance),
    )


SEARCH_OPTIONS = {
    "k": "k",
    "topK": "k",
    "top_k": "k",
    "limit": "k",
    "tiers": "tiers",
    "minScore": "min_score",
    "min_score": "min_score",
    "embedderId": "embedder_id",
    "embedder_id": "embedder_id",
}
LIST_OPTIONS = {"limit": "limit", "cursor": "cursor", "tiers": "tiers"}


def options(opts: Mapping[str, Any], known: Mapping[str, str], what: str) -> dict[str, Any]:
    """An options object -> keyword arguments (``known``: spelling -> keyword)."""
    out: dict[str, Any] = {}
    for key, value in opts.items():
        name = known.get(key)
        if name is None:
            raise ValueError(f"unknown {what} option {key!r} (known: {', '.join(known)})")
        if name in out:
            raise ValueError(f"{what} option {name} given twice")
        if value is not None:
            out[name] = value
    return out


__all__ = ["LIST_OPTIONS", "SEARCH_OPTIONS", "options", "pool_settings", "share_input"]
