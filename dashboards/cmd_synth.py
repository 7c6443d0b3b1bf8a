"""Commands of this module register on the app (work in progress)."""

from __future__ import annotations
