"""Forgetting an identity end to end (docs/design.md §9): intent, redaction plan, checkpoints.

``forget(swarm, Identity(agent="a"))`` (``Swarm.forget``, ``MemoryStore.forget``, ``swarmlog
forget``) does, in this order:

1. **Intent.** Appends ``identity.forgotten`` (a store identity: ``memstore.forgotten``):
   the durable request the fold applies. A re-run finds the intent of an interrupted
   job (one with no event of the identity after it) and reuses it.
2. **Plan** (``plan``): one pass over the log up to the intent.
   * The identity's own events that carry its words become *tombstones*
     (``memory.shared``, the facades' memories and store events, unknown types); its
     own events that also carry effects keep those and lose their words (*scrubbed*:
     ``memory.recalled`` without ``query``, board writes without content, value,
     subject, reason). Events with no words (ticks, session bounds, reinforcements,
     feedback, conflicts) stay as they are: they hold fact ids and numbers, and removing
     them would change everybody else's pool.
   * Derived events are scrubbed: the synthesizer's ``fact.created`` on one of the
     identity's memories loses its content ``signature``; a contest's ``subject`` only the
     identity claimed becomes ``REDACTED``; others' recall queries and board writes that
     quote the identity's words get each quote replaced by ``REDACTED``.
   * An agent forget replaces the agent's name in all its records' envelopes by a
     pseudonym (and the session and thread names only it used); the request itself is
     rewritten last to name the pseudonym (a re-run finds it either way).
3. **Redact** (``Log.redact``), derived events first, then the identity's own: until
   the second step starts, every word a quote check needs is still in the log, so a
   re-run after a crash plans the same scrubbing.
4. **Checkpoints** at or after the first affected seq are deleted (with their vector
   files) and one is written again from a replay of the rewritten log; the Swarm's live
   state and vector index are folded anew.

The fold (erasure.py) drops the identity's facts at the intent, blanks the words of
surviving facts it discovered, and treats tombstones so that the rewritten log replays
to the same facts. What this cannot reach: copies outside the log's directory (exports,
a process's memory until it folds the rewritten log — though never its checkpoints:
replay.save_checkpoint_info refuses a state folded before a redaction — backups).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from swarmlog import Event, Log
from swarmlog.errors import SwarmlogError
from swarmlog.file import RetentionError
from swarmlog.file import crash_step as step
from swarmlog.redaction import Rewrite, is_tombstone, kind_of
from synthesizer import events as T
from synthesizer import seedvocab as FE
from synthesizer.forget import planned
from synthesizer.forget.chosen import PSEUDONYM, REFS, Chosen, pseudonym
from synthesizer.state.erasure import REDACTED

if TYPE_CHECKING:
    from synthesizer.state import SwarmState


class Swarm(Protocol):
    """What a forget uses of a ``Swarm`` (structural: swarm.py imports this module)."""

    log: Log

    def refresh(self) -> SwarmState: ...

    def checkpoint(self, pinned: bool = False) -> int: ...

    def _reload(self) -> None: ...


class ForgetError(SwarmlogError):
    """A forget that cannot be done as asked (nothing named, not allowed, history gone)."""


@dataclass(frozen=True)
class Identity:
    """Who to forget: an agent, a session, a thread, or a store namespace (``ns``: the
    encoded ``MemoryIdentity``, compat/store.py: encode_identity)."""

    agent: str | None = None
    session: str | None = None
    thread: str | None = None
    ns: str | None = None

    def __post_init__(self) -> None:
        given = [x for x in (self.agent, self.session, self.thread, self.ns) if x is not None]
        if len(given) != 1:
            raise ForgetError(
                "name exactly one identity: an agent, a session, a thread or a store identity"
            )
        if self.agent == T.SYNTH_AGENT:
            raise ForgetError(
                "the synthesizer's events are derived: forget the agents whose memories it decided"
            )
        if self.ns is not None and not FE.pattern(self.ns):
            raise ForgetError("a store identity to forget needs at least one field (tenant)")

    def describe(self) -> str:
        for what in ("agent", "session", "thread"):
            v = getattr(self, what)
            if v is not None:
                return f"{what} {v!r}"
        return f"store identity {self.ns}"

    def intent_body(self) -> dict[str, Any]:
        if self.ns is not None:
            return {"ns": self.ns}
        return {k: v for k in ("agent", "session", "thread") if (v := getattr(self, k)) is not None}

    @property
    def intent_type(self) -> str:
        return FE.STORE_FORGOTTEN if self.ns is not None else T.IDENTITY_FORGOTTEN

    def owns(self, d: dict[str, Any]) -> bool:
        """Whether stored event ``d`` is the identity's own."""
        if self.ns is not None:  # by prefix (seed 001, synthesizer/seedvocab.py)
            ns = d["body"].get("ns")
            return d["type"] in _STORE_TYPES and isinstance(ns, str) and FE.covers(self.ns, ns)
        if self.agent is not None:
            return d["agent"] == self.agent
        if self.session is not None:
            return d.get("session") == self.session
        return d.get("thread") == self.thread or d["body"].get("thread") == self.thread


