"""Setting up a swarm's JetStream stream: its configuration, creation and reconfiguration.

What ``swarmlog init --url`` runs (``ensure_stream``) and what ``JetStreamLog`` runs when
it opens a stream (``ensure``). The settings and why are in ``ensure_stream``'s docstring.
"""

from __future__ import annotations

from typing import Any

from swarmlog.envelope import DEFAULT_LIMITS, Limits
from swarmlog.errors import LogUnavailable
from swarmlog.jetstream.client import JsClient
from swarmlog.jetstream.loop import LoopThread
from swarmlog.jetstream.proto import (
    ERR_STREAM_NAME_IN_USE,
    FORMAT,
    ApiError,
    Target,
    parse_target,
)
from swarmlog.jetstream.stampfeed import stamp_config
from swarmlog.jetstream.subjects import META_SUBJECTS, PER_AGENT, keep_layout
from swarmlog.names import check_name, new_swarm_id

DEFAULT_DUPLICATE_WINDOW = 600.0
"""Seconds the server remembers event ids (idempotency horizon; costs server memory)."""
META_FORMAT = "swarmlog.format"
META_NAME = "swarmlog.name"
META_ID = "swarmlog.id"


def stream_config(
    stream: str,
    name: str,
    replicas: int,
    duplicate_window: float,
    limits: Limits,
    swarm_id: str = "",
) -> dict[str, Any]:
    """The JetStream configuration of a swarm's event stream (``swarm_id``: its identity)."""
    meta = {META_FORMAT: FORMAT, META_NAME: name, META_SUBJECTS: PER_AGENT}  # subjects.py
    if swarm_id:
        meta[META_ID] = swarm_id
    return {
        "name": stream,
        "subjects": [f"swarmlog.{stream}.>"],
        "retention": "limits",
        "storage": "file",
        "discard": "old",
        "max_msgs": -1,
        "max_bytes": -1,
        "max_age": 0,
        "max_msgs_per_subject": -1,
        "max_msg_size": limits.max_event + 4096,
        "num_replicas": replicas,
        "duplicate_window": int(duplicate_window * 1e9),
        "deny_delete": False,  # erasure deletes messages with erase (redact.py)
        "deny_purge": True,
        "allow_rollup_hdrs": False,
        "allow_direct": True,
        "allow_atomic": True,
        "republish": stamp_config(stream),  # appends' server time, pushed (stampfeed.py)
        "metadata": meta,
    }


async def ensure(
    c: JsClient,
    *,
    create: bool,
    update: bool,
    name: str | None,
    replicas: int,
    duplicate_window: float,
    limits: Limits,
) -> dict[str, Any]:
    """The stream's info, creating (or, with ``update``, reconfiguring) it as asked."""
    info = await c.stream_info()
    if info is None:
        if not create:
            raise LogUnavailable(
                f"no swarm stream {c.stream} at {c.target.url} "
                f"(run 'swarmlog init --url {c.target.servers[0]}/{c.stream}')"
            )
        cfg = stream_config(
            c.stream, name or c.stream, replicas, duplicate_window, limits, new_swarm_id()
        )
        try:
            await c.api(f"STREAM.CREATE.{c.stream}", cfg)
        except ApiError as e:
            if e.err_code != ERR_STREAM_NAME_IN_USE:  # created meanwhile by somebody else
                raise LogUnavailable(f"cannot create stream {c.stream}: {e.description}") from None
        info = await c.stream_info()
        if info is None:
            raise LogUnavailable(f"stream {c.stream} vanished right after creation")
    check_ours(info, c.stream)
    if update:
        cur = info["config"]
        want = stream_config(
            c.stream,
            name or cur["metadata"][META_NAME],
            replicas,
            duplicate_window,
            limits,
            cur["metadata"].get(META_ID, ""),  # the identity never changes
        )
        new = {**cur, **{k: v for k, v in want.items() if k not in ("subjects", "storage")}}
        new = keep_layout(new, cur)  # the subject layout never changes (subjects.py)
        new["deny_delete"] = bool(cur.get("deny_delete"))  # the server cannot lift it
        if new != cur:
            try:
                await c.api(f"STREAM.UPDATE.{c.stream}", new)
            except ApiError as e:
                raise LogUnavailable(f"cannot update stream {c.stream}: {e.description}") from None
            info = await c.stream_info() or info
    return info


def check_ours(info: dict[str, Any], stream: str) -> None:
    """LogUnavailable unless the stream's metadata marks it as a swarmlog stream."""
    cfg = info.get("config", {})
    meta = cfg.get("metadata") or {}
    if meta.get(META_FORMAT) != FORMAT or META_NAME not in meta:
        raise LogUnavailable(
            f"stream {stream} exists but is not a swarmlog stream "
            f"(metadata {META_FORMAT}={meta.get(META_FORMAT)!r})"
        )


def ensure_stream(
    target: str,
    *,
    name: str | None = None,
    replicas: int = 1,
    duplicate_window: float = DEFAULT_DUPLICATE_WINDOW,
    timeout: float = 5.0,
    limits: Limits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Create or reconfigure the event stream of ``target``; return its configuration.

    What it sets, and why:

    - ``replicas`` (``num_replicas``): 1 for one server; 3 on a cluster so that losing a
      node loses no acknowledged event (an append returns once a quorum stored it).
    - ``duplicate_window``: how long the server remembers event ids; a retry within it
      is recognised and answered with the stored original (the idempotency horizon).
    - ``deny_purge``: the log is append-only; nobody can purge events through the API.
    - ``deny_delete`` off: erasure (``redact``, redact.py) deletes single messages with
      erase and serves their redaction records in their place; a delete by anything
      else leaves a seq with no record, which readers and ``verify`` report. Streams made
      before erasure keep ``deny_delete`` on (the server cannot lift it) and cannot erase.
    - ``republish`` (headers only, on ``swarmlog-stamp.<STREAM>.…``): the seq and stored
      time of each message reach its writer before the PubAck, so an append learns the
      server's time without a second request (stampfeed.py).
    - ``allow_atomic`` (atomic batches for ``append_many``), ``allow_direct`` (fast reads),
      no rollups, no limits (nothing ever ages out), ``max_msg_size`` from the event limit.

    Server setting, recommended: ``jetstream { sync_interval: always }``. By default
    nats-server fsyncs every 2 minutes, so an acknowledged append on a single server can
    be lost to a power cut (on R3 the other replicas still hold it). With ``always`` an
    acknowledgement means the event is on disk — the ``durability="fsync"`` promise of
    FileLog — at the cost of one fsync per write batch.
    """
    if replicas not in (1, 3, 5):
        raise ValueError("replicas must be 1, 3 or 5")
    if name is not None:
        check_name("swarm", name)
    t = parse_target(target)
    lt = LoopThread("swarmlog-init")
    try:
        return lt.run(
            _init(t, timeout, name, replicas, duplicate_window, limits), 3 * timeout + 5, "init"
        )
    finally:
        lt.stop()


async def _init(
    t: Target, timeout: float, name: str | None, replicas: int, dup: float, limits: Limits
) -> dict[str, Any]:
    c = JsClient(t, timeout)
    await c.connect()
    try:
        info = await ensure(
            c,
            create=True,
            update=True,
            name=name,
            replicas=replicas,
            duplicate_window=dup,
            limits=limits,
        )
        return dict(info["config"])
    finally:
        await c.close()
