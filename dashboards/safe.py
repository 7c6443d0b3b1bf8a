"""Printing what agents wrote: one place makes stored content safe for a terminal.

Agent content (memory text, values, keys, bodies) goes to an operator's terminal, so a
control character in it could move the cursor, retitle the window or hide text. Every
face that prints such content passes it through ``text`` (one line, control characters
shown as escapes), and formats stored timestamps with ``when``, which never raises: a
log may hold any ts (an old log, a hostile writer), and a face must still show it.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))  # embeddings, overrides, isolates
_ESCAPES: dict[int, str] = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_ESCAPES.update({c: f"\\u{c:04x}" for c in _BIDI})
_ESCAPES.update({0x0A: "\\n", 0x0D: "\\r", 0x09: " "})


def text(s: object) -> str:
    """``s`` as one printable line: C0/C1 control characters and bidi overrides escaped."""
    return str(s).translate(_ESCAPES)


def when(ts: float, pattern: str = "%Y-%m-%d %H:%M:%S") -> str:
    """A stored ts in UTC by ``pattern``; one that no calendar holds is shown as a number."""
    try:
        if not math.isfinite(ts):
            raise ValueError
        return datetime.fromtimestamp(ts, tz=timezone.utc).strftime(pattern)
    except (OverflowError, ValueError, OSError, TypeError):
        return f"ts={ts!r}"
