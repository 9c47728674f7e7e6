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
from dataclasses import dataclass

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
from agentcli.llm.pump import End, Item, Pump
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


def stream_chat(
    req: ChatRequest, abort: threading.Event | None = None, *, coalesce: bool = False
) -> Iterator[Event]:
    """Stream one completion; raises ``LLMError`` (kind "aborted" when ``abort`` is set).

    ``coalesce``: deltas that have already arrived when the consumer asks for more are joined into
    one (runs of text, of reasoning, of one tool call's arguments). The text is the same and nothing
    waits for a delta still to come; a consumer slower than the stream (storing, rendering) then pays
    per batch instead of per chunk.
    """
    abort = abort or threading.Event()
    if abort.is_set():
        raise _aborted()
    pump = open_pump(req)
    watch = Watch.of(req, pump)
    pump.start()
    ends = _Ends()
    items = pump.items
    carry: Item | None = None  # what ended a drain of the queue (coalesce): handled next
    try:
        while True:
            if carry is not None:
                item, carry = carry, None
            else:
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
                if coalesce:
                    item, carry = _drain(items, item)
                yield from _deliver(item, watch, ends, coalesce)
                continue
            if isinstance(item, End):
                ends.finish = _finish_at_end(item, ends.finish, ends.usage)
                break
            assert isinstance(item, BaseException)
            if ends.finish is not None:
                break  # the answer was complete; a transport hiccup after it loses nothing
            raise _failure(item, pump) from item
        if ends.usage is not None:
            yield ends.usage
        yield ends.finish
    finally:
        pump.stop()


_JOINABLE = (TextDelta, ReasoningDelta, ToolCallDelta)


@dataclass
class _Ends:
    """The finish and usage a stream reported so far (yielded last, whenever they came)."""

    finish: Finish | None = None
    usage: Usage | None = None


def _deliver(batch: list[Event], watch: Watch, ends: _Ends, coalesce: bool) -> Iterator[Event]:
    """One batch's events, counted against the output limit; ``coalesce``: runs of deltas joined."""
    if coalesce and len(batch) > 1:
        joined = _all_text(batch, watch, ends)
        if joined is not None:
            yield joined
            return
    run: list[Event] = []
    try:
        for event in batch:
            kind = type(event)
            if type(event) is Finish:
                ends.finish = event
                continue
            if type(event) is Usage:
                ends.usage = event
                continue
            watch.count(event)
            if coalesce and kind in _JOINABLE:
                if run and not _joins(run[-1], event):
                    yield _joined(run)
                    run = []
                run.append(event)
                continue
            if run:
                yield _joined(run)
                run = []
            yield event
    except LLMError:
        if run:  # what came before the failing delta is delivered, as it is one by one
            yield _joined(run)
        raise
    if run:
        yield _joined(run)


def _all_text(batch: list[Event], watch: Watch, ends: _Ends) -> TextDelta | None:
    """The batch's text joined, when it is text alone (and its finish or usage) within the output
    limit: the common batch, handled without a Python step per delta. None: deliver it event by event."""
    texts = [e.text for e in batch if type(e) is TextDelta]
    if not texts:
        return None
    others = [e for e in batch if type(e) is not TextDelta] if len(texts) < len(batch) else []
    if any(type(e) is not Finish and type(e) is not Usage for e in others):
        return None
    size = sum(map(len, texts))
    if watch.chars + size > watch.max_chars:
        return None  # the slow way delivers the text before the delta that passes the limit
    watch.chars += size
    for event in others:
        if isinstance(event, Finish):
            ends.finish = event
        elif isinstance(event, Usage):
            ends.usage = event
    return TextDelta("".join(texts))


def _drain(items: queue.SimpleQueue[Item], first: list[Event]) -> tuple[list[Event], Item | None]:
    """``first`` and every event list already queued behind it, and the item that stopped the drain
    (an end or an error: the caller handles it next), if any."""
    batch = first
    while True:
        try:
            item = items.get_nowait()
        except queue.Empty:
            return batch, None
        if type(item) is not list:
            return batch, item
        if batch is first:
            batch = list(first)
        batch.extend(item)


def _joins(previous: Event, event: Event) -> bool:
    """Whether ``event`` continues ``previous``'s delta (a new tool call, or a reused index with a
    new id, does not)."""
    if type(previous) is not type(event):
        return False
    if isinstance(event, ToolCallDelta) and isinstance(previous, ToolCallDelta):
        return event.index == previous.index and not event.id and not event.name
    return True


def _joined(run: list[Event]) -> Event:
    first = run[0]
    if len(run) == 1:
        return first
    if isinstance(first, ToolCallDelta):
        arguments = "".join(e.arguments for e in run if isinstance(e, ToolCallDelta))
        return ToolCallDelta(first.index, first.id, first.name, arguments)
    text = "".join(e.text for e in run if isinstance(e, TextDelta | ReasoningDelta))
    return ReasoningDelta(text) if isinstance(first, ReasoningDelta) else TextDelta(text)


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
