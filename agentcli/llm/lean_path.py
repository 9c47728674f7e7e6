"""The lean streaming path: one httpx request, the SSE bytes parsed straight into our events.

No SDK objects per chunk, no logging jobs: the cost of a chunk is close to ``json.loads`` of it
(scripts/bench_stream.py measures both). Which requests come here is decided in ``lean``.
"""

from __future__ import annotations

import contextlib
import json
import threading
from typing import Any

import httpx

from agentcli.llm import deferred_h2
from agentcli.llm.delta import usage_from
from agentcli.llm.errors import LLMError, ProviderHTTPError
from agentcli.llm.events import ChatRequest, Finish, TextDelta
from agentcli.llm.lean import Endpoint
from agentcli.llm.pump import End, Pump
from agentcli.llm.sse import DONE, chunk_events, sse_data

_lock = threading.Lock()
_client: httpx.Client | None = None  # one pool per process: a tool turn's requests reuse the connection

# A server that is up accepts a connection at once; one that drops packets would otherwise hold the
# step for the whole request timeout before saying anything.
CONNECT_TIMEOUT = 15.0


def client() -> httpx.Client:
    global _client
    with _lock:
        if _client is None:
            deferred_h2.defer()  # this client never speaks HTTP/2
            _client = httpx.Client(http2=False, follow_redirects=True)
        return _client


class HttpPump(Pump):
    """One streamed POST to a provider (``target``: its url, headers, body, timeout, missing key);
    a subclass reads the body into events (``_read``)."""

    def __init__(self, req: ChatRequest, target: Any) -> None:
        super().__init__(req)
        self.target = target
        self._response: httpx.Response | None = None

    def stop(self) -> None:
        super().stop()
        response = self._response
        if response is not None:  # wakes a worker blocked reading (best effort; it also checks the flag)
            with contextlib.suppress(Exception):
                response.close()

    def _run(self) -> None:
        target = self.target
        try:
            if target.missing_key:  # as litellm does, refuse before sending anything
                raise LLMError(
                    "auth",
                    f"authentication failed: missing API key: set {target.missing_key}",
                    retryable=False,
                )
            request = client().build_request(
                "POST",
                target.url,
                headers=target.headers,
                content=json.dumps(target.body).encode(),
                timeout=httpx.Timeout(target.timeout, connect=min(target.timeout, CONNECT_TIMEOUT)),
            )
            response = client().send(request, stream=True)
            self._response = response
            try:
                if self.stopped.is_set():
                    return
                if response.status_code >= 400:
                    response.read()
                    raise ProviderHTTPError(
                        response.status_code, error_body(response.content), response.headers
                    )
                end = self._read(response)
                if end is not None:
                    self.items.put(end)
            finally:
                response.close()
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread, which raises it
            if not self.stopped.is_set():
                self.items.put(exc)

    def _read(self, response: httpx.Response) -> End | None:
        """Parse the body into events; the ``End`` to hand on, or None when stopped."""
        raise NotImplementedError


class LeanPump(HttpPump):
    """OpenAI's chat completions, streamed."""

    target: Endpoint

    def _read(self, response: httpx.Response) -> End | None:
        put = self.items.put
        finished = False
        try:
            # iter_bytes: the body as sent, whatever its Content-Encoding (gzip, deflate, br, zstd).
            for data in sse_data(self.heard(response.iter_bytes())):
                if self.stopped.is_set():
                    return None
                if data == DONE:
                    return End(provider_finished=finished, clean=True)
                # Decoded first: json.loads of bytes detects their encoding in Python on every chunk.
                chunk = json.loads(data.decode())
                if type(chunk) is not dict:
                    continue
                if chunk.get("error"):  # a provider failing mid-stream (OpenRouter, Groq's `event: error`)
                    if not finished:
                        raise ProviderHTTPError(_error_status(chunk["error"]), chunk, response.headers)
                    # After the finish reason the answer is whole; OpenRouter sends the usage with it.
                    if chunk.get("usage"):
                        put([usage_from(chunk["usage"])])
                    return End(provider_finished=True, clean=True)
                self.received_any = True
                events = chunk_events(chunk)
                if events:
                    # Most chunks are one piece of text: no finish to look for.
                    if not finished and (len(events) > 1 or type(events[0]) is not TextDelta):
                        finished = any(type(e) is Finish for e in events)
                    put(events)
        except (httpx.RemoteProtocolError, httpx.ReadError):
            if self.stopped.is_set():
                return None
            if not self.received_any:
                raise
            # Cut after data arrived: what came is kept; without a finish it is a cut stream.
        return End(provider_finished=finished)


def error_body(content: bytes) -> dict[str, Any] | str:
    text = content.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text


def _error_status(error: Any) -> int | None:
    """The HTTP status an error object names: ``code`` (OpenRouter) or ``status_code`` (Groq)."""
    if not isinstance(error, dict):
        return None
    for name in ("status_code", "code", "status"):
        value = error.get(name)
        if isinstance(value, int) and 400 <= value < 600:
            return value
    return None
