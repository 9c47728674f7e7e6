"""OpenAI-style server-sent events, parsed straight from the bytes into stream events.

The SSE framing (https://html.spec.whatwg.org/multipage/server-sent-events.html) as far as chat
completions use it: ``data:`` lines (several make one event, joined by newlines), a blank line ends an
event, ``:`` comments and ``event:``/``id:``/``retry:`` fields are ignored. Each event's data is one
``chat.completion.chunk`` JSON object, or ``[DONE]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agentcli.llm.events import Event, Finish, ReasoningDelta, TextDelta, ToolCallDelta, Usage

DONE = b"[DONE]"


def sse_data(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The data of each event in a byte stream, as it completes."""
    rest = b""
    data: list[bytes] = []
    for chunk in chunks:
        lines = (rest + chunk).split(b"\n") if rest else chunk.split(b"\n")
        rest = lines.pop()  # an unfinished line waits for the next chunk
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    yield data[0] if len(data) == 1 else b"\n".join(data)
                    data = []
            elif line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
    if rest.startswith(b"data:"):
        value = rest[5:]
        data.append(value[1:] if value.startswith(b" ") else value)
    if data:
        yield b"\n".join(data)


def chunk_events(chunk: dict[str, Any]) -> list[Event]:
    """The events in one ``chat.completion.chunk`` object (the dict twin of stream.chunk_events)."""
    out: list[Event] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta")
        if delta:
            # OpenRouter and some gateways name the field "reasoning"; litellm maps both.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                out.append(ReasoningDelta(reasoning))
            content = delta.get("content")
            if content:
                out.append(TextDelta(content))
            calls = delta.get("tool_calls")
            if calls:
                for position, call in enumerate(calls):
                    function = call.get("function") or {}
                    index = call.get("index")
                    out.append(
                        ToolCallDelta(
                            index=index if isinstance(index, int) else position,
                            id=call.get("id"),
                            name=function.get("name"),
                            arguments=function.get("arguments") or "",
                        )
                    )
        reason = choice.get("finish_reason")
        if reason:
            out.append(Finish(str(reason)))
    usage = chunk.get("usage")
    if usage:
        out.append(usage_from_dict(usage))
    return out


def usage_from_dict(raw: dict[str, Any]) -> Usage:
    """OpenAI usage (plus Anthropic-style cache writes, as proxies report them) as one ``Usage``."""
    prompt_details = raw.get("prompt_tokens_details") or {}
    completion_details = raw.get("completion_tokens_details") or {}
    prompt = _num(raw.get("prompt_tokens"))
    completion = _num(raw.get("completion_tokens"))
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        cache_read=_num(prompt_details.get("cached_tokens")) or _num(raw.get("cache_read_input_tokens")),
        cache_write=_num(raw.get("cache_creation_input_tokens"))
        or _num(prompt_details.get("cache_creation_tokens")),
        reasoning_tokens=_num(completion_details.get("reasoning_tokens")),
        total_tokens=_num(raw.get("total_tokens")) or prompt + completion,
    )


def _num(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
