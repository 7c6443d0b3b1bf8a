"""A digest of what a fold's facts mean, for comparing folds that split work differently."""

from __future__ import annotations

import hashlib

import orjson

from synthesizer.state.facts import Fact
from synthesizer.state.swarmstate import SwarmState


def facts_digest(state: SwarmState) -> str:
    """A digest of the facts' meaning (ids, content, status, evidence, support).

    Unlike ``state.digest()`` it leaves out seqs of the synthesizer's own events (fact
    versions), which depend on how its work was split into batches.
    """
    rows: list[object] = []
    for fid in sorted(state.facts):
        f: Fact = state.facts[fid]
        rows.append(
            [
                fid,
                f.content,
                f.status,
                f.value,
                f.subject,
                [e.seq for e in f.evidence],
                f.support,
                f.tier,
            ]
        )
    rows.append(sorted(state.signatures.items()))
    return hashlib.blake2b(orjson.dumps(rows), digest_size=16).hexdigest()
