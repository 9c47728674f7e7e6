"""The lean path to Anthropic's Messages API: one httpx request (``anthropic.endpoint`` builds it), the
SSE bytes parsed straight into our events (``anthropic_stream``). No litellm, no SDK objects per chunk.
"""

from __future__ import annotations

import contextlib
import json

import httpx

from agentcli.llm.anthropic import MessagesEndpoint
from agentcli.llm.anthropic_stream import MessagesParser
from agentcli.llm.errors import LLMError, ProviderHTTPError
from agentcli.llm.events import ChatRequest
from agentcli.llm.lean_path import CONNECT_TIMEOUT, client
from agentcli.llm.pump import End, Pump
from agentcli.llm.sse import sse_data


class AnthropicPump(Pump):
    def __init__(self, req: ChatRequest, target: MessagesEndpoint) -> None:
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
        try:
            self._stream()
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread, which raises it
            if not self.stopped.is_set():
                self.items.put(exc)

    def _stream(self) -> None:
        target = self.target
        if target.missing_key:  # as litellm does, refuse before sending anything
            raise LLMError(
                "auth", f"authentication failed: missing API key: set {target.missing_key}", retryable=False
            )
        request = client().build_request(
            "POST",
            target.url,
            headers=target.headers,
            content=json.dumps(target.body).encode(),
            timeout=httpx.Timeout(target.timeout, connect=min(target.timeout, CONNECT_TIMEOUT)),
        )
        response = self._response = client().send(request, stream=True)
        try:
            if self.stopped.is_set():
                return
            if response.status_code >= 400:
                response.read()
                raise ProviderHTTPError(response.status_code, _error_body(response.content), response.headers)
            parser = MessagesParser(target.tool_names)
            try:
                self._pump(parser, response)
            except (httpx.RemoteProtocolError, httpx.ReadError):
                if self.stopped.is_set() or not self.received_any:
                    raise
                # Cut after data arrived: what came is kept; without a stop reason it is a cut stream.
            if not self.stopped.is_set():
                self.items.put(End(provider_finished=parser.finished))
        finally:
            response.close()

    def _pump(self, parser: MessagesParser, response: httpx.Response) -> None:
        put = self.items.put
        # iter_bytes: a gzip-encoded stream is decoded as it comes.
        for data in sse_data(self.heard(response.iter_bytes())):
            if self.stopped.is_set():
                return
            event = json.loads(data)
            if not isinstance(event, dict):
                continue
            events = parser.feed(event)
            self.received_any = True
            if events:
                put(events)


def _error_body(content: bytes) -> dict[str, object] | str:
    text = content.decode("utf-8", "replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return text
    return parsed if isinstance(parsed, dict) else text