_STORE_TYPES = frozenset(t for t, f in FE.FACADE_OF.items() if f == "store")
_INTENTS = frozenset((T.IDENTITY_FORGOTTEN, FE.STORE_FORGOTTEN))
_NEVER = _INTENTS | {T.SWARM_CONFIGURED, T.SYNTH_PROGRESS, planned.PLANNED}
"""Types never redacted for their words: erasure requests (names only: an agent forget
gives them the agent's pseudonym) and the swarm's configuration."""

_WORDLESS = frozenset(
    (
        T.MEMORY_REINFORCED,
        T.MEMORY_FEEDBACK,
        T.POOL_TICK,
        T.SESSION_STARTED,
        T.SESSION_ENDED,
        T.BOARD_CONFLICT,
        T.FACT_CORROBORATED,
        T.FACT_REVIVED,
        FE.POOL_RESET,
        FE.BANK_CONSOLIDATED,
        FE.BANK_PRUNED,
    )
)
"""Types whose bodies hold no words of their writer (ids, numbers): left as they are."""

_SCRUB = {
    T.MEMORY_RECALLED: ("query",),
    T.FACT_UPDATED: ("content", "value", "subject", "reason"),
    T.FACT_RETRACTED: ("reason",),
    T.FACT_CONTESTED: ("subject",),
    T.FACT_RESOLVED: ("subject", "reason"),
    T.FACT_CREATED: ("signature",),
}
"""Own events that keep their effects and lose these fields (their words)."""

_QUOTABLE = {
    T.MEMORY_RECALLED: ("query",),
    T.FACT_UPDATED: ("content", "value", "reason"),
    T.FACT_RETRACTED: ("reason",),
}
"""Others' events checked for quotes of the identity's words (and the fields)."""

_WORD_FIELDS = ("content", "value", "subject", "query")
MIN_QUOTE = 8
"""Shorter words are not looked for in others' events (they would match everywhere)."""


@dataclass
class Plan:
    """What a forget rewrites: ``derived`` first, then ``own`` (see module docstring)."""

    derived: dict[int, dict[str, Any]] = field(default_factory=dict)
    own: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    first: int = 0
    """First seq affected (redacted now or by an earlier run); 0: none."""
    intent: int = 0
    """Seq of a pending intent for this identity (0: none)."""
    last_own: int = 0
    """Seq of the identity's last own event."""
    matched: int = 0
    """Events of the identity (and derived ones) found, redacted already or not."""
    owned: int = 0
    """Events of the identity in the log (any type; before the intent)."""
    upto: int = 0
    """Last seq read."""
    intent_key: str = ""
    """Keys the pseudonyms: the pending intent's own event id (a request rewritten by an
    earlier version: the id of the record before it)."""
    last_id: str = ""
    """Event id of the last record read (the key when the intent is appended after it)."""
    named: dict[int, tuple[dict[str, Any] | None, str | None, str | None]] = field(
        default_factory=dict
    )
    """An agent's own events in a session or thread: seq -> (the body they end with,
    None for a tombstone; session; thread)."""
    rename: set[tuple[str, str]] = field(default_factory=set)
    """(field, name) of the sessions and threads only the agent wrote in."""
    agent: str | None = None
    """An agent forget: the name its records' envelopes lose (for a pseudonym)."""
    types: dict[int, str] = field(default_factory=dict)
    """Type of each seq the plan may rewrite (what its ``forget.planned`` lists)."""
    listed: bool = False
    """The pending intent's plan is in the log already (planned.py)."""
    chosen: Chosen = field(default_factory=Chosen)
    """The event ids and keys the identity chose (chosen.py)."""

    def touch(self, seq: int) -> None:
        """Count a record the forget affects (now or by an earlier run), the first one's seq."""
        self.matched += 1
        if not self.first or seq < self.first:
            self.first = seq

    def own_changes(self, key: str) -> dict[int, Any]:
        """``own``, plus the renaming of the names only the agent used (``Rewrite``s
        with pseudonyms keyed by ``key``)."""
        out: dict[int, Any] = dict(self.own)
        ch = self.chosen
        for seq, (body, session, thread) in self.named.items():
            env = {
                k: pseudonym(v, key)
                for k, v in (("session", session), ("thread", thread))
                if v is not None and (k, v) in self.rename
            }
            if self.agent is not None:
                env["agent"] = pseudonym(self.agent, key)
            env.update(ch.envelope(seq, key))
            if env or seq in ch.refs:
                out[seq] = Rewrite(ch.body(seq, out.get(seq, body), key), env)
        return out

    def derived_changes(self, key: str) -> dict[int, Any]:
        """``derived``, plus others' records that name a key the identity created (their
        key and fact references renamed, pseudonyms keyed by ``key``)."""
        out: dict[int, Any] = dict(self.derived)
        ch = self.chosen
        for seq, d in ch.refs.items():
            if seq in self.named:
                continue  # (its own: own_changes)
            body = None if is_tombstone(d) else out.get(seq, d["body"])
            out[seq] = Rewrite(ch.body(seq, body, key), ch.envelope(seq, key))
        return out


