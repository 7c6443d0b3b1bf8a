"""A private asyncio event loop on a daemon thread: the synchronous face of an async client.

Each JetStreamLog owns one ``LoopThread``; its methods hand coroutines to the loop with
``run(coro, timeout)`` and block on the result, so the Log contract stays synchronous
while nats-py stays async. Every wait is bounded: a coroutine that overruns its timeout
is cancelled and the caller gets a one-line ``LogUnavailable``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

from swarmlog.errors import LogUnavailable

T = TypeVar("T")


class LoopThread:
    """One event loop running forever on its own daemon thread until ``stop()``."""

    def __init__(self, name: str = "swarmlog-nats") -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()
        self._ready.wait(5.0)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:
            try:
                pending = asyncio.all_tasks(self.loop)
                for t in pending:
                    t.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()

    @property
    def alive(self) -> bool:
        return self.thread.is_alive() and not self.loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; the caller waits on the returned future."""
        if not self.alive:
            coro.close()
            raise LogUnavailable("the log is closed")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float, what: str = "request") -> T:
        """Run ``coro`` on the loop and wait at most ``timeout`` seconds for its result.

        The hand-off is one task and one plain lock (not ``run_coroutine_threadsafe``'s
        chained futures and condition variable): it is paid on every append, and costs
        about half as much CPU this way."""
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("LoopThread.run called from its own loop (would deadlock)")
        if not self.alive:
            coro.close()
            raise LogUnavailable("the log is closed")
        done = threading.Lock()
        done.acquire()
        box: list[Any] = []  # the task, then (ok, result or exception)

        async def step() -> None:
            try:
                box.append((True, await coro))
            except BaseException as e:  # handed to the caller (CancelledError included)
                box.append((False, e))
            finally:
                done.release()  # at once: no done-callback turn of the loop

        def start() -> None:
            box.insert(0, self.loop.create_task(step()))

        try:
            self.loop.call_soon_threadsafe(start)
        except RuntimeError:  # closed meanwhile
            coro.close()
            raise LogUnavailable("the log is closed") from None
        if not done.acquire(timeout=timeout):
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(lambda: box and box[0].cancel())
            raise LogUnavailable(f"NATS {what} timed out after {timeout:g}s")
        ok, value = box[1]
        if ok:
            return cast(T, value)
        if isinstance(value, asyncio.CancelledError):
            raise LogUnavailable(f"NATS {what} was cancelled (log closed)")
        raise value

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop (cancelling what still runs) and join the thread."""
        if self.thread.is_alive() and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout)


def wait(fut: concurrent.futures.Future[T], timeout: float, what: str = "request") -> T:
    """The future's result within ``timeout`` seconds, else cancel it: LogUnavailable."""
    try:
        return fut.result(timeout)
    except concurrent.futures.TimeoutError:
        fut.cancel()
        raise LogUnavailable(f"NATS {what} timed out after {timeout:g}s") from None
    except concurrent.futures.CancelledError:
        raise LogUnavailable(f"NATS {what} was cancelled (log closed)") from None
