"""Stream one chat completion through litellm as plain events.

``stream_chat`` yields deltas as they arrive, then at most one ``Usage`` and exactly one ``Finish``
as the last two events. Every failure is raised as ``LLMError``. litellm runs in a worker thread so
that an abort is honoured at once, even while the provider is silent (before the first byte or
between chunks); the worker closes the HTTP response as soon as it regains control.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from agentcli.llm.errors import LLMError, classify
from agentcli.llm.lazy import get_litellm

POLL_SECONDS = 0.05  # how often a waiting consumer looks at the abort flag


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    api_base: str | None = None
    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float = 600
    extra: dict[str, Any] = field(default_factory=dict)  # passed to litellm.completion as is


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A fragment of one tool call; fragments with the same index belong together."""

    index: int
    id: str | None
    name: str | None
    arguments: str


@dataclass(frozen=True)
class Finish:
    reason: str  # as litellm normalises it: "stop", "tool_calls", "length", "content_filter", ...


@dataclass(frozen=True)
class Usage:
    """Token counts as litellm normalises them: ``prompt_tokens`` includes cache reads and writes,
    ``completion_tokens`` includes reasoning."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0


Event = TextDelta | ReasoningDelta | ToolCallDelta | Finish | Usage


def completion_kwargs(req: ChatRequest) -> dict[str, Any]:
    """The keyword arguments for ``litellm.completion`` (no tools keys at all without tools)."""
    kwargs: dict[str, Any] = {"model": req.model, "messages": req.messages, "timeout": req.timeout}
    optional = {
        "api_base": req.api_base,
        "api_key": req.api_key,
        "max_tokens": req.max_tokens,
        "temperature": req.temperature,
    }
    kwargs.update({k: v for k, v in optional.items() if v is not None})
    if req.tools:
        kwargs["tools"] = req.tools
    # Per call, litellm drops parameters a model does not take (temperature on o1) instead of refusing.
    kwargs["drop_params"] = True
    kwargs.update(req.extra)
    # Invariants: always streamed with usage, and never retried inside litellm (the loop retries).
    kwargs.update(stream=True, stream_options={"include_usage": True}, num_retries=0, max_retries=0)
    # litellm 1.106 routes any request with tools through its MCP gateway check, which imports the
    # optional `mcp` package and fails without it; we never send MCP tools, so skip that path.
    kwargs["_skip_mcp_handler"] = True
    return kwargs


def stream_chat(req: ChatRequest, abort: threading.Event | None = None) -> Iterator[Event]:
    """Stream one completion; raises ``LLMError`` (kind "aborted" when ``abort`` is set)."""
    abort = abort or threading.Event()
    pump = _Pump(req)
    if abort.is_set():
        raise _aborted()
    pump.start()
    finish: Finish | None = None
    usage: Usage | None = None
    try:
        while True:
            try:
                item = pump.items.get(timeout=POLL_SECONDS)
            except queue.Empty:
                if abort.is_set():
                    raise _aborted() from None
                continue
            if abort.is_set():
                raise _aborted()
            if isinstance(item, _End):
                if finish is None or not item.provider_finished:
                    raise _cut_short()
                break
            if isinstance(item, BaseException):
                if finish is not None:
                    break  # the answer was complete; a transport hiccup after it loses nothing
                err = classify(item, req.model)
                if pump.received_any and err.kind == "provider_down":
                    raise _cut_short() from item
                raise err from item
            if isinstance(item, Finish):
                finish = item
            elif isinstance(item, Usage):
                usage = item
            else:
                yield item
        if usage is not None:
            yield usage
        yield finish
    finally:
        pump.stop()


def _aborted() -> LLMError:
    return LLMError("aborted", "aborted", retryable=False)


def _cut_short() -> LLMError:
    return LLMError("provider_down", "stream ended unexpectedly", retryable=True)


@dataclass
class _End:
    provider_finished: bool  # False when litellm made up the finish reason (the provider sent none)


class _Pump:
    """Runs the litellm call in a daemon thread and feeds events into ``items``."""

    def __init__(self, req: ChatRequest) -> None:
        self.req = req
        self.items: queue.Queue[Event | BaseException | _End] = queue.Queue()
        self.received_any = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="llm-stream", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ask the worker to close the response; it does so as soon as the next chunk (or error) comes."""
        self._stopped.set()

    def _run(self) -> None:
        response: Any = None
        try:
            litellm = get_litellm()
            response = litellm.completion(**completion_kwargs(self.req))
            if response is None:  # litellm's global drop-params path can swallow a repeated HTTP 422
                raise LLMError("bad_request", "request rejected (HTTP 422) by the provider", status=422)
            for chunk in response:
                if self._stopped.is_set():
                    return
                self.received_any = True
                for event in chunk_events(chunk):
                    self.items.put(event)
            self.items.put(_End(provider_finished=_provider_finished(response)))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread, which raises it
            self.items.put(exc)
        finally:
            if response is not None:
                _close(response)


