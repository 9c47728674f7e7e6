"""Reading a stream_chat call the way the stream tests check it: a request to a local server, and
every event until the end or the error."""

from __future__ import annotations

import threading
from typing import Any

from agentcli.llm.errors import LLMError
from agentcli.llm.pump import WORKER_NAME
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


def stream_worker(before: set[threading.Thread]) -> threading.Thread:
    """The one stream worker started since ``before`` (``set(threading.enumerate())``) and still running.

    Joining it waits until the client has read the whole response and queued its events: the server
    having sent everything is not that, as the bytes may still be in the socket while a loaded
    machine runs something else."""
    started = [t for t in threading.enumerate() if t.name == WORKER_NAME and t not in before]
    assert len(started) == 1, f"expected one running stream worker, found {started}"
    return started[0]


def read_to_the_end(worker: threading.Thread) -> None:
    """Wait (on the condition, with a generous bound) until ``worker`` has read its whole response."""
    worker.join(60)
    assert not worker.is_alive(), "the stream worker was still reading after 60 s"
