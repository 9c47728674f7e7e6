"""JSON-RPC messages, one a line, on the protocol's own file descriptors (ACP's stdio framing).

The ``agent-client-protocol`` package's stdio transport skips a line it cannot parse without a word
and stops serving on a line that is JSON but not an object. An editor's mistake must neither end the
agent nor go unanswered, so this transport checks each message's shape before the package's
connection sees it, and answers a bad one itself with JSON-RPC's ``Parse error`` or
``Invalid Request`` (id null when the message has no usable id), as the JSON-RPC 2.0 spec says.

Lines are read by a thread (any kind of stdin works: a pipe, a file, a terminal) and written
synchronously under a lock, each message whole on its line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from typing import Any

from acp import RequestError

log = logging.getLogger(__name__)

# One JSON-RPC message a line. A line longer than this (editors embed files in prompts, so it is
# generous) is skipped unread and answered with a parse error: the client cannot make the agent hold
# an unbounded line in memory, nor end it with one (json's recursion limit is caught the same way).
MAX_LINE_BYTES = 64 * 1024 * 1024
_TOO_LONG = b"\0too long"  # what the reader hands over for such a line (never a line of JSON)


def shape_problem(message: Any) -> str | None:
    """Why a parsed message is not a JSON-RPC 2.0 request, notification or response (None: it is)."""
    if not isinstance(message, dict):
        return "a message must be a JSON object (batches are not used by ACP)"
    if message.get("jsonrpc") != "2.0":
        return 'the "jsonrpc" member must be "2.0"'
    if "id" in message and not _valid_id(message["id"]):
        return 'the "id" member must be a string, a number or null'
    if "method" in message:
        if not isinstance(message["method"], str):
            return 'the "method" member must be a string'
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return 'the "params" member must be an object'
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return 'a message needs a "method" (a request or notification) or a "result" / "error" (a response)'


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


class LineTransport:
    """The ``acp`` package's message-level Transport over two file descriptors."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._write_fd = write_fd
        self._write_lock = threading.Lock()
        self.closed = False  # the client stopped reading (a broken pipe)
        threading.Thread(target=self._read, args=(read_fd,), name="acp-stdin", daemon=True).start()

    def _read(self, fd: int) -> None:
        try:
            with open(fd, "rb", buffering=1 << 16) as stream:
                while line := stream.readline(MAX_LINE_BYTES + 1):
                    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                        while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                            pass  # the rest of the line, dropped as it is read
                        line = _TOO_LONG
                    self._hand(line)
        except (OSError, ValueError) as exc:
            log.warning("reading the client's messages stopped: %s", exc)
        finally:
            self._hand(None)

    def _hand(self, line: bytes | None) -> None:
        with contextlib.suppress(RuntimeError):  # the event loop is already closed: nobody listens
            self._loop.call_soon_threadsafe(self._lines.put_nowait, line)

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        with self._write_lock:
            if self.closed:
                raise ConnectionError("the client is gone")
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self._write_fd, view) :]
            except OSError as exc:
                self.closed = True
                raise ConnectionError(f"the client is gone: {exc}") from None

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._lines.get()
            if line is None:
                return None
            if not line.strip():
                continue
            if line is _TOO_LONG:
                details = f"the line is over {MAX_LINE_BYTES // (1024 * 1024)} MB"
                await self._answer(None, RequestError.parse_error({"details": details}))
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                await self._answer(None, RequestError.parse_error({"details": "the line is not JSON"}))
                continue
            problem = shape_problem(message)
            if problem is None:
                return message
            rid = message.get("id") if isinstance(message, dict) and _valid_id(message.get("id")) else None
            await self._answer(rid, RequestError.invalid_request({"details": problem}))

    async def _answer(self, rid: Any, error: RequestError) -> None:
        log.warning("bad message from the client: %s (%s)", error, (error.data or {}).get("details", ""))
        with contextlib.suppress(ConnectionError):
            await self.send({"jsonrpc": "2.0", "id": rid, "error": error.to_error_obj()})

    async def close(self) -> None:
        with self._write_lock:
            self.closed = True