def chunk_events(chunk: Any) -> Iterator[Event]:
    """The events in one litellm streaming chunk (``ModelResponseStream``)."""
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        if delta is not None:
            reasoning = getattr(delta, "reasoning_content", None)
            if reasoning:
                yield ReasoningDelta(reasoning)
            content = getattr(delta, "content", None)
            if content:
                yield TextDelta(content)
            for position, call in enumerate(getattr(delta, "tool_calls", None) or []):
                function = getattr(call, "function", None)
                index = getattr(call, "index", None)
                yield ToolCallDelta(
                    index=index if isinstance(index, int) else position,
                    id=getattr(call, "id", None),
                    name=getattr(function, "name", None),
                    arguments=getattr(function, "arguments", None) or "",
                )
        reason = getattr(choice, "finish_reason", None)
        if reason:
            yield Finish(str(reason))
    raw = getattr(chunk, "usage", None)
    if raw is not None:
        yield usage_from(raw)


def usage_from(raw: Any) -> Usage:
    """Normalise a litellm ``Usage`` (OpenAI fields plus Anthropic-style cache writes)."""

    def num(obj: Any, name: str) -> int:
        value = getattr(obj, name, None) if obj is not None else None
        if value is None and isinstance(obj, dict):
            value = obj.get(name)
        try:
            return max(0, int(value or 0))
        except (TypeError, ValueError):
            return 0

    prompt_details = getattr(raw, "prompt_tokens_details", None)
    completion_details = getattr(raw, "completion_tokens_details", None)
    prompt = num(raw, "prompt_tokens")
    completion = num(raw, "completion_tokens")
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read=num(prompt_details, "cached_tokens") or num(raw, "cache_read_input_tokens"),
        cache_write=num(raw, "cache_creation_input_tokens") or num(prompt_details, "cache_creation_tokens"),
        reasoning_tokens=num(completion_details, "reasoning_tokens"),
        total_tokens=num(raw, "total_tokens") or prompt + completion,
    )


def _provider_finished(response: Any) -> bool:
    """Whether the provider itself sent a finish reason.

    litellm makes up "stop" when a stream simply ends, which would hide a response cut short by a
    proxy; its stream wrapper remembers what was really received (unknown attributes: trust it).
    """
    received = getattr(response, "received_finish_reason", True)
    intermittent = getattr(response, "intermittent_finish_reason", None)
    return received is not None or intermittent is not None


def _close(response: Any) -> None:
    """Close the provider's HTTP stream behind litellm's wrapper (best effort)."""
    inner = getattr(response, "completion_stream", None)
    for obj in (inner, getattr(inner, "response", None)):
        close = getattr(obj, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()


@dataclass
class AssembledToolCall:
    id: str
    name: str
    arguments: str  # the raw JSON text as the model wrote it


@dataclass
class Assembled:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[AssembledToolCall] = field(default_factory=list)
    finish: str | None = None
    usage: Usage | None = None


def assemble(events: Iterator[Event] | list[Event]) -> Assembled:
    """Consume events into the whole answer (for callers that do not render as they go)."""
    out = Assembled()
    by_index: dict[int, AssembledToolCall] = {}
    for event in events:
        if isinstance(event, TextDelta):
            out.text += event.text
        elif isinstance(event, ReasoningDelta):
            out.reasoning += event.text
        elif isinstance(event, ToolCallDelta):
            call = by_index.get(event.index)
            # A new id at a known index means the provider reuses indexes: it is another call.
            if call is None or (event.id and call.id and event.id != call.id):
                call = AssembledToolCall(id=event.id or "", name=event.name or "", arguments="")
                by_index[event.index] = call
                out.tool_calls.append(call)
            call.id = call.id or event.id or ""
            call.name = call.name or event.name or ""
            call.arguments += event.arguments
        elif isinstance(event, Finish):
            out.finish = event.reason
        elif isinstance(event, Usage):
            out.usage = event
    return out
