"""Stream one chat completion as plain events, on the lean path or through litellm.

``stream_chat`` yields deltas as they arrive, then at most one ``Usage`` and exactly one ``Finish``
as the last two events. Every failure is raised as ``LLMError``. The provider call runs in a worker
thread (``pump``) so that an abort is honoured at once, even while the provider is silent (before the
first byte or between chunks); the worker closes the HTTP response as soon as it regains control.

Which path serves a request is ``lean``'s decision: OpenAI-compatible providers go straight to httpx
(``lean_path``), Anthropic's Messages API too (``anthropic_path``), everything else through litellm
(``litellm_path``).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

from agentcli.llm import cache, lean
from agentcli.llm.errors import LLMError, ProviderHTTPError, classify, is_cut, is_timeout
from agentcli.llm.events import (
    ChatRequest,
    Event,
    Finish,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from agentcli.llm.pump import End, Pump
from agentcli.llm.watch import Watch

POLL_SECONDS = 0.05  # how often a waiting consumer looks at the abort flag

__all__ = [
    "ChatRequest",
    "Event",
    "Finish",
    "ReasoningDelta",
    "ReasoningSignature",
    "RedactedReasoning",
    "TextDelta",
    "ToolCallDelta",
    "Usage",
    "stream_chat",
]


def open_pump(req: ChatRequest) -> Pump:
    """The worker for ``req`` on the path that serves it (not started), with the prompt-caching
    breakpoints its model takes, whichever path that is (``cache.prepare``)."""
    req = cache.prepare(req)
    target = lean.endpoint(req)
    if target is not None:
        from agentcli.llm.lean_path import LeanPump

        return LeanPump(req, target)
    messages = lean.messages_endpoint(req)
    if messages is not None:
        from agentcli.llm.anthropic_path import AnthropicPump

        return AnthropicPump(req, messages)
    from agentcli.llm.litellm_path import LitellmPump

    return LitellmPump(req)


def stream_chat(req: ChatRequest, abort: threading.Event | None = None) -> Iterator[Event]:
    """Stream one completion; raises ``LLMError`` (kind "aborted" when ``abort`` is set)."""
    abort = abort or threading.Event()
    if abort.is_set():
        raise _aborted()
    pump = open_pump(req)
    watch = Watch.of(req, pump)
    pump.start()
    finish: Finish | None = None
    usage: Usage | None = None
    items = pump.items
    try:
        while True:
            try:
                item = items.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if abort.is_set():
                    raise _aborted() from None
                watch.silence()
                continue
            if abort.is_set():
                raise _aborted()
            if type(item) is list:
                for event in item:
                    if type(event) is Finish:
                        finish = event
                    elif type(event) is Usage:
                        usage = event
                    else:
                        watch.count(event)
                        yield event
                continue
            if isinstance(item, End):
                finish = _finish_at_end(item, finish, usage)
                break
            assert isinstance(item, BaseException)
            if finish is not None:
                break  # the answer was complete; a transport hiccup after it loses nothing
            raise _failure(item, pump) from item
        if usage is not None:
            yield usage
        yield finish
    finally:
        pump.stop()


def _finish_at_end(end: End, finish: Finish | None, usage: Usage | None) -> Finish:
    """The finish of a stream that ended without an error, or the error of one that was cut.

    A provider that names no finish reason but closes the stream properly (``[DONE]``, or the usage
    chunk that only ever comes last) has finished: Snowflake's Cortex never sends a reason.
    """
    if finish is not None and end.provider_finished:
        return finish
    if end.clean or usage is not None:
        return finish or Finish("stop")
    raise _cut_short()


def _failure(exc: BaseException, pump: Pump) -> LLMError:
    """The error a stream ends with. A connection lost mid-stream is a cut stream; an error the
    provider sent in words (an ``error`` event mid-stream) keeps its words and status."""
    err = classify(exc, pump.req.model)
    # litellm raises a provider's mid-stream error as its own class with a status (Anthropic's error
    # event, OpenRouter's error object): words, unless the connection itself broke under it (litellm
    # calls a cut stream HTTP 500 too).
    said_so = isinstance(exc, LLMError | ProviderHTTPError) or (err.status is not None and not is_cut(exc))
    if not pump.received_any or err.kind != "provider_down" or said_so:
        return err
    if is_timeout(exc):
        # Silent past the timeout mid-stream: the provider stalled, it did not end the stream.
        return LLMError(
            "provider_down",
            f"stream timed out: no data for {pump.req.timeout:g} s",
            retryable=True,
            retries=1,
        )
    return _cut_short()


def _aborted() -> LLMError:
    return LLMError("aborted", "aborted", retryable=False)


def _cut_short() -> LLMError:
    return LLMError("provider_down", "stream ended unexpectedly", retryable=True)
