"""From a turn's thread to the client, in order: the loop runs in a worker thread and publishes its
events synchronously, while the ACP connection lives on the asyncio loop.

``notify`` queues a session update from any thread; one pump sends them in the order they were
queued. ``call`` makes a request (a permission question, a file read) from a turn's thread and waits
for the answer: it is sent only after every update queued before it, so a client always knows the
tool call a question is about. A turn that is cancelled stops waiting at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
POLL_S = 0.05  # how often a waiting turn thread looks at its abort flag


class Cancelled(Exception):
    """The turn was cancelled while waiting for the client's answer."""


class Outbox:
    def __init__(self, loop: asyncio.AbstractEventLoop, send: Callable[[str, Any], Awaitable[None]]) -> None:
        self._loop = loop
        self._send = send  # the connection's session_update(session_id, update)
        self._queue: asyncio.Queue[tuple[str, Any] | asyncio.Future[None]] = asyncio.Queue()
        self._gone = False  # the client went away: updates are dropped from now on

    def notify(self, session_id: str, update: Any) -> None:
        """Queue one session update (any thread)."""
        with contextlib.suppress(RuntimeError):  # the event loop has closed: the process is ending
            self._loop.call_soon_threadsafe(self._queue.put_nowait, (session_id, update))

    async def run(self) -> None:
        """The pump: sends queued updates one at a time, forever (cancelled at shutdown)."""
        while True:
            item = await self._queue.get()
            if isinstance(item, asyncio.Future):
                if not item.done():
                    item.set_result(None)
                continue
            if self._gone:
                continue
            try:
                await self._send(*item)
            except ConnectionError:
                self._gone = True
            except Exception:  # one bad update must not stop the others
                log.exception("could not send a session update")

    async def flush(self) -> None:
        """Return once every update queued before this call has been sent."""
        done: asyncio.Future[None] = self._loop.create_future()
        self._queue.put_nowait(done)
        await done

    def call(self, make: Callable[[], Awaitable[T]], abort: threading.Event | None = None) -> T:
        """Run ``make()`` on the event loop after the updates queued so far, and wait for its result
        (from a turn's thread, never the loop's). Raises Cancelled when ``abort`` is set first,
        ConnectionError when the client is gone, or what the request raised."""

        async def after_updates() -> T:
            await self.flush()
            return await make()

        future = asyncio.run_coroutine_threadsafe(after_updates(), self._loop)
        while True:
            try:
                return future.result(timeout=POLL_S)
            except concurrent.futures.TimeoutError:
                if abort is not None and abort.is_set():
                    future.cancel()
                    raise Cancelled from None
            except concurrent.futures.CancelledError:
                raise ConnectionError("the request was dropped: the agent is shutting down") from None