@dataclass
class Result:
    """What ``forget`` did (the CLI prints it)."""

    identity: str
    intent_seq: int
    redacted: int
    matched: int
    checkpoints_dropped: int
    checkpoint: int
    reports_removed: list[str] = field(default_factory=list)
    """Report files under the root (relative paths) removed: they quoted the log."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _batches(log: Log, lo: int, hi: int | None) -> Iterator[list[dict[str, Any]]]:
    try:
        yield from log.read_batches(lo, hi)
    except RetentionError as e:
        raise ForgetError(
            f"forget needs the whole history, but {e}; it cannot erase what a checkpoint"
            " holds of deleted segments"
        ) from None


@dataclass
class _Seen:
    """What the plan's pass gathers beside the plan: the identity's words and raw
    memories, the subjects and session/thread names it and the others used, and the
    others' records that may quote or derive from it (checked once the words are known)."""

    words: set[str] = field(default_factory=set)
    raws: set[int] = field(default_factory=set)
    mine_subjects: set[str] = field(default_factory=set)
    others_subjects: set[str] = field(default_factory=set)
    mine_names: set[tuple[str, str]] = field(default_factory=set)
    others_names: set[tuple[str, Any]] = field(default_factory=set)
    later: list[dict[str, Any]] = field(default_factory=list)


def plan(log: Log, ident: Identity, upto: int | None = None, writer: str | None = None) -> Plan:
    """The redactions that forget ``ident`` in seqs ``1..upto`` (see module docstring);
    ``intent`` is a pending request for it written by ``writer`` (any writer: None)."""
    p, seen = Plan(agent=ident.agent), _Seen()
    for batch in _batches(log, 1, upto):
        p.upto = batch[-1]["seq"]
        for d in batch:
            prev, p.last_id = p.last_id, d["id"]
            if _request(p, d, ident, writer, prev):
                continue
            if ident.owns(d):
                _see_own(p, seen, d, ident)
            else:
                _see_other(p, seen, d)
    if p.intent and p.intent < p.last_own:
        p.intent = 0  # the identity wrote again after that request: a new one is needed
        p.intent_key = ""
    p.rename = {n for n in seen.mine_names - seen.others_names if not n[1].startswith(PSEUDONYM)}
    for seq, (_, sess, thr) in p.named.items():
        renamed = ident.agent is not None or ("session", sess) in p.rename
        if (renamed or ("thread", thr) in p.rename) and (not p.first or seq < p.first):
            p.first = seq  # a renamed event with no words (its checkpoints hold the name)
    _derive(p, seen)
    return p


