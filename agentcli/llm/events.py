"""What one streamed chat completion is asked (``ChatRequest``) and what it yields (the events),
shared by both streaming paths (``lean`` and litellm's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    api_base: str | None = None
    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    timeout: float = 600  # seconds, per read (the provider's options.timeout)
    first_byte_timeout: float | None = None  # silence allowed before the answer starts (watch.py)
    idle_timeout: float | None = None  # silence allowed between chunks (watch.py)
    extra: dict[str, Any] = field(default_factory=dict)  # passed to litellm.completion as is


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ReasoningSignature:
    """The provider's seal over the reasoning just streamed (Anthropic's thinking ``signature``): it
    ends that reasoning block and goes back, byte for byte, with it on the next request."""

    signature: str


@dataclass(frozen=True)
class RedactedReasoning:
    """A reasoning block the provider sent encrypted (Anthropic's ``redacted_thinking``): nothing to
    show, but it goes back as it came on the next request."""

    data: str


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


Event = TextDelta | ReasoningDelta | ReasoningSignature | RedactedReasoning | ToolCallDelta | Finish | Usage
