"""The nesting-depth bound of event bodies, checked before anything recursive runs.

A body nested a thousand levels deep would overflow the interpreter's stack in any
recursive walk (validation, the finiteness check, a fold) and surface as a
RecursionError traceback; a self-referencing body would never end. Bodies are bounded
to ``MAX_DEPTH`` levels (the body object itself is level 1), checked iteratively.
"""

from __future__ import annotations

from typing import Any

from swarmlog.errors import InvalidEvent

MAX_DEPTH = 64
SCALARS = frozenset((str, int, float, bool, type(None)))
"""Types of body values that cannot nest (a body of only these needs no walk)."""


def check_depth(body: dict[str, Any], limit: int = MAX_DEPTH) -> None:
    """Raise InvalidEvent if ``body`` nests deeper than ``limit`` levels (or in a cycle)."""
    if SCALARS.issuperset(map(type, body.values())):
        return  # flat: the common case, one C-level pass
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        obj, level = stack.pop()
        if level > limit:
            raise InvalidEvent(f"body is nested more than {limit} levels deep")
        for v in obj.values() if isinstance(obj, dict) else obj:
            if isinstance(v, (dict, list, tuple)):
                stack.append((v, level + 1))
