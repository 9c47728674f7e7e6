"""OpenAI-style server-sent events, parsed straight from the bytes into stream events.

The SSE framing (https://html.spec.whatwg.org/multipage/server-sent-events.html) as far as chat
completions use it: ``data:`` lines (several make one event, joined by newlines), a blank line ends an
event, ``:`` comments and ``event:``/``id:``/``retry:`` fields are ignored. Each event's data is one
``chat.completion.chunk`` JSON object, or ``[DONE]``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from agentcli.llm.delta import content_events, usage_from
from agentcli.llm.events import Event, Finish, ReasoningDelta, TextDelta, ToolCallDelta

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
    """The events in one ``chat.completion.chunk`` object (the dict twin of litellm_path.chunk_events)."""
    out: list[Event] = []
    for choice in chunk.get("choices") or ():
        delta = choice.get("delta")
        if delta:
            # Inline for the common shapes (this runs for every chunk); delta.content_events and
            # reasoning_text say what the fields mean.
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and type(reasoning) is str:
                out.append(ReasoningDelta(reasoning))
            content = delta.get("content")
            if content:
                if type(content) is str:
                    out.append(TextDelta(content))
                else:  # Mistral: a list of thinking and text parts
                    out += content_events(content)
            calls = delta.get("tool_calls")
            if calls:
                out += _tool_call_events(calls)
        reason = choice.get("finish_reason")
        if reason:
            out.append(Finish(str(reason)))
    usage = chunk.get("usage")
    if usage:
        out.append(usage_from(usage))
    return out


def _tool_call_events(calls: list[Any]) -> list[Event]:
    out: list[Event] = []
    for position, call in enumerate(calls):
        function = call.get("function") or {}
        index = call.get("index")
        out.append(
            ToolCallDelta(
                index=index if isinstance(index, int) else position,
                id=call.get("id") or None,
                name=function.get("name") or None,
                arguments=function.get("arguments") or "",
            )
        )
    return out
