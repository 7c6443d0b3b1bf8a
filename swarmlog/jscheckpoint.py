"""Checkpoints of a JetStreamLog, kept in a JetStream object store bucket ``<STREAM>-ckpt``.

Each checkpoint is one object ``ckpt-<seq, 20 digits>``; its header (seq, format, config
digest, checksum, size — the same fields as a file checkpoint) is the object's
description, so ``list()`` reads no payload. The object store writes the chunks first and
the object's meta last, so a checkpoint is visible whole or not at all; ``load()`` still
checks size and checksum, and ``latest()`` skips a corrupt one.
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import orjson

from .checkpoint import CheckpointInfo, CheckpointStore, encode_header, parse_header
from .errors import LogUnavailable, SwarmlogError

if TYPE_CHECKING:
    from .jsclient import JsClient
    from .jsloop import LoopThread


class ObjectStoreCheckpoints(CheckpointStore):
    """The CheckpointStore of a JetStreamLog (bucket created on first use).

    It is given what it uses of its log: the connected client, the loop thread that runs
    the client's coroutines, the stream's name and replica count, and the request timeout.
    """

    def __init__(
        self, client: JsClient, loop: LoopThread, stream: str, replicas: int, timeout: float
    ) -> None:
        self.client = client
        self.loop = loop
        self.stream = stream
        self.replicas = replicas
        self.timeout = timeout
        self.bucket = f"{stream}-ckpt"
        self._obs: Any = None

    async def _store(self) -> Any:
        if self._obs is None:
            import nats.js.errors

            js = self.client.conn.jetstream()
            try:
                self._obs = await js.object_store(self.bucket)
            except nats.js.errors.BucketNotFoundError:
                self._obs = await js.create_object_store(
                    self.bucket,
                    description=f"swarmlog checkpoints of stream {self.stream}",
                    replicas=self.replicas,
                )
            except nats.js.errors.Error as e:
                raise LogUnavailable(f"checkpoint bucket {self.bucket}: {e}") from None
        return self._obs

    def _run(self, coro: Any) -> Any:
        return self.loop.run(coro, 4 * self.timeout + 1, "checkpoint")

    def save(self, seq: int, data: bytes, format: str, config: str = "") -> CheckpointInfo:
        header = encode_header(seq, data, format, config)
        name = f"ckpt-{seq:020d}"
        self._run(self._put(name, bytes(data), orjson.dumps(header).decode()))
        return parse_header(orjson.dumps(header), name)

    async def _put(self, name: str, data: bytes, description: str) -> None:
        from nats.js.api import ObjectMeta

        obs = await self._store()
        await obs.put(name, data, meta=ObjectMeta(name=name, description=description))

    def list(self) -> builtins.list[CheckpointInfo]:
        infos = self._run(self._list())
        out: builtins.list[CheckpointInfo] = []
        for name, desc in infos:
            try:
                out.append(parse_header((desc or "").encode(), name))
            except SwarmlogError:
                continue
        out.sort(key=lambda i: (i.seq, i.name))
        return out

    async def _list(self) -> builtins.list[tuple[str, str | None]]:
        import nats.js.errors

        obs = await self._store()
        try:
            entries = await obs.list(ignore_deletes=True)
        except nats.js.errors.NotFoundError:
            return []
        return [(e.name, e.description) for e in entries if not e.deleted]

    def _read(self, info: CheckpointInfo) -> bytes:
        data: bytes = self._run(self._get(info.name))
        return data

    async def _get(self, name: str) -> bytes:
        import nats.js.errors

        obs = await self._store()
        try:
            res = await obs.get(name)
        except nats.js.errors.Error as e:
            raise SwarmlogError(f"checkpoint {name} cannot be read: {e}") from None
        return bytes(res.data or b"")

    def delete(self, info: CheckpointInfo) -> None:
        self._run(self._delete(info.name))

    async def _delete(self, name: str) -> None:
        import nats.js.errors

        obs = await self._store()
        try:
            await obs.delete(name)
        except nats.js.errors.NotFoundError:
            pass