def _request(p: Plan, d: dict[str, Any], ident: Identity, writer: str | None, prev: str) -> bool:
    """Read record ``d`` when it is one never redacted for its words (a plan, an erasure
    request, the configuration): the pending intent and its plan, ids chosen by others."""
    t, seq, b = d["type"], d["seq"], d["body"]
    if t == planned.PLANNED:
        p.listed |= bool(p.intent) and b.get("request") == p.intent
        return True
    if t in _INTENTS:
        k = _intent_key(d, ident, writer, prev)
        if k is not None:
            p.intent = seq
            p.intent_key = k
        elif ident.agent is not None and d["agent"] == ident.agent:
            p.named[seq] = (b, None, None)  # its other requests: the envelope
            p.types[seq] = t
        return True
    if t in _NEVER:
        if "key" in d:
            p.chosen.see(d, own=False, keep_id=True)
        return True
    return False


def _see_own(p: Plan, seen: _Seen, d: dict[str, Any], ident: Identity) -> None:
    """One of the identity's own records: its names, ids and words noted, and the
    tombstone or scrubbed body it ends with planned."""
    t, seq, b = d["type"], d["seq"], d["body"]
    p.types[seq] = t
    p.last_own = seq
    p.owned += 1
    if ident.agent is not None:  # every own record loses the name
        sess, thr = d.get("session"), d.get("thread")
        p.named[seq] = (None if is_tombstone(d) else b, sess, thr)
        if sess is not None:
            seen.mine_names.add(("session", sess))
        if thr is not None:
            seen.mine_names.add(("thread", thr))
    if p.chosen.see(d, own=True):  # its id or key (checkpoints hold keys)
        if seq not in p.named:
            p.named[seq] = (None if is_tombstone(d) else b, None, None)
        if t in _WORDLESS:
            p.touch(seq)  # (the others are touched below)
    if t in _WORDLESS:
        return
    p.touch(seq)
    if t == T.MEMORY_SHARED:
        seen.raws.add(seq)
        if isinstance(b.get("subject"), str):
            seen.mine_subjects.add(b["subject"])
    for k in _WORD_FIELDS:
        v = b.get(k)
        if isinstance(v, str) and len(v) >= MIN_QUOTE:
            seen.words.add(v)
    scrub = _SCRUB.get(t)
    if scrub is None:
        if not is_tombstone(d):
            p.own[seq] = None
        return
    nb = {k: v for k, v in b.items() if k not in scrub}
    if nb != b:
        p.own[seq] = nb


def _see_other(p: Plan, seen: _Seen, d: dict[str, Any]) -> None:
    """Another writer's record: redacted earlier, naming what the identity chose, its
    names and subjects noted, kept for the quote check when it may quote or derive."""
    t, seq, b = d["type"], d["seq"], d["body"]
    if kind_of(d) is not None:
        p.touch(seq)  # redacted by an earlier run: its checkpoints may hold it
    if ("key" in d or (p.chosen.keys and t in REFS)) and p.chosen.see(d, own=False):
        p.touch(seq)
        p.types[seq] = t
    if "session" in d:
        seen.others_names.add(("session", d["session"]))
    if "thread" in d:
        seen.others_names.add(("thread", d["thread"]))
    if t == T.MEMORY_SHARED and isinstance(b.get("subject"), str):
        seen.others_subjects.add(b["subject"])
    if t in _QUOTABLE or t in (T.FACT_CREATED, T.FACT_CONTESTED, T.FACT_RESOLVED):
        seen.later.append(d)


def _derive(p: Plan, seen: _Seen) -> None:
    """The others' records that derive from or quote the identity, scrubbed: a fact's
    signature of its memory, a subject only it claimed, a quote of its words."""
    quote = _Quotes(seen.words) if seen.words else None
    only_mine = seen.mine_subjects - seen.others_subjects
    for d in seen.later:
        t, b, seq = d["type"], d["body"], d["seq"]
        nb = dict(b)
        if t == T.FACT_CREATED:
            if b.get("evidence") in seen.raws and "signature" in b:
                del nb["signature"]
        elif t in (T.FACT_CONTESTED, T.FACT_RESOLVED):
            if b.get("subject") in only_mine:
                nb["subject"] = REDACTED
        elif quote is not None:
            for k in _QUOTABLE[t]:
                v = b.get(k)
                if isinstance(v, str):
                    nb[k] = quote.sub(v)
        if nb != b:
            p.touch(seq)
            p.derived[seq] = nb
            p.types[seq] = t


