"""What a streamed chunk's content and usage mean, whichever path parsed it (the lean path's dicts or
litellm's objects): content as a string or as a list of parts, and usage with each provider's names for
cached and reasoning tokens. Recorded streams these rules come from: tests/fixtures/streams/."""

from __future__ import annotations

from typing import Any

from agentcli.llm.events import Event, ReasoningDelta, TextDelta, Usage


def field(obj: Any, name: str) -> Any:
    """``obj[name]`` for a dict, ``obj.name`` for an object, None when absent."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def content_events(content: Any) -> list[Event]:
    """The text (and reasoning) in a delta's ``content``.

    Mistral's reasoning models send a list of parts instead of a string: ``{"type": "text", "text"}``
    and ``{"type": "thinking", "thinking": [{"type": "text", "text"}]}``, several kinds in one delta.
    """
    if isinstance(content, str):
        return [TextDelta(content)] if content else []
    if not isinstance(content, list):
        return []
    out: list[Event] = []
    for part in content:
        kind = field(part, "type")
        if kind == "text":
            text = field(part, "text")
            if isinstance(text, str) and text:
                out.append(TextDelta(text))
        elif kind == "thinking":
            thinking = field(part, "thinking")
            pieces = thinking if isinstance(thinking, list) else [{"type": "text", "text": thinking}]
            text = "".join(t for t in (field(p, "text") for p in pieces) if isinstance(t, str))
            if text:
                out.append(ReasoningDelta(text))
    return out


def reasoning_text(delta: Any) -> str:
    """The reasoning in a delta: ``reasoning_content`` (DeepSeek, xAI, vLLM, Moonshot) or ``reasoning``
    (OpenRouter, Ollama, Groq)."""
    for name in ("reasoning_content", "reasoning"):
        value = field(delta, name)
        if isinstance(value, str) and value:
            return value
    return ""


def num(value: Any) -> int:
    if isinstance(value, bool):
        return 0
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def usage_from(raw: Any) -> Usage:
    """A provider's usage object (dict or litellm ``Usage``) as one ``Usage``.

    ``prompt_tokens`` includes cache reads and writes and ``completion_tokens`` includes reasoning, as
    OpenAI counts them. Cache reads go by several names: ``prompt_tokens_details.cached_tokens``
    (OpenAI), ``prompt_cache_hit_tokens`` (DeepSeek, SiliconFlow), a top-level ``cached_tokens``
    (Moonshot), ``cache_read_input_tokens`` (Anthropic through proxies). xAI leaves reasoning out of
    ``completion_tokens``; its ``total_tokens`` says so, and the reasoning is added back.
    """
    prompt_details = field(raw, "prompt_tokens_details")
    completion_details = field(raw, "completion_tokens_details")
    prompt = num(field(raw, "prompt_tokens"))
    completion = num(field(raw, "completion_tokens"))
    reasoning = num(field(completion_details, "reasoning_tokens"))
    total = num(field(raw, "total_tokens"))
    if reasoning and total and total == prompt + completion + reasoning:
        completion += reasoning
    cache_read = (
        num(field(prompt_details, "cached_tokens"))
        or num(field(raw, "prompt_cache_hit_tokens"))
        or num(field(raw, "cached_tokens"))
        or num(field(raw, "cache_read_input_tokens"))
    )
    cache_write = (
        num(field(raw, "cache_creation_input_tokens"))
        or num(field(prompt_details, "cache_write_tokens"))
        or num(field(prompt_details, "cache_creation_tokens"))
    )
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read=cache_read,
        cache_write=cache_write,
        reasoning_tokens=min(reasoning, completion),
        total_tokens=prompt + completion,
    )
