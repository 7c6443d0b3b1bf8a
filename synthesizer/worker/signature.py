"""Content signatures for exact-duplicate detection.

A signature is a short, stable digest of a memory's *normalised* content, so
two memories that differ only in case, punctuation, whitespace or Unicode
compatibility forms (full-width digits, ligatures, ...) get the same signature.
The synthesizer remembers signatures even after the fact they produced has been
evicted, so a re-shared duplicate is recognised without keeping its text or
its vector around.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["SIGNATURE_VERSION", "normalise_content", "signature"]

#: Bump when the normalisation changes: old signatures would no longer match.
SIGNATURE_VERSION = 1

# Apostrophes join their word ("don't" -> "dont"); every other punctuation
# character separates words ("12-month" -> "12 month").
_APOSTROPHES = frozenset("'\u2019\u02bc\uff07")
_WHITESPACE = re.compile(r"\s+")


class _PunctuationTable(dict[int, "str | None"]):
    """`str.translate` table that classifies each code point once, lazily."""

    def __missing__(self, codepoint: int) -> str | None:
        char = chr(codepoint)
        mapped: str | None
        if char in _APOSTROPHES:
            mapped = None
        elif unicodedata.category(char).startswith("P"):
            mapped = " "
        else:
            mapped = char
        self[codepoint] = mapped
        return mapped


_TABLE = _PunctuationTable()


def normalise_content(text: str) -> str:
    """Return `text` NFKC-normalised, casefolded, punctuation-free, whitespace-collapsed.

    Why: this is the equality used for exact duplicates — changes that do not
    alter the words (case, punctuation, spacing, compatibility forms) vanish.
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    stripped = folded.translate(_TABLE)
    return _WHITESPACE.sub(" ", stripped).strip()


def signature(text: str) -> str:
    """Return the 32-hex-digit blake2b-16 digest of `normalise_content(text)`.

    Why: a fixed-size, deterministic key (across processes and machines) that
    can be stored forever in place of the content itself.
    """
    data = normalise_content(text).encode("utf-8")
    return hashlib.blake2b(data, digest_size=16).hexdigest()