class _Quotes:
    """Finds verbatim quotes of the identity's texts in others' text.

    A quote of a text of three or more words holds each of its inner words whole, so the
    texts are keyed by their longest inner word and a candidate is checked only against
    the texts keyed by one of its own words (one substring test each); shorter texts are
    tested directly. One regex alternation of thousands of texts cost seconds per
    thousand events (measured: 30 s of a 100,000-event forget).
    """

    def __init__(self, words: set[str]) -> None:
        self.keyed: dict[str, list[str]] = {}
        self.loose: list[str] = []
        self.grams: set[tuple[str, ...]] = set()
        for w in words:
            toks = [_norm(t) for t in w.split()]
            for i in range(len(toks) - QUOTE_WORDS + 1):
                self.grams.add(tuple(toks[i : i + QUOTE_WORDS]))
            inner = w.split()[1:-1]
            if inner:
                self.keyed.setdefault(max(inner, key=len), []).append(w)
            else:
                self.loose.append(w)

    def sub(self, text: str) -> str:
        """``text`` with every quote replaced by ``REDACTED`` (longest quotes first)."""
        found = {w for w in self.loose if w in text}
        keyed = self.keyed
        for tok in set(text.split()) & keyed.keys():
            found.update(w for w in keyed[tok] if w in text)
        for w in sorted(found, key=len, reverse=True):
            text = text.replace(w, REDACTED)
        return self._partial(text) if self.grams else text

    def _partial(self, text: str) -> str:
        """``text`` with every run of ``QUOTE_WORDS`` or more consecutive words found in
        one of the identity's texts (case and surrounding punctuation aside) replaced by
        one ``REDACTED``."""
        spans = [(m.start(), m.end(), _norm(m.group())) for m in _WORD.finditer(text)]
        hit = [False] * len(spans)
        grams = self.grams
        for i in range(len(spans) - QUOTE_WORDS + 1):
            if tuple(t for _, _, t in spans[i : i + QUOTE_WORDS]) in grams:
                for j in range(i, i + QUOTE_WORDS):
                    hit[j] = True
        if not any(hit):
            return text
        out: list[str] = []
        pos = 0
        i = 0
        while i < len(spans):
            if not hit[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(spans) and hit[j + 1]:
                j += 1
            out.append(text[pos : spans[i][0]])
            out.append(REDACTED)
            pos = spans[j][1]
            i = j + 1
        out.append(text[pos:])
        return "".join(out)


QUOTE_WORDS = 4
"""A run of this many consecutive words of the identity's texts in another's text is a
quote (a partial quote too), whatever the case and surrounding punctuation."""
_WORD = re.compile(r"\S+")
_PUNCT = "".join(chr(c) for c in range(33, 127) if not chr(c).isalnum())


def _norm(tok: str) -> str:
    return tok.strip(_PUNCT).lower()


def _allowed(swarm: Swarm, ident: Identity, writer: str) -> None:
    """Refuse what the fold would refuse (authz.forget_ok, store_forget_ok): the fold
    must honour the intent before anything is rewritten. A session is its opener's:
    the agent of its first event in the log (``state.owners``)."""
    st = swarm.refresh()
    ops = st.config.operators
    if writer in ops:
        return
    names = ", ".join(ops) or "none"
    if ident.ns is not None:
        if writer == STORE_WRITER:
            return
        raise ForgetError(
            f"forgetting {ident.describe()} needs an operator (writer {writer!r};"
            f" configured operators: {names})"
        )
    if ident.agent is not None and ident.agent == writer:
        return
    if ident.session is not None or ident.thread is not None:
        key = ident.session if ident.session is not None else " " + (ident.thread or "")
        opener = st.owners.get(key)  # (a thread's entry: authz.THREAD_KEY + name)
        if opener == writer:
            return
        raise ForgetError(
            f"forgetting {ident.describe()} needs the agent that opened it"
            f" ({opener or 'nobody'!s}) or an operator (writer {writer!r};"
            f" configured operators: {names})"
        )
    raise ForgetError(
        f"forgetting {ident.describe()} needs an operator (writer {writer!r};"
        f" configured operators: {names})"
    )


STORE_WRITER = "memstore"
"""The MemoryStore facade's writer: it forgets store identities (authz.store_forget_ok)."""


def forget(
    swarm: Swarm,
    ident: Identity,
    writer: str = "operator",
    session: str | None = None,
    force: bool = False,
) -> Result:
    """Forget ``ident`` in ``swarm`` (see module docstring); safe to re-run. An identity
    with no event in the log is refused (a typo forgets nothing) unless ``force``."""
    from synthesizer.checkpoints import vectors

    log = swarm.log
    _allowed(swarm, ident, writer)
    agent = writer
    p = plan(log, ident, writer=agent)
    if not p.owned and not p.intent and not force:
        raise ForgetError(
            f"no events by {ident.describe()} in the log: nothing to forget (check the"
            " name; --force records the request anyway)"
        )
    seq = p.intent
    key = p.intent_key
    listed = p.listed
    if not seq:
        ev = Event(
            agent=agent,
            session=session if ident.ns is None else None,
            type=ident.intent_type,
            body=ident.intent_body(),
            id=intent_id(p.last_id, agent, ident),
        )
        seq = log.append(ev).seq or 0
        key = ev.id
        step()
        if seq != p.upto + 1:  # others wrote meanwhile: plan again up to the intent
            p = plan(log, ident, seq)
            key = p.intent_key
    elif p.upto > seq:
        p = plan(log, ident, seq)
    own = p.own_changes(key)
    derived = p.derived_changes(key)
    alias = pseudonym(ident.agent, key) if ident.agent is not None else writer
    last: dict[int, Any] = {}
    if ident.agent is not None:  # last: a re-run until here still finds it by the name
        last[seq] = Rewrite({"agent": alias}, {"agent": alias} if writer == ident.agent else {})
    if not listed:  # the plan goes first: verify accepts only what it lists
        types = {q: p.types[q] for q in (*derived, *own)}
        types.update({q: ident.intent_type for q in last})
        planned.append(log, seq, alias if writer == ident.agent else writer, types)
        step()
    n = log.redact(derived) if derived else 0
    step()
    n += log.redact(own) if own else 0
    step()
    if last:
        n += log.redact(last)
        step()
    dropped = 0
    if p.first:
        dropped = log.checkpoints.invalidate_after(p.first)
        step()
        vectors.prune(log)
    reports = remove_reports(log)
    swarm._reload()
    ck = 0
    if p.first and max((i.seq for i in log.checkpoints.list()), default=0) < seq:
        ck = swarm.checkpoint()  # rebuilt from the rewritten log
    return Result(ident.describe(), seq, n, p.matched, dropped, ck, reports)


def intent_id(prev: str, writer: str, ident: Identity) -> str:
    """The event id of a new forget request after the record with id ``prev``: a hash
    of that id, the writer and the request, so the same forget of the same log makes
    the same request (and so the same pseudonyms: the id keys them), and no name of
    the identity shows in it."""
    doc = "\0".join((prev, writer, ident.intent_type, repr(sorted(ident.intent_body().items()))))
    h = hashlib.blake2b(doc.encode(), digest_size=16, person=b"swarmlog-forget").hexdigest()
    return "forget-" + h


def _intent_key(d: dict[str, Any], ident: Identity, writer: str | None, prev: str) -> str | None:
    """The key of the pseudonyms when request ``d`` (after the record with id ``prev``)
    is one for ``ident`` by ``writer`` (any: None), as appended or as an agent forget
    leaves it (naming the pseudonym); None when it is not. The key is the request's own
    id (a request an earlier version rewrote: the id of the record before it)."""
    if d["type"] != ident.intent_type:
        return None
    body = d["body"]
    if body == ident.intent_body():
        return d["id"] if writer is None or d["agent"] == writer else None
    if ident.agent is None or (
        writer is not None and d["agent"] not in (writer, body.get("agent"))
    ):
        return None
    for key in (d["id"], prev):
        if body == {"agent": pseudonym(ident.agent, key)}:
            return key
    return None


REPORT_DIR = "metrics"
"""Where the project writes reports under a root (seed 002's
``metrics/swarm_memory_dashboard.md``, ``swarmlog demo --keep``)."""


def remove_reports(log: Log) -> list[str]:
    """Delete the report files under the log's root: they are rendered from the log and
    may quote a forgotten identity (the CLI renders the dashboard report again)."""
    import os

    root = log.local_dir()
    if root is None:
        return []
    d = os.path.join(str(root), REPORT_DIR)
    out: list[str] = []
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return out
    for name in names:
        path = os.path.join(d, name)
        if os.path.isfile(path) and not os.path.islink(path):
            os.unlink(path)
            out.append(f"{REPORT_DIR}/{name}")
    return out


__all__ = ["ForgetError", "Identity", "Plan", "Result", "forget", "plan"]
