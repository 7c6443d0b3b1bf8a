"""The lexical side of a LangGraph store search, for ``SwarmStore(ranking="hybrid")``.

The swarm's facts rank by cosine plus a share of BM25 (``synthesizer.search.recall``);
this gives the store's items the same fusion: BM25 over the texts the index config embeds
(the same fields, so the words scored are the words embedded), normalised by the query's
best score, ``LEX_WEIGHT`` of it added to the item's cosine, and an item holding one of
the query's identifiers whole ("ORA-00942", "src/billing/invoice.py") ranked first.

Built per search over the search's candidates (a namespace prefix and filter already
applied), as ``InMemoryStore`` scores its candidates per search: nothing to keep in step
with the log, nothing to checkpoint.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from synthesizer.search.lexical import LexicalIndex, identifiers
from synthesizer.search.recall import LEX_WEIGHT
from synthesizer.storeview import Namespace, StoredItem

Boost = dict[tuple[Namespace, str], tuple[float, int]]
"""(namespace, key) -> (score to add to the cosine, identifiers of the query held whole)."""

RANKINGS = ("dense", "hybrid")


def lexical_boost(
    items: Sequence[StoredItem], text_of: Callable[[StoredItem], str], query: str
) -> Boost:
    """What each item's words add for ``query``; items the query's words miss are absent."""
    index = LexicalIndex()
    by_name: dict[str, StoredItem] = {}
    for i, it in enumerate(items):
        text = text_of(it)
        if text:
            by_name[str(i)] = it
            index.put(str(i), text)
    if not by_name:
        return {}
    found = index.scores(query, len(by_name))
    held: dict[str, int] = {}
    for ident in identifiers(query):
        for name in index.holding(ident, len(by_name)):
            held[name] = held.get(name, 0) + 1
    top = max(found.values(), default=0.0)
    out: Boost = {}
    for name in set(found) | set(held):
        it = by_name[name]
        share = LEX_WEIGHT * found.get(name, 0.0) / top if top > 0.0 else 0.0
        out[(it.namespace, it.key)] = (share, held.get(name, 0))
    return out
