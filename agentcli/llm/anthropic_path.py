"""The lean path to Anthropic's Messages API: one httpx request (``anthropic.endpoint`` builds it), the
SSE bytes parsed straight into our events (``anthropic_stream``). No litellm, no SDK objects per chunk.
"""

from __future__ import annotations

import json

import httpx

from agentcli.llm.anthropic import MessagesEndpoint
from agentcli.llm.anthropic_stream import MessagesParser
from agentcli.llm.lean_path import HttpPump
from agentcli.llm.pump import End
from agentcli.llm.sse import sse_data


class AnthropicPump(HttpPump):
    """Anthropic's Messages API, streamed."""

    target: MessagesEndpoint

    def _read(self, response: httpx.Response) -> End | None:
        parser = MessagesParser(self.target.tool_names)
        try:
            self._pump(parser, response)
        except (httpx.RemoteProtocolError, httpx.ReadError):
            if self.stopped.is_set() or not self.received_any:
                raise
            # Cut after data arrived: what came is kept; without a stop reason it is a cut stream.
        return None if self.stopped.is_set() else End(provider_finished=parser.finished)

    def _pump(self, parser: MessagesParser, response: httpx.Response) -> None:
        put = self.items.put
        # iter_bytes: a gzip-encoded stream is decoded as it comes.
        for data in sse_data(self.heard(response.iter_bytes())):
            if self.stopped.is_set():
                return
            event = json.loads(data.decode())  # str: json.loads of bytes detects the encoding
            if not isinstance(event, dict):
                continue
            events = parser.feed(event)
            self.received_any = True
            if events:
                put(events)
