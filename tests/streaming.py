"""Reading a stream_chat call the way the stream tests check it: a request to a local server, and
every event until the end or the error."""

from __future__ import annotations

import threading
from typing import Any

from agentcli.llm.errors import LLMError
from agentcli.llm.stream import ChatRequest, stream_chat


def chat_request(base_url: str, model: str = "openai/test-model", **kw: Any) -> ChatRequest:
    """A one-message request to the server at ``base_url`` (``kw``: any other ChatRequest field)."""
    return ChatRequest(
        model=model, messages=[{"role": "user", "content": "hi"}], api_base=base_url, api_key="sk-test", **kw
    )


def drain(req: ChatRequest, abort: threading.Event | None = None) -> tuple[list[Any], LLMError | None]:
    """All events until the end or the error."""
    got: list[Any] = []
    try:
        for event in stream_chat(req, abort):
            got.append(event)
    except LLMError as err:
        return got, err
    return got, None
