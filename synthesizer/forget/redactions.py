"""Redactions that a forget request accounts for (tamper evidence for erasure).

A redacted record keeps the chain value of the original and names it in its marker
(swarmlog/chain.py), so the chain walk cannot tell a redaction made by ``forget`` from
one made by anyone else with write access: a direct ``Log.redact`` call, or a record
rewritten by hand into a marker. ``forget`` always leaves one more thing: its request,
the ``identity.forgotten`` (or store-forgotten) event that names who was forgotten. It
is appended before anything is rewritten; an agent forget rewrites it last to name the
agent's pseudonym (``intent_ok``), and until then records already renamed are explained
by the pseudonym the request's position gives (``forget.pseudonym``).

So a redaction is *explained* when such a request is in the log and:

* a tombstone (an identity's own event, body erased) is owned by a requested identity,
  judged on what the redaction kept: the envelope's agent, session or thread. An event
  whose thread or store namespace lived only in its body is explained by any request
  of that kind, since the body is gone;
* a scrubbed record needs some request, and must look like what ``forget`` makes
  (``scrub_ok``): an own event of a type forget scrubs (``forget._SCRUB``) by a
  requested identity, with every scrubbed field gone; an own wordless event of a
  requested agent (its session or thread renamed); or another's event of a type forget
  scrubs quotes in, showing the scrub (a ``[redacted]`` in a quotable field, a
  ``fact.created`` without its signature, a contest's subject ``[redacted]``). A
  scrubbed ``memory.shared`` (forget only ever tombstones memories) or any other type is
  unexplained, whatever its envelope says. The words that matched are gone, so a
  record edited to mimic exactly such a scrub still passes (docs/trust.md).

Stronger, where every request in the log has its plan (``forget.planned``, appended
before the rewrite, planned.py): a redacted record is explained only if a plan lists
its seq with its type, whatever its form (``_against_plans``).

``unexplained`` lists the others; ``swarmlog verify`` reports them as problems.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from swarmlog import Log
from swarmlog.file import RetentionError
from swarmlog.redaction import SCRUBBED, TOMBSTONE, kind_of
from synthesizer import events as T
from synthesizer import seedvocab as FE
from synthesizer.forget import planned
from synthesizer.forget.chosen import PSEUDONYM, pseudonym
from synthesizer.forget.erase import (
    _QUOTABLE,
    _SCRUB,
    _WORDLESS,
    ForgetError,
    Identity,
)
from synthesizer.state.erasure import REDACTED

_INTENTS = frozenset((T.IDENTITY_FORGOTTEN, FE.STORE_FORGOTTEN))
_STORE_TYPES = frozenset(t for t, f in FE.FACADE_OF.items() if f == "store")
RETENTION_NOTE = "redactions not checked"
MAX_LISTED = 20
"""Problems listed one by one; the rest are counted in one line."""


def requested(d: dict[str, Any]) -> Identity | None:
    """The identity a forget request names (None: not a well-formed request)."""
    body = d.get("body")
    if not isinstance(body, dict):
        return None
    fields = {
        k: body[k] for k in ("agent", "session", "thread", "ns") if isinstance(body.get(k), str)
    }
    try:
        return Identity(**fields)
    except (ForgetError, TypeError):
        return None


def _explained(d: dict[str, Any], wanted: list[Identity]) -> bool:
    """Whether tombstone ``d`` is owned by one of the requested identities."""
    if any(ident.owns(d) for ident in wanted if ident.ns is None):
        return True
    if d.get("type") in _STORE_TYPES and any(i.ns is not None for i in wanted):
        return True  # the namespace was in the erased body
    return d.get("thread") is None and any(i.thread is not None for i in wanted)


_DERIVED = frozenset((T.FACT_CREATED, T.FACT_CONTESTED, T.FACT_RESOLVED))


def scrub_ok(d: dict[str, Any], wanted: list[Identity]) -> bool:
    """Whether scrubbed record ``d`` is one a forget of ``wanted`` makes (module docstring)."""
    t = d.get("type")
    body = d.get("body")
    if not isinstance(body, dict) or not isinstance(t, str):
        return False
    own = any(i.owns(d) for i in wanted if i.ns is None)
    if own and t in _WORDLESS:
        return True  # (names renamed, body as it was)
    if own and t in _SCRUB:
        return not any(k in body for k in _SCRUB[t])
    if t == T.FACT_CREATED:
        return "signature" not in body
    if t in (T.FACT_CONTESTED, T.FACT_RESOLVED):
        return body.get("subject") == REDACTED
    if t in _QUOTABLE:
        return any(REDACTED in str(body.get(k, "")) for k in _QUOTABLE[t])
    return False


def intent_ok(d: dict[str, Any], wanted: list[Identity]) -> bool:
    """Whether rewritten request ``d`` is one an agent forget leaves: its own request
    naming the agent's pseudonym, or another request by the forgotten agent (its
    envelope's name replaced by the pseudonym another request names)."""
    body = d.get("body")
    if not isinstance(body, dict):
        return False
    alias = body.get("agent")
    if list(body) == ["agent"] and isinstance(alias, str) and alias.startswith(PSEUDONYM):
        return True
    who = d.get("agent")
    return isinstance(who, str) and who.startswith(PSEUDONYM) and Identity(agent=who) in wanted


