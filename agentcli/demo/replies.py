"""The scripted server's script: the responses a test (or the demo) queues, and their JSON form.

``Reply`` streams text, reasoning and tool calls; ``ErrorResponse`` is an HTTP error (with presets
for the provider errors agentcli handles); ``Hang`` accepts a request and says nothing. ``Recorded``
is one request as the server saw it; ``Rule`` answers matching requests without using the queue.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentcli.demo import anthropic_wire
from agentcli.demo.anthropic_wire import AnthropicReply


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    index: int | None = (
        None  # its index in an OpenAI-style stream; None: its place (some providers reuse one)
    )

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    # Anthropic-style cache writes, as OpenAI-compatible proxies for Anthropic report them.
    cache_write_tokens: int = 0

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
        }
        if self.cache_write_tokens:
            out["cache_creation_input_tokens"] = self.cache_write_tokens
        return out


@dataclass
class Reply:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None  # default: "tool_calls" with tool calls, else "stop"
    usage: Usage | None = None  # default: made up from the sizes of request and reply
    send_usage: bool = True  # False: a server that never reports usage (some gateways, local servers)
    chunk_size: int = 8  # characters per content / reasoning / argument delta
    delay: float = 0.0  # seconds between chunks
    cut_after: int | None = None  # send this many chunks, then drop the connection without [DONE]
    cut_clean: bool = False  # with cut_after: end the HTTP response properly instead (a proxy cutting it)
    stall: float = 0.0  # with cut_after: stay connected and silent this many seconds first (a stalled stream)
    stream: bool | None = None  # None: follow the request's "stream" flag
    hold: threading.Event | None = None  # after the first piece, wait for it: a reply as slow as a test needs


@dataclass
class ErrorResponse:
    status: int
    body: dict[str, Any] | str = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def context_length(cls) -> ErrorResponse:
        return cls(
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in 9000 tokens.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            },
        )

    @classmethod
    def unauthorized(cls) -> ErrorResponse:
        return cls(
            401,
            {
                "error": {
                    "message": "Incorrect API key provided: sk-test.",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )

    @classmethod
    def rate_limited(cls, retry_after: float = 2) -> ErrorResponse:
        return cls(
            429,
            {
                "error": {
                    "message": "Rate limit reached for requests.",
                    "type": "requests",
                    "code": "rate_limit_exceeded",
                }
            },
            {"retry-after": f"{retry_after:g}"},
        )

    @classmethod
    def server_error(cls) -> ErrorResponse:
        return cls(
            500,
            {
                "error": {
                    "message": "The server had an error while processing your request.",
                    "type": "server_error",
                }
            },
        )

    @classmethod
    def too_large(cls) -> ErrorResponse:
        return cls(413, "Request Entity Too Large", {"content-type": "text/plain"})


@dataclass
class Hang:
    seconds: float


Response = Reply | ErrorResponse | Hang | AnthropicReply


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]  # keys lower-cased
    body: dict[str, Any]
    method: str = "POST"
    title: bool = False  # a session-title request (system message names the "title generator")
    outcome: str = "pending"  # complete | error | cut | hang | client_closed | unscripted


@dataclass
class Rule:
    predicate: Callable[[Recorded], bool]
    factory: Callable[[Recorded], Response]


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def is_chat_path(path: str) -> bool:
    """A chat request: OpenAI's chat completions, or Anthropic's Messages API (``anthropic_wire``)."""
    return path.rstrip("/").endswith(("/chat/completions", "/messages"))


def is_title_request(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or []
    system = body.get("system")  # Anthropic's Messages API: the system prompt is top-level
    if system and "title generator" in _message_text({"content": system}).lower():
        return True
    return any(
        isinstance(m, dict) and m.get("role") == "system" and "title generator" in _message_text(m).lower()
        for m in messages
    )


SUMMARY_INSTRUCTION = "Write the summary of the conversation above."
SUMMARY_LEAD = "the conversation above is about to be shortened"  # the cache-riding request's first line


def is_summary_request(body: dict[str, Any]) -> bool:
    """A compaction's summary request, either shape: the transcript (the head written out inside
    ``<conversation>``) or the conversation as sent with the summary instruction last."""
    messages = body.get("messages") or []
    last = messages[-1] if messages and isinstance(messages[-1], dict) else {}
    text = _message_text(last)
    return last.get("role") == "user" and any(
        mark in text for mark in ("<conversation>", SUMMARY_INSTRUCTION, SUMMARY_LEAD)
    )


# -- JSON scripts ----------------------------------------------------------------------------

_PRESETS: dict[str, Callable[[], ErrorResponse]] = {
    "context_length": ErrorResponse.context_length,
    "unauthorized": ErrorResponse.unauthorized,
    "rate_limited": ErrorResponse.rate_limited,
    "server_error": ErrorResponse.server_error,
    "too_large": ErrorResponse.too_large,
}


def response_from_json(obj: dict[str, Any]) -> Response:
    """One response from its JSON form (see the module docstring)."""
    kind = obj.get("type", "reply")
    fields = {k: v for k, v in obj.items() if k != "type"}
    if kind == "hang":
        return Hang(float(fields.get("seconds", 60)))
    if kind == "anthropic":
        return anthropic_wire.reply_from_json(fields, response_from_json)
    if kind == "error":
        if "preset" in fields:
            return _PRESETS[fields["preset"]]()
        return ErrorResponse(int(fields["status"]), fields.get("body", {}), fields.get("headers", {}))
    if kind != "reply":
        raise ValueError(f"fakellm: unknown response type {kind!r}")
    calls = [ToolCall(**c) for c in fields.pop("tool_calls", [])]
    usage = fields.pop("usage", None)
    return Reply(tool_calls=calls, usage=Usage(**usage) if usage else None, **fields)
