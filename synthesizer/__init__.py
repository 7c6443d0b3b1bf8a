"""synthesizer: the fold over a swarmlog (facts, memory pool, tiers) and its workers.

Importing the package registers the body models of every event type it knows.
"""

from . import events as events  # registers body models with the envelope
from .config import SynthConfig
from .facts import Evidence, Fact
from .state import SwarmState, apply, fold
from .swarm import Agent, Swarm

__all__ = [
    "Agent",
    "Evidence",
    "Fact",
    "Swarm",
    "SwarmState",
    "SynthConfig",
    "apply",
    "fold",
]
