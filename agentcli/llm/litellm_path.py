"""litellm's streaming path: ``litellm.completion(stream=True)`` in a worker thread, its chunks
turned into our events. Serves every model the lean path does not (see ``lean``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from agentcli.llm.errors import LLMError
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
from agentcli.llm.lazy import get_litellm
from agentcli.llm.pump import End, Pump


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


class LitellmPump(Pump):
    """Runs the litellm call in a daemon thread and feeds events into ``items``."""

    def _run(self) -> None:
        response: Any = None
        try:
            litellm = get_litellm()
            response = litellm.completion(**completion_kwargs(self.req))
            if response is None:  # litellm's global drop-params path can swallow a repeated HTTP 422
                raise LLMError("bad_request", "request rejected (HTTP 422) by the provider", status=422)
            for chunk in response:
                if self.stopped.is_set():
                    return
                self.received_any = True
                self.items.put(list(chunk_events(chunk)))
            self.items.put(End(provider_finished=_provider_finished(response)))
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
            blocks = getattr(delta, "thinking_blocks", None)
            if blocks:
                yield from _sealed(blocks)
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


def _sealed(blocks: Any) -> Iterator[Event]:
    """Anthropic's thinking signatures and redacted thinking, as litellm passes them on."""
    for block in blocks:
        get = block.get if isinstance(block, dict) else lambda key, b=block: getattr(b, key, None)
        if get("type") == "redacted_thinking":
            yield RedactedReasoning(str(get("data") or ""))
        elif get("signature"):
            yield ReasoningSignature(str(get("signature")))


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
