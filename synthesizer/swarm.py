"""The agent-facing API (docs/design.md §8): ``Swarm.open(target)`` and ``swarm.agent(name)``.

A Swarm holds one log handle, a live state folded incrementally from it, and the vector
index of its facts. Agents append events (share, recall, reinforce, feedback); the
synthesizer — a background ``swarmlog synth --follow`` process, or ``swarm.synthesize()``
in-process — turns shared memories into facts.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from swarmlog import (
    CheckpointInfo,
    Event,
    InvalidEvent,
    Log,
    StoredEvent,
    SwarmlogError,
    open_log,
)
from swarmlog.names import check_name
from synthesizer import events as T
from synthesizer.board import Board
from synthesizer.config import SynthConfig
from synthesizer.configlog import settle_config
from synthesizer.errors import UnknownFact
from synthesizer.replay import ErasedSince, fold_into, load_checkpoint_info, state_at
from synthesizer.reserved import check_agent
from synthesizer.retry import PendingAppends
from synthesizer.state import SwarmState

if TYPE_CHECKING:  # numpy, the vector index and the worker load on first use: a process
    # that only reinforces or writes the board never needs them (CLI start time)
    import numpy as np

    from synthesizer.forget.erase import Result as ForgetResult
    from synthesizer.promotion.bootstrap import BootstrapReport
    from synthesizer.promotion.promote import PromotionReport
    from synthesizer.search.embed import Embedder
    from synthesizer.search.factindex import FactIndex
    from synthesizer.search.recall import Hit
    from synthesizer.worker.judging import JudgeWorker
    from synthesizer.worker.synth import Synthesizer


class Swarm:
    """One swarm: a log, its live state, and the agents that write to it.

    The state is folded under the log's configuration (its ``swarm.configured``
    events). ``config``, if given, is recorded on an empty log and must equal the
    configuration of a swarm that has one (else ``ConfigError``). The local embedder is
    the one the configuration names unless ``embedder`` is given.
    """

    def __init__(
        self,
        log: Log,
        config: SynthConfig | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.log = log
        if config is not None:
            settle_config(log, config)
        self._embedder = embedder
        self._embedder_name = ""
        self._index: FactIndex | None = None
        self.appends = PendingAppends(log)
        """Every append of this API goes through it: retries reuse the event ids."""
        loaded = load_checkpoint_info(log)
        self._state = SwarmState() if loaded is None else loaded[0]
        self._ckpt: CheckpointInfo | None = None if loaded is None else loaded[1]
        self._synth: Synthesizer | None = None
        self._judge: JudgeWorker | None = None
        self._board: Board | None = None

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str],
        config: SynthConfig | None = None,
        embedder: Embedder | None = None,
        *,
        bootstrap: str | os.PathLike[str] | None = None,
        bootstrap_query: str | None = None,
        bootstrap_limit: int = 200,
        **log_options: Any,
    ) -> Swarm:
        """Open (creating if needed) the swarm at a directory or ``nats://host:port/STREAM``.

        Without ``config`` the swarm folds under its log's configuration; with one, it
        is recorded on a new swarm, and an existing swarm's must equal it (ConfigError).
        With ``bootstrap`` (a global memory's target) the swarm is seeded with its facts:
        the ``bootstrap_limit`` most relevant to ``bootstrap_query``, or the strongest
        (see ``synthesizer.promotion.bootstrap``; again, it adds nothing twice).
        """
        swarm = cls(open_log(target, **log_options), config, embedder)
        if bootstrap is not None:
            try:
                swarm.bootstrap(bootstrap, bootstrap_query, bootstrap_limit)
            except BaseException:
                swarm.close()
                raise
        return swarm

    def open_sibling(self, target: str | os.PathLike[str], **log_options: Any) -> Swarm:
        """Another swarm (a global memory, say), opened as this one was opened."""
        return type(self).open(target, **log_options)

    def fork(self) -> Swarm:
        """A second ``Swarm`` over this log handle with its own live state (a thread's:
        a swarm's state is not shared between threads)."""
        return type(self)(self.log, embedder=self._embedder)

    def close(self) -> None:
        """Close the log handle (writes nothing: a synthesizer lease this process holds is
        taken over at once on this host when the process has exited, else after the
        lease timeout)."""
        self.log.close()

    def __enter__(self) -> Swarm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def name(self) -> str:
        return self.log.name

    @property
    def config(self) -> SynthConfig:
        """The configuration in force (the log's, as of a fresh fold)."""
        return self.refresh().config

    @property
    def index(self) -> FactIndex:
        """The vector index of live facts, of the embedder the configuration names
        (unless one was given); built on first use, so stats never embed."""
        if self._index is None:
            name = self.refresh().config.embedder
            if self._index is None:
                from synthesizer.search.embed import embedder_for

                emb = self._embedder if self._embedder is not None else embedder_for(name)
                self._index, self._embedder_name = self._open_index(emb), name
        return self._index

    def _open_index(self, emb: Embedder) -> FactIndex:
        """A FactIndex for the folded state: the checkpoint's vectors mapped when they were
        saved with it (only facts after it are embedded), else empty (built on use).

        The recall module is imported here too: a process builds the index to search it,
        and its first recall should not pay the import (a few ms: ~1x a 10k recall)."""
        from synthesizer.checkpoints import vectors
        from synthesizer.search import recall as _recall  # noqa: F401
        from synthesizer.search.factindex import FactIndex

        index = FactIndex(emb)
        ck = self._ckpt
        if (
            ck is not None
            and ck.seq <= self._state.last_seq
            and vectors.attach(self.log, ck, index)
        ):
            for batch in self.log.read_batches(ck.seq + 1, self._state.last_seq):
                index.observe(batch)  # what changed since: rows rewritten, new facts embedded
        return index

    @property
    def embedder(self) -> Embedder:
        return self.index.embedder

    # ------------------------------------------------------------------ state

    def refresh(self) -> SwarmState:
        """Fold what was appended since the last look and return the live state."""
        if self._synth is not None and self._synth.state is not self._state:
            self._state = self._synth.state
        index = self._index
        fold_into(self._state, self.log, observe=None if index is None else index.observe)
        name = self._state.config.embedder
        if self._index is not None and self._embedder is None and name != self._embedder_name:
            # `config set embedder=…`: vectors of another embedder never mix
            from synthesizer.search.embed import embedder_for
            from synthesizer.search.factindex import FactIndex

            self._index, self._embedder_name = FactIndex(embedder_for(name)), name
            if self._synth is not None:
                self._synth.index = self._index
        return self._state

    def observer(self) -> Callable[[list[dict[str, Any]]], None] | None:
        """What a caller that folds stored events into the live state itself hands them to
        (after folding), so the index's ranking columns follow without a rebuild."""
        return None if self._index is None else self._index.observe

    def state(self, at_seq: int | None = None, at_time: float | None = None) -> SwarmState:
        """The state now (live), or at a seq / a time (from the nearest checkpoint)."""
        if at_seq is None and at_time is None:
            return self.refresh()
        return state_at(self.log, at_seq=at_seq, at_time=at_time)

    def synthesize(self) -> int:
        """Run one synthesizer pass in this process; return how many decisions it made.

        The pass releases the lease when it ends: a ``synth --follow`` started meanwhile
        takes over at once instead of standing by for the lease timeout while this
        process lives (the next pass takes the lease again if it is free)."""
        state = self.refresh()
        if self._synth is None:
            from synthesizer.worker.synth import Synthesizer

            self._synth = Synthesizer(self.log, state=state, index=self.index)
        try:
            n = self._synth.run_once()
        finally:
            with contextlib.suppress(SwarmlogError, OSError):  # else: it times out, as before
                self._synth.release()
        if self._synth.state.judging.open and self._synth.state.config.synthesizer.judge:
            self._judge_pass()
        self._state = self._synth.state
        return n

    def _judge_pass(self) -> None:
        """One pass of the judge worker over the open questions (after the decisions,
        never inside them), then fold its answers (see ``synthesizer.worker.judging``)."""
        from synthesizer.worker.judging import JudgeWorker

        assert self._synth is not None
        if self._judge is None:
            self._judge = JudgeWorker(self.log)
        if self._judge.run_once(self._synth.state):
            self._synth.catch_up()

    def checkpoint(self, pinned: bool = False) -> int:
        """Store a checkpoint of the current state, with its vectors beside it (readers
        map them instead of re-embedding); return its seq.

        Retention keeps the newest ``synthesizer.checkpoint_keep``; a ``pinned`` one is
        kept whatever the retention.
        """
        from synthesizer.checkpoints import vectors

        state = self.refresh()
        try:
            info = vectors.checkpoint(self.log, state, self.index, pinned=pinned)
        except ErasedSince:  # folded before an erasure: fold anew, then store that
            self._reload()
            state = self.refresh()
            info = vectors.checkpoint(self.log, state, self.index, pinned=pinned)
        return info.seq

    def forget(
        self,
        agent: str | None = None,
        session: str | None = None,
        thread: str | None = None,
        *,
        by: str = "operator",
        by_session: str | None = None,
        force: bool = False,
        propagate: str | os.PathLike[str] | None = None,
    ) -> ForgetResult:
        """Erase an agent, a session or a thread (docs/design.md §9; synthesizer/forget/erase.py):
        appends ``identity.forgotten`` as ``by``, rewrites the log so no word of the
        identity is left, rebuilds the checkpoints after it. Re-running finishes an
        interrupted forget. Forgetting another identity needs an operator (config
        ``operators``). With ``propagate`` (a global memory this swarm promotes into)
        the identity is erased there too (``synthesizer.promotion.propagate``)."""
        from synthesizer.forget.erase import Identity, forget

        ident = Identity(agent, session, thread)
        res = forget(self, ident, by, by_session, force)
        if propagate is not None:
            from synthesizer.promotion.propagate import propagate as _propagate

            _propagate(self, ident, propagate)
        return res

    def promote(
        self,
        target: str | os.PathLike[str],
        tier: str = "long_term",
        min_support: int = 1,
        dry_run: bool = False,
    ) -> PromotionReport:
        """Promote this swarm's facts (tier at or above ``tier``, ``min_support`` agents,
        active or contested) into the global memory at ``target`` (docs/design.md §12; how:
        ``synthesizer.promotion.promote``). Idempotent; changed facts are updated there."""
        from synthesizer.promotion.promote import promote

        return promote(self, target, tier, min_support, dry_run)

    def bootstrap(
        self, source: str | os.PathLike[str], query: str | None = None, limit: int = 200
    ) -> BootstrapReport:
        """Seed this swarm with global facts from ``source`` (``promotion.bootstrap``)."""
        from synthesizer.promotion.bootstrap import bootstrap

        return bootstrap(self, source, query, limit)

    def _reload(self) -> None:
        """Fold the state anew from the checkpoints and the log (after an erasure
        rewrote it): drops the live state, the vector index and the in-process worker."""
        loaded = load_checkpoint_info(self.log)
        self._state = SwarmState() if loaded is None else loaded[0]
        self._ckpt = None if loaded is None else loaded[1]
        self._index = None
        self._synth = None
        self.refresh()

    @property
    def board(self) -> Board:
        """The compare-and-swap view over facts (see ``synthesizer.board``)."""
        if self._board is None:
            self._board = Board(self.log, self.refresh, appends=self.appends)
        return self._board

    # ------------------------------------------------------------------ swarm-wide events

    def agent(self, name: str, session: str | None = None, thread: str | None = None) -> Agent:
        """A handle that writes as agent ``name`` (in a session and thread, if given)."""
        return Agent(self, name, session, thread)

    def tick(self, agent: str = "swarm") -> StoredEvent:
        """Append one ``pool.tick``: one decay step for every fact's strength."""
        return self.appends.append(Event(agent=agent, type=T.POOL_TICK, body={}))

    def start_session(self, session: str, agent: str = "swarm") -> StoredEvent:
        """Append ``session.started``."""
        return self.appends.append(
            Event(agent=agent, session=session, type=T.SESSION_STARTED, body={})
        )

    def end_session(self, session: str, agent: str = "swarm") -> StoredEvent:
        """Append ``session.ended``: working facts of the session above 1.5 energy promote.

        With ``promotion.when=session_end`` the ended sessions' facts are then harvested
        into ``promotion.target`` in a background thread (``synthesizer.promotion.harvest``): the
        call never waits for the global memory, and what fails is retried later."""
        ev = self.appends.append(Event(agent=agent, session=session, type=T.SESSION_ENDED, body={}))
        if self.refresh().promotion_waiting:
            from synthesizer.promotion.harvest import harvest_in_background

            harvest_in_background(self)
        return ev

    def search(
        self,
        query: str,
        limit: int = 10,
        category: str | None = None,
        **options: Any,
    ) -> list[Hit]:
        """Rank facts for a query without logging a recall (operators, the CLI): the hybrid
        ranking of ``Agent.recall`` (``mode=`` as there); possible duplicates grouped as
        in ``Agent.recall`` unless ``grouped=False``."""
        from synthesizer.search.recall import recall

        state = self.refresh()
        vec = self.index.embedder.embed([query])[0]
        return recall(
            state,
            self.index,
            vec,
            limit=limit,
            category=category,
            now=time.time(),
            text=query,
            **options,
        )


class Agent:
    """An agent's handle: every call appends one event as this agent."""

    def __init__(self, swarm: Swarm, name: str, session: str | None, thread: str | None) -> None:
        self.swarm = swarm
        self.name = check_agent(check_name("agent", name))
        self.session = None if session is None else check_name("session", session)
        self.thread = None if thread is None else check_name("thread", thread)

    def _event(self, type_: str, body: dict[str, Any], **kw: Any) -> Event:
        kw.setdefault("thread", self.thread)
        return Event(agent=self.name, session=self.session, type=type_, body=body, **kw)

    def share(
        self,
        content: str,
        category: str = "discovery",
        importance: float = 0.5,
        *,
        subject: str | None = None,
        value: str | None = None,
        ttl_s: float | None = None,
        thread: str | None = None,
        embedding: Sequence[float] | np.ndarray | None = None,
        embedder: str | None = None,
        causes: list[int] | None = None,
    ) -> StoredEvent:
        """Share a memory (``memory.shared``); the synthesizer makes it a fact or evidence.

        Returns the stored event: its ``seq`` (an int) is the memory's place in the log."""
        body: dict[str, Any] = {"content": content, "category": category, "importance": importance}
        if subject is not None:
            body["subject"] = subject
            body["value"] = value
        if ttl_s is not None:
            body["ttl_s"] = ttl_s
        if embedding is not None:
            from swarmlog.numpyload import np

            vec = self._own_vector(embedding, embedder, np.float64)
            body["embedding"] = vec.tolist()
            body["embedder"] = embedder
        ev = self._event(
            T.MEMORY_SHARED, body, causes=causes, **({"thread": thread} if thread else {})
        )
        return self.swarm.appends.append(ev)

    def _own_vector(
        self, embedding: Sequence[float] | np.ndarray, embedder: str | None, dtype: type
    ) -> np.ndarray:
        """An agent-supplied vector, checked: finite, flat, the embedder's dimension."""
        if embedder is None:
            raise InvalidEvent("an embedding needs the id of its embedder")
        from swarmlog.numpyload import np

        vec: np.ndarray = np.asarray(embedding, dtype=dtype)
        if vec.ndim != 1 or not np.isfinite(vec).all():
            raise InvalidEvent("embedding must be a flat list of finite numbers")
        self._check_dim(embedder, int(vec.shape[0]))
        return vec

    def _check_dim(self, embedder: str, dim: int) -> None:
        if embedder == self.swarm.embedder.id and dim != self.swarm.embedder.dim:
            raise InvalidEvent(
                f"embedding has {dim} dimensions; embedder {embedder!r} makes "
                f"{self.swarm.embedder.dim}"
            )
        for eid, d in self.swarm.index.space.namespaces():
            if eid == embedder and d != dim:
                raise InvalidEvent(
                    f"embedding has {dim} dimensions; embedder {embedder!r} vectors have {d}"
                )

    def recall(
        self,
        query: str,
        limit: int | None = None,
        *,
        category: str | None = None,
        tier: str | None = None,
        thread: str | None = None,
        thread_first: bool = False,
        min_similarity: float | None = None,
        min_score: float | None = None,
        embedding: Sequence[float] | np.ndarray | None = None,
        embedder: str | None = None,
        log: bool = True,
        grouped: bool = True,
        mode: str = "hybrid",
    ) -> list[Hit]:
        """Facts relevant to ``query``, best first; logs ``memory.recalled`` with the hits.

        The ranking is hybrid: the query's words and identifiers (BM25, an identifier
        held whole ranks first) fused with the dense cosine, × strength × importance;
        ``mode="dense"`` ranks by the cosine alone, ``mode="lexical"`` by the words alone.

        Facts linked as possible duplicates show as one hit, the best-ranked wording,
        naming the others (with their agents) in ``hit.also``; ``grouped=False`` lists
        them apart.

        ``thread_first`` ranks the thread's facts first (seed 004's mode: limit defaults
        to 3 and ``min_similarity`` to 0.6 there); otherwise limit defaults to 5.
        """
        if thread_first:
            thread = thread or self.thread
            if thread is None:
                raise InvalidEvent("thread_first needs a thread")
            limit = 3 if limit is None else limit
            min_similarity = 0.6 if min_similarity is None else min_similarity
        limit = 5 if limit is None else limit
        if limit < 1:
            raise InvalidEvent(f"limit must be >= 1, got {limit}")
        from swarmlog.numpyload import np
        from synthesizer.search.embed import check_vector
        from synthesizer.search.recall import RecallQuery, recall

        state = self.swarm.refresh()
        if embedding is not None:
            vec = self._own_vector(embedding, embedder, np.float32)
        else:
            if embedder is not None and embedder != self.swarm.embedder.id:
                raise InvalidEvent(f"no local embedder {embedder!r}; pass embedding=")
            vec = check_vector(self.swarm.embedder.embed([query])[0], self.swarm.embedder.dim)
        q = RecallQuery(
            limit=limit,
            embedder_id=embedder,
            category=category,
            tier=tier,
            thread=thread,
            thread_first=thread_first,
            min_similarity=min_similarity,
            min_score=min_score,
            now=time.time(),
            grouped=grouped,
            text=query,
            mode=mode,
        )
        hits = recall(state, self.swarm.index, vec, q)
        if log:
            body = {"query": query[: T.MAX_CONTENT], "hits": [h.fact.id for h in hits]}
            self.swarm.appends.append(self._event(T.MEMORY_RECALLED, body))
        return hits

    def _known(self, fact_id: str) -> None:
        if fact_id not in self.swarm.refresh().facts:
            raise UnknownFact(fact_id)

    def reinforce(self, fact_id: str) -> bool:
        """Reinforce a fact (strength + boost, slower decay); return whether it counted.

        A reinforcement counts once per agent per fact (seed 000): a repeat returns False
        and appends nothing. (Two racing first calls of one agent both append; the fold
        still counts one.)
        """
        self._known(fact_id)
        if self.name in self.swarm.state().facts[fact_id].reinforced_by:
            return False
        self.swarm.appends.append(self._event(T.MEMORY_REINFORCED, {"target": fact_id}))
        return True

    def feedback(self, fact_id: str, usefulness: float) -> StoredEvent:
        """Record usefulness in [-1, 1] (finite; clamped by the fold) for a fact."""
        if isinstance(usefulness, bool) or not isinstance(usefulness, (int, float)):
            raise InvalidEvent(f"usefulness must be a number, got {usefulness!r}")
        if not math.isfinite(usefulness):
            raise InvalidEvent(f"usefulness must be finite, got {usefulness}")
        self._known(fact_id)
        body = {"target": fact_id, "usefulness": float(usefulness)}
        return self.swarm.appends.append(self._event(T.MEMORY_FEEDBACK, body))
