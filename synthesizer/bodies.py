"""Registers the body check of every event type the synthesizer knows (at package import).

Plain-Python checks (``events``) for the bodies agents write per action and for the
configuration; the pydantic models of the other types (``body_models``, the facades'
``compat/models.py``) are imported and built only when a body of one of them is first
appended. So a log rejects malformed bodies of known types, in one line, and a process
that appends or folds (an agent's ``append``, ``board``, ``reinforce``) never imports
pydantic.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from swarmlog.envelope import lazy_model_check, register_check
from synthesizer import events as T
from synthesizer import seedvocab as FE

if TYPE_CHECKING:
    from pydantic import BaseModel


def _synth_model(type_name: str) -> type[BaseModel]:
    from synthesizer.body_models import BODY_MODELS

    return BODY_MODELS[type_name]


def _facade_model(type_name: str) -> type[BaseModel]:
    from synthesizer.compat.models import BODY_MODELS

    return BODY_MODELS[type_name]


def register_all() -> None:
    """Register every known type's check with the envelope (idempotent)."""
    for type_name in T.PLAIN_TYPES:
        register_check(type_name, T.plain_check(type_name))
    for type_name in T.MODELLED:
        register_check(type_name, lazy_model_check(functools.partial(_synth_model, type_name)))
    for type_name in FE.FACADE_OF:
        register_check(type_name, lazy_model_check(functools.partial(_facade_model, type_name)))


register_all()
