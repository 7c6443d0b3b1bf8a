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


class MissingExtra(SwarmlogError, RuntimeError):
    """An optional dependency (an extra such as ``embed``) is not installed."""


class UnknownEmbedder(SwarmlogError, ValueError):
    """An embedder name this process cannot build (none registered under it)."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"embedder {name!r} is not available here; available: {', '.join(known)}")
        self.name = name


class ConfigError(SwarmlogError, ValueError):
    """A bad configuration key or value, or a configuration that differs from the log's."""


class SynthInterrupted(SwarmlogError):
    """A synthesizer pass stopped after committing some of its batches (disk full, outage).

    What was committed stays (each batch is atomic and carries its progress mark); the
    rest is decided by the next pass.
    """

    def __init__(self, committed: int, planned: int, upto: int, cause: Exception) -> None:
        super().__init__(
            f"synth stopped: batch {committed + 1} of {planned} failed ({cause}); "
            f"committed {committed} of {planned} batches, up to seq {upto}; "
            "the rest will be decided on the next run"
        )
        self.committed = committed
        self.planned = planned
        self.upto = upto
        self.cause = cause

    def __reduce__(self) -> tuple:
        return (SynthInterrupted, (self.committed, self.planned, self.upto, self.cause))


class InvalidOption(SwarmlogError, ValueError):
    """An option outside its allowed values (a tier, a status, a format, a seq past the end)."""


def check_choice(name: str, value: str | None, allowed: Sequence[str]) -> None:
    """Raise InvalidOption naming the allowed values unless ``value`` is one (or None)."""
    if value is not None and value not in allowed:
        raise InvalidOption(f"invalid {name} {value!r}: use one of {', '.join(allowed)}")
