"""Anthropic's streamed Messages events, parsed straight into our plain events.

The event types (https://docs.anthropic.com/en/api/messages-streaming): ``message_start`` (usage so
far), ``content_block_start`` / ``_delta`` / ``_stop`` per block (text, thinking with its signature,
redacted thinking, tool_use with its input as ``input_json_delta`` pieces), ``message_delta`` (stop
reason, cumulative usage), ``message_stop``, ``ping``, and ``error`` mid-stream. Finish reasons and
usage are normalised the way litellm does it (``prompt_tokens`` includes cache reads and writes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.llm.errors import ProviderHTTPError
from agentcli.llm.events import (
    Event,
    Finish,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from agentcli.llm.tokens import estimate

# Anthropic's stop reasons as litellm maps them (``map_finish_reason``); others become "stop".
FINISH = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
    "compaction": "length",
}
# The HTTP status each error type stands for (https://docs.anthropic.com/en/api/errors).
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}
_TOOL_BLOCKS = ("tool_use", "server_tool_use")


class StreamError(ProviderHTTPError):
    """An ``error`` event in the middle of a stream: the provider's own type and message."""

    def __init__(self, payload: dict[str, Any]) -> None:
        given = payload.get("error")
        error: dict[str, Any] = given if isinstance(given, dict) else {}
        self.error_type = str(error.get("type") or "api_error")
        message = str(error.get("message") or self.error_type)
        # The type goes into the message the user sees, next to the provider's words.
        body = {"type": "error", "error": {**error, "message": f"{message} ({self.error_type})"}}
        super().__init__(ERROR_STATUS.get(self.error_type, 500), body)


class MessagesParser:
    """Turns each event's data object into our events; ``finished`` once a stop reason came."""

    def __init__(self, tool_names: Mapping[str, str] | None = None) -> None:
        self.tool_names = tool_names or {}
        self.finished = False
        self._usage: dict[str, Any] = {}
        self._reasoning: list[str] = []
        self._block = ""  # the type of the content block being streamed
        self._tool = -1  # index of the current tool call among this answer's calls
        self._tool_args = False

    def feed(self, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        if kind == "content_block_delta":
            return self._delta(event.get("delta") or {})
        if kind == "content_block_start":
            return self._start(event.get("content_block") or {})
        if kind == "content_block_stop":
            return self._stop()
        if kind == "message_delta":
            return self._message_delta(event)
        if kind == "message_start":
            usage = (event.get("message") or {}).get("usage")
            if isinstance(usage, dict):
                self._usage.update(usage)
            return []
        if kind == "error":
            raise StreamError(event)
        return []  # ping, message_stop, and event types this version does not know

    def _delta(self, delta: dict[str, Any]) -> list[Event]:
        kind = delta.get("type")
        if kind == "text_delta":
            text = delta.get("text")
            return [TextDelta(text)] if text else []
        if kind == "input_json_delta":
            piece = delta.get("partial_json")
            if self._block not in _TOOL_BLOCKS or not piece:
                return []
            self._tool_args = True
            return [ToolCallDelta(self._tool, None, None, piece)]
        if kind == "thinking_delta":
            text = delta.get("thinking")
            if not text:
                return []
            self._reasoning.append(text)
            return [ReasoningDelta(text)]
        if kind == "signature_delta":
            signature = delta.get("signature")
            return [ReasoningSignature(signature)] if signature else []
        return []  # citations and other deltas carry nothing we show

    def _start(self, block: dict[str, Any]) -> list[Event]:
        self._block = kind = str(block.get("type") or "")
        if kind == "text":
            text = block.get("text")
            return [TextDelta(text)] if text else []
        if kind in _TOOL_BLOCKS:
            self._tool += 1
            self._tool_args = False
            name = block.get("name")
            shown = self.tool_names.get(name, name) if isinstance(name, str) else name
            return [ToolCallDelta(self._tool, block.get("id"), shown, "")]
        if kind == "thinking":
            text = block.get("thinking")
            return [ReasoningDelta(text)] if text else []
        if kind == "redacted_thinking":
            return [RedactedReasoning(str(block.get("data") or ""))]
        return []

    def _stop(self) -> list[Event]:
        events: list[Event] = []
        if self._block in _TOOL_BLOCKS and not self._tool_args:
            events.append(ToolCallDelta(self._tool, None, None, "{}"))  # a call without input: {}
        self._block = ""
        return events

    def _message_delta(self, event: dict[str, Any]) -> list[Event]:
        events: list[Event] = []
        usage = event.get("usage")
        if isinstance(usage, dict):
            self._usage.update(usage)  # cumulative, but may leave out what message_start said
        if self._usage:
            events.append(self.usage())
        reason = (event.get("delta") or {}).get("stop_reason")
        if reason:
            events.append(Finish(FINISH.get(reason, "stop")))
            self.finished = True
        return events

    def usage(self) -> Usage:
        raw = self._usage
        read = _num(raw.get("cache_read_input_tokens"))
        write = _num(raw.get("cache_creation_input_tokens"))
        prompt = _num(raw.get("input_tokens")) + read + write
        completion = _num(raw.get("output_tokens"))
        details = raw.get("output_tokens_details")
        thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
        if thinking is None and self._reasoning:
            # Anthropic counts thinking inside output_tokens without saying how much: estimated, as
            # litellm does (it counts with a tokenizer; chars/4 here, never a download).
            thinking = estimate("".join(self._reasoning))
        return Usage(
            prompt_tokens=prompt,
            completion_tokens=completion,
            cache_read=read,
            cache_write=write,
            reasoning_tokens=min(_num(thinking), completion),
            total_tokens=prompt + completion,
        )


def _num(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
