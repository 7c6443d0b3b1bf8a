"""Checkpoints of a JetStreamLog, kept in a JetStream object store bucket ``<STREAM>-ckpt``.

Each checkpoint is one object ``ckpt-<seq, 20 digits>``; its header (the same fields as a
file checkpoint: the stream's identity, seq, the event id there, format, config digest,
pinned, size and a checksum over all of them and the payload) is the object's description,
so ``list()`` reads no payload. The object store writes the chunks first and the object's
meta last, so a checkpoint is visible whole or not at all; ``load()`` still checks size
and checksum, and ``latest()`` skips a corrupt, foreign or stale one (see checkpoint.py).

Side files (the synthesizer's vectors and codes of a checkpoint, synthesizer/checkpoints/vectors.py)
are objects ``side-<file name>`` in the same bucket. A reader keeps them in a local cache
directory, ``$SWARMLOG_CACHE_DIR`` (default ``~/.cache/swarmlog``) ``/<stream>-<swarm id>``,
so the processes of one machine map one copy; ``fetch`` downloads a missing one (the
object store checks its SHA-256 on the way) into a temporary file renamed into place. A
cached copy is checked against the object's SHA-256 digest before each handle first
serves it (a rotted or replaced copy is discarded with a note and fetched again): the
cache is this machine's disk, the object store is the truth.
"""

from __future__ import annotations

import base64
import builtins
import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swarmlog.checkpoint import CheckpointInfo, CheckpointOwner, CheckpointStore, parse_header, skip
from swarmlog.errors import CheckpointNotWritten, LogUnavailable, SwarmlogError
from swarmlog.jetstream.proto import ERR_NO_MESSAGE, ApiError
from swarmlog.jetstream.side import erase

if TYPE_CHECKING:
    from swarmlog.jetstream.client import JsClient
    from swarmlog.jetstream.loop import LoopThread


SIDE = "side-"
"""Object name prefix of side files (checkpoints are ``ckpt-``)."""


def cache_ok(path: Path, digest: str, memo: dict[str, tuple[int, int, int, str]]) -> bool:
    """Whether the file at ``path`` has the object store's ``digest`` (``SHA-256=`` and
    the URL-safe base64 of the hash). ``memo`` remembers files found good, by size,
    mtime and inode, so one handle hashes a file once while it stays the same."""
    st = path.stat()
    mark = (st.st_size, st.st_mtime_ns, st.st_ino, digest)
    if memo.get(path.name) == mark:
        return True
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    ok = digest.partition("=")[2] == base64.urlsafe_b64encode(h.digest()).decode()
    if ok:
        memo[path.name] = mark
    return ok


