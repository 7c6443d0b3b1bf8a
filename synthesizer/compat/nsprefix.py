"""Store identities forget by prefix (seed 001), for the facades.

Defined in ``synthesizer/seedvocab.py`` (the fold and the forget plan need it and may not
import this package); re-exported here.
"""

from __future__ import annotations

from synthesizer.seedvocab import covers, pattern

__all__ = ["covers", "pattern"]
