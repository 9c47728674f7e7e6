"""The scripted server's wire format: a ``Reply`` as OpenAI's streamed chunks or one JSON answer."""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

from agentcli.demo.replies import Reply, Usage


class Ids(Protocol):
    """Where the chunks' ids come from (the server: unique per server, in order)."""

    def _new_id(self, prefix: str) -> str: ...


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _default_usage(body: dict[str, Any], reply: Reply) -> Usage:
    prompt = max(1, len(json.dumps(body.get("messages", []))) // 4)
    produced = len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_json()) for c in reply.tool_calls)
    return Usage(prompt_tokens=prompt, completion_tokens=max(1, produced // 4))


def _finish_reason(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def stream_chunks(server: Ids, body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    """The SSE data objects of one streamed reply, in order (without the final [DONE])."""
    base = {
        "id": server._new_id("chatcmpl-fake"),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "test-model"),
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in _pieces(reply.reasoning, reply.chunk_size)]
    out += [chunk({"content": p}) for p in _pieces(reply.text, reply.chunk_size)]
    for place, call in enumerate(reply.tool_calls):
        index = place if call.index is None else call.index
        head = {
            "index": index,
            "id": call.id or server._new_id("call_"),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        out.append(chunk({"tool_calls": [head]}))
        out += [
            chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
            for p in _pieces(call.arguments_json(), reply.chunk_size)
        ]
    out.append(chunk({}, _finish_reason(reply)))
    if reply.send_usage and (body.get("stream_options") or {}).get("include_usage"):
        usage = reply.usage or _default_usage(body, reply)
        out.append({**base, "choices": [], "usage": usage.payload()})
    return out


def completion_object(server: Ids, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """The non-streaming JSON answer for one reply."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id or server._new_id("call_"),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments_json()},
            }
            for c in reply.tool_calls
        ]
    usage = reply.usage or _default_usage(body, reply)
    return {
        "id": server._new_id("chatcmpl-fake"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test-model"),
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(reply)}],
        "usage": usage.payload(),
    }