class ObjectStoreCheckpoints(CheckpointStore):
    """The CheckpointStore of a JetStreamLog (bucket created on first use).

    It is given what it uses of its log: the connected client, the loop thread that runs
    the client's coroutines, the stream's name and replica count, the request timeout,
    and the log itself as ``owner`` (its identity, last seq and records, against which
    checkpoints are checked).
    """

    def __init__(
        self,
        client: JsClient,
        loop: LoopThread,
        stream: str,
        replicas: int,
        timeout: float,
        owner: CheckpointOwner | None = None,
    ) -> None:
        self.client = client
        self.loop = loop
        self.stream = stream
        self.replicas = replicas
        self.timeout = timeout
        self.owner = owner
        self.bucket = f"{stream}-ckpt"
        self._obs: Any = None
        self._cache: Path | None = None
        self._checked: dict[str, tuple[int, int, int, str]] = {}  # cache_ok's memo

    async def _store(self, create: bool = True) -> Any:
        """The bucket's handle; None if it does not exist and not ``create`` (listing never
        creates it: with per-agent NATS users only the synthesizer's may, auth.py)."""
        if self._obs is None:
            import nats.js.errors

            js = self.client.conn.jetstream()
            try:
                self._obs = await js.object_store(self.bucket)
            except nats.js.errors.BucketNotFoundError:
                if not create:
                    return None
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

    def _name(self, seq: int) -> str:
        return f"ckpt-{seq:020d}"

    # ------------------------------------------------------------ side files

    def local_dir(self) -> Path:
        """This machine's cache of the bucket's side files (see the module docstring)."""
        if self._cache is None:
            root = os.environ.get("SWARMLOG_CACHE_DIR") or Path.home() / ".cache" / "swarmlog"
            swarm = self.owner.swarm_id if self.owner is not None else "bare"
            self._cache = Path(root) / f"{self.stream}-{swarm}"
            self._cache.mkdir(parents=True, exist_ok=True)
        return self._cache

    def publish(self, name: str) -> None:
        """Upload the side file ``name`` from the cache (streamed, not read into memory)."""
        path = self.local_dir() / name
        try:
            with open(path, "rb") as f:
                self._run(self._put_object(SIDE + name, f, f"side file of {self.stream}"))
        except (LogUnavailable, OSError) as e:
            raise CheckpointNotWritten(f"side file {name} not published: {e}") from None

    def fetch(self, name: str) -> bool:
        """Make the side file ``name`` present in the cache, as the object store holds it.

        A cached copy is served only once its SHA-256 matches the object's digest
        (checked once per handle and file state, so each process that maps it checks it
        first); a copy that does not match is discarded with a one-line note and fetched
        again. No object: False (a file nobody can check is not served)."""
        path = self.local_dir() / name
        digest = self._run(self._digest(SIDE + name))
        if digest is None:
            return False
        if path.is_file():
            if cache_ok(path, digest, self._checked):
                return True
            skip(
                f"{self.bucket}/{name}",
                "the cached copy does not match the object store's"
                " SHA-256 digest: discarded, fetched again",
            )
            path.unlink(missing_ok=True)
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as f:
                found = self._run(self._get_into(SIDE + name, f))
            if found:
                os.replace(tmp, path)
            return found
        finally:
            tmp.unlink(missing_ok=True)

    async def _digest(self, name: str) -> str | None:
        """The object's SHA-256 digest as the object store keeps it, None if none."""
        import nats.js.errors

        obs = await self._store(create=False)
        if obs is None:
            return None
        try:
            info = await obs.get_info(name)
        except nats.js.errors.NotFoundError:
            return None
        return str(info.digest or "") or None

    async def _get_into(self, name: str, f: Any) -> bool:
        import nats.js.errors

        obs = await self._store(create=False)
        if obs is None:
            return False
        try:
            await obs.get(name, writeinto=f)
        except nats.js.errors.NotFoundError:
            return False
        except nats.js.errors.Error as e:  # e.g. a digest mismatch: not used
            raise SwarmlogError(f"side file {name} cannot be read: {e}") from None
        return True

    def unpublish(self, keep: set[str]) -> int:
        """Erase and delete the side objects whose file names are not in ``keep``."""
        names = [n[len(SIDE) :] for n, _ in self._run(self._list()) if n.startswith(SIDE)]
        gone = [n for n in names if n not in keep]
        for n in gone:
            self._run(self._delete(SIDE + n))
        return len(gone)

    def _put(self, info: CheckpointInfo, header: bytes, data: bytes) -> None:
        try:
            self._run(self._put_object(info.name, bytes(data), header.decode()))
        except LogUnavailable as e:
            raise CheckpointNotWritten(
                f"checkpoint not written to bucket {self.bucket}: {e}; {self._kept()}"
            ) from None

    async def _put_object(self, name: str, data: Any, description: str) -> None:
        import nats.errors
        from nats.js.api import ObjectMeta

        obs = await self._store()
        # a name written again: the object store would only purge the old chunks (their
        # bytes stay in the server's block files until it compacts them), so they are
        # erased first; until the new one is stored there is no object of that name
        await self._delete(name)
        try:  # on failure the object store purges the chunks it wrote (nothing half-left)
            await obs.put(name, data, meta=ObjectMeta(name=name, description=description))
        except nats.errors.Error as e:  # e.g. the server's storage is full
            raise LogUnavailable(f"the server refused it ({e})") from None

    def list(self) -> builtins.list[CheckpointInfo]:
        infos = self._run(self._list())
        out: builtins.list[CheckpointInfo] = []
        for name, desc in infos:
            if name.startswith(SIDE):
                continue
            try:
                out.append(parse_header((desc or "").encode(), name))
            except SwarmlogError as e:
                skip(name, str(e))
        out.sort(key=lambda i: (i.seq, i.name))
        return out

    async def _list(self) -> builtins.list[tuple[str, str | None]]:
        import nats.js.errors

        obs = await self._store(create=False)
        if obs is None:
            return []
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
        """Erase the object's chunks, then delete the object.

        Why not just ``obs.delete``: it purges the chunks, and a purge only marks messages
        deleted, leaving their bytes in the server's block files until compaction. A
        checkpoint holds the fold's state, so erasing an identity (``invalidate_after``
        after a redaction) must leave none of it: each chunk is deleted with erase first.
        """
        import nats.js.errors

        obs = await self._store()
        try:
            info = await obs.get_info(name)
        except nats.js.errors.NotFoundError:
            return
        if info.nuid:
            await self._erase_chunks(f"$O.{self.bucket}.C.{info.nuid}")
        try:
            await obs.delete(name)
        except nats.js.errors.NotFoundError:
            pass

    async def _erase_chunks(self, subject: str) -> None:
        stream = f"OBJ_{self.bucket}"
        seq = 0
        while True:
            try:
                resp = await self.client.api(
                    f"STREAM.MSG.GET.{stream}", {"seq": seq + 1, "next_by_subj": subject}
                )
            except ApiError as e:
                if e.err_code == ERR_NO_MESSAGE or e.code == 404:
                    return
                raise
            seq = int(resp["message"]["seq"])
            await erase(self.client, stream, seq)
