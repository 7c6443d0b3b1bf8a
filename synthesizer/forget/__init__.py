"""Forgetting an identity end to end (docs/design.md §9), and the checks that keep erasure honest.

``erase`` runs a forget: the request, the plan, the redaction of every record that names
or quotes the identity, checkpoints and reports; ``planned`` is the ``forget.planned``
record (which seqs a forget rewrites, and as what) that ``verify`` holds redactions to;
``redactions`` says which redactions a forget request accounts for; ``unfinished`` finds
a forget whose rewrite did not complete. The fold's side of erasure is
``synthesizer.state.erasure``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from swarmlog.lazy import lazy_names

if TYPE_CHECKING:
    from synthesizer.forget.erase import ForgetError, Identity, Plan, Result, forget, plan

__all__ = ["ForgetError", "Identity", "Plan", "Result", "forget", "plan"]

__getattr__, __dir__ = lazy_names(__name__, dict.fromkeys(__all__, ".erase"))
