"""The merge rule: are two statements one fact, rival facts, or different facts?

``statement`` reads a statement into tokens (``parse``); ``rule`` aligns two statements'
tokens and ``span`` judges each span where they differ (a ``Span``: a rewording, or a
slot and which), for a verdict (``compare`` -> ``Verdict``), reading words with
``lexicon`` (WordNet's files, offline) and ``wordclass`` (every closed word class:
numbers, units, negations, hedges, determiners, function words); ``judge`` is the optional
pluggable judge for the pairs the rule cannot settle. Pure functions: no log, no state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from synthesizer.merge.rule import Verdict, compare

__all__ = ["Verdict", "compare"]

__getattr__, __dir__ = lazy_names(__name__, {"Verdict": ".rule", "compare": ".rule"})