def _against_plans(
    redacted: list[dict[str, Any]], plans: dict[int, str], strict: bool
) -> list[tuple[int, str]]:
    """Problems of redacted records judged by the plans (planned.py): a listed seq
    must hold the listed type; an unlisted one is a problem when every request has a
    plan (``strict``; else the form checks judge it)."""
    bad: list[tuple[int, str]] = []
    for d in redacted:
        t = plans.get(d["seq"])
        if t is not None and t != d["type"]:
            bad.append((d["seq"], f"a redacted {d['type']} that a forget's plan lists as {t}"))
        elif t is None and strict:
            bad.append(
                (
                    d["seq"],
                    f"a redacted {d['type']} by agent {d['agent']!r} that no forget's plan lists",
                )
            )
    return bad


@dataclass
class _Redacted:
    """What one pass over the log finds: the identities requested, the redacted records
    by kind, the requests (with the seqs of those that have a plan) and the plans'
    listed types (seq -> type, as forget's plans list them)."""

    wanted: list[Identity] = field(default_factory=list)
    tombs: list[dict[str, Any]] = field(default_factory=list)
    scrubbed: list[dict[str, Any]] = field(default_factory=list)
    intents: list[dict[str, Any]] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    plans: dict[int, str] = field(default_factory=dict)
    with_plan: set[int] = field(default_factory=set)

    def see(self, d: dict[str, Any], before: str) -> None:
        """Note record ``d`` (``before``: the id of the record before it)."""
        kind = kind_of(d)
        if d["type"] == planned.PLANNED and kind is None:
            got = planned.listed(d["body"])
            if got is not None:
                self.with_plan.add(got[0])
                self.plans.update(got[1])
            return
        if d["type"] in _INTENTS and kind != TOMBSTONE:
            self.requests.append(d["seq"])
            ident = requested(d)
            if ident is not None:
                self.wanted.append(ident)
                if ident.agent is not None and not ident.agent.startswith(PSEUDONYM):
                    # (a rewrite under way: records already carry the pseudonym)
                    self.wanted += [
                        Identity(agent=pseudonym(ident.agent, k)) for k in (d["id"], before)
                    ]
            if kind == SCRUBBED:
                self.intents.append(d)
        elif kind == TOMBSTONE:
            self.tombs.append(d)
        elif kind == SCRUBBED:
            self.scrubbed.append(d)


def unexplained(log: Log) -> list[str]:
    """One line per redacted record no forget request in ``log`` accounts for (and a
    last line counting any past ``MAX_LISTED``); empty when every redaction is explained.

    Reads the whole log once. Without the whole history (segments deleted by retention)
    nothing is judged (a request may be among the deleted records): the one line that
    ``RETENTION_NOTE`` starts says so, for the caller to report as a note.
    """
    found = _Redacted()
    prev = ""
    try:
        for batch in log.read_batches(1):
            for d in batch:
                prev, before = d["id"], prev
                found.see(d, before)
    except RetentionError as e:
        return [f"{RETENTION_NOTE}: {e}"]
    bad = sorted(_problems(found))
    out = [f"seq {s}: {why}" for s, why in bad[:MAX_LISTED]]
    if len(bad) > MAX_LISTED:
        out.append(f"... and {len(bad) - MAX_LISTED} more unexplained redacted record(s)")
    return out


def _problems(found: _Redacted) -> list[tuple[int, str]]:
    """(seq, why) of each redacted record neither a plan nor the form checks explain."""
    requests, plans, wanted = found.requests, found.plans, found.wanted
    strict = bool(requests) and all(r in found.with_plan for r in requests)
    bad = _against_plans([*found.tombs, *found.intents, *found.scrubbed], plans, strict)
    tombs, intents, scrubbed = (
        [d for d in ds if d["seq"] not in plans and not strict]
        for ds in (found.tombs, found.intents, found.scrubbed)
    )
    bad += [
        (
            d["seq"],
            f"a tombstone ({d['type']} by agent {d['agent']!r}) that no forget request"
            " in the log names",
        )
        for d in tombs
        if not _explained(d, wanted)
    ]
    bad += [
        (d["seq"], f"a rewritten forget request by agent {d['agent']!r} that no forget makes")
        for d in intents
        if not intent_ok(d, wanted)
    ]
    if not wanted:
        bad += [(d["seq"], "a scrubbed record, and no forget request in the log") for d in scrubbed]
    else:
        bad += [
            (
                d["seq"],
                f"a scrubbed {d['type']} by agent {d['agent']!r} that no forget makes"
                " (forget tombstones memories and scrubs only its own fields and quotes)",
            )
            for d in scrubbed
            if not scrub_ok(d, wanted)
        ]
    return bad
