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


class MissingExtra(SwarmlogError, RuntimeError):
    """An optional dependency (an extra such as ``embed``) is not installed."""


class UnknownEmbedder(SwarmlogError, ValueError):
    """An embedder name this process cannot build (none registered under it)."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"embedder {name!r} is not available here; available: {', '.join(known)}")
        self.name = name


class ConfigError(SwarmlogError, ValueError):
    """A bad configuration key or value, or a configuration that differs from the log's."""
