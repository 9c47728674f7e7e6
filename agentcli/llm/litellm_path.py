"""litellm's streaming path: ``litellm.completion(stream=True)`` in a worker thread, its chunks
turned into our events. Serves every model the lean path does not (see ``lean``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from agentcli.llm import replay
from agentcli.llm.delta import content_events, reasoning_text, usage_from
from agentcli.llm.errors import LLMError
from agentcli.llm.events import (
    ChatRequest,
    Event,
    Finish,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    ToolCallDelta,
    Usage,
)
from agentcli.llm.lazy import get_litellm
from agentcli.llm.pump import End, Pump


def completion_kwargs(req: ChatRequest) -> dict[str, Any]:
    """The keyword arguments for ``litellm.completion`` (no tools keys at all without tools)."""
    kwargs: dict[str, Any] = {
        "model": req.model,
        "messages": replay.outgoing(req.model, req.messages),
        "timeout": req.timeout,
    }
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

    # No stop() override closing the response from the consumer's thread: closing litellm's stream
    # while its worker iterates it deadlocks httpcore's connection pool (seen in the replay tests).
    # The worker closes it itself as soon as it regains control.

    def _run(self) -> None:
        response: Any = None
        try:
            litellm = get_litellm()
            self.sending()
            response = litellm.completion(**completion_kwargs(self.req))
            if response is None:  # litellm's global drop-params path can swallow a repeated HTTP 422
                raise LLMError("bad_request", "request rejected (HTTP 422) by the provider", status=422)
            for chunk in response:
                if self.stopped.is_set():
                    return
                self.alive()
                self.received_any = True
                # Usage comes from what the provider sent (below), not from litellm's final chunk.
                self.items.put([e for e in chunk_events(chunk) if not isinstance(e, Usage)])
            self._put_usage(response)
            self.items.put(End(provider_finished=_provider_finished(response)))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer thread, which raises it
            if response is not None:
                self._put_usage(response)  # an error after the finish reason loses nothing (OpenRouter)
            self.items.put(exc)
        finally:
            if response is not None:
                _close(response)

    def _put_usage(self, response: Any) -> None:
        usage = provider_usage(response)
        if usage is not None:
            self.items.put([usage])


def provider_usage(response: Any) -> Usage | None:
    """The usage the provider itself sent, as litellm's provider code mapped it, or None.

    litellm's stream wrapper keeps every parsed chunk (``CustomStreamWrapper.chunks``); when none of
    them carried usage it makes some up for its final chunk by counting tokens with a tokenizer (a
    download from Hugging Face for some models), and estimates a reasoning share the provider never
    reported. Neither is the provider's bill, so neither is passed on.
    """
    chunks = getattr(response, "chunks", None)
    if not isinstance(chunks, list):
        return None
    for chunk in reversed(chunks):
        raw = chunk.get("usage") if isinstance(chunk, dict) else getattr(chunk, "usage", None)
        if raw:
            return usage_from(raw)
    return None


def chunk_events(chunk: Any) -> Iterator[Event]:
    """The events in one litellm streaming chunk (``ModelResponseStream``)."""
    for choice in getattr(chunk, "choices", None) or []:
        delta = getattr(choice, "delta", None)
        if delta is not None:
            reasoning = reasoning_text(delta)
            if reasoning:
                yield ReasoningDelta(reasoning)
            blocks = getattr(delta, "thinking_blocks", None)
            if blocks:
                yield from _sealed(blocks)
            content = getattr(delta, "content", None)
            if content:
                yield from content_events(content)
            for position, call in enumerate(getattr(delta, "tool_calls", None) or []):
                function = getattr(call, "function", None)
                index = getattr(call, "index", None)
                yield ToolCallDelta(
                    index=index if isinstance(index, int) else position,
                    id=getattr(call, "id", None) or None,
                    name=getattr(function, "name", None) or None,
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
    # The raw line generator too (Anthropic's iterator keeps it as ``streaming_response``): left to the
    # garbage collector, its finaliser can run inside httpcore's pool lock on another request's thread
    # and deadlock every later request of the process (seen under load in the replay tests).
    for obj in (inner, getattr(inner, "response", None), getattr(inner, "streaming_response", None)):
        close = getattr(obj, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):
                close()
