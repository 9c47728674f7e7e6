"""The scripted server's Anthropic side: ``POST /v1/messages`` answered with Anthropic's streamed
events, from the same scripted replies the chat-completions side streams.

A ``Reply`` (``scripted_server``) becomes ``message_start`` (input and cache usage), a ``ping``, one
content block each for its reasoning (``thinking`` deltas, then a ``signature_delta``), its text
(``text_delta``) and each tool call (``tool_use`` with its input in ``input_json_delta`` pieces), then
``message_delta`` (stop reason, output tokens) and ``message_stop``. ``AnthropicReply`` wraps a reply
with what only this stream carries: the signature, redacted thinking blocks, and an ``error`` event
in the middle of the stream. Usage maps from the reply's chat-completions figures (``prompt_tokens``
includes cached tokens; Anthropic's ``input_tokens`` does not).

In a JSON script: ``{"type": "anthropic", "reply": {...a reply...}, "signature": "…",
"redacted": ["…"], "error": {"type": "overloaded_error", "message": "Overloaded"}, "error_after": 3}``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

FAST_BATCH = 64  # events per HTTP chunk when a reply streams without delays
_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


class ReplyLike(Protocol):
    """The fields of ``scripted_server.Reply`` read here (imported by it, so not importing it)."""

    text: str
    reasoning: str
    tool_calls: list[Any]
    finish_reason: str | None
    usage: Any
    chunk_size: int
    delay: float
    cut_after: int | None


@dataclass
class AnthropicReply:
    reply: Any  # a scripted_server.Reply
    signature: str | None = None  # the thinking block's signature (default: derived from its text)
    redacted: list[str] = field(default_factory=list)  # redacted_thinking blocks' data, sent first
    error: dict[str, Any] | None = None  # sent as an `error` event, ending the stream ...
    error_after: int = 2  # ... after this many events


def signature_for(reasoning: str) -> str:
    """The signature a scripted thinking block carries unless the script sets one."""
    return "sig-" + hashlib.sha256(reasoning.encode()).hexdigest()[:24]


def events(
    ids: Callable[[str], str], body: dict[str, Any], response: Any
) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) pairs of one scripted answer, in order."""
    extra = response if isinstance(response, AnthropicReply) else AnthropicReply(response)
    reply: ReplyLike = extra.reply
    blocks: list[list[dict[str, Any]]] = [
        [{"type": "content_block_start", "content_block": {"type": "redacted_thinking", "data": data}}]
        for data in extra.redacted
    ]
    if reply.reasoning:
        signature = extra.signature or signature_for(reply.reasoning)
        blocks.append(
            [
                {
                    "type": "content_block_start",
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                }
            ]
            + [
                _delta({"type": "thinking_delta", "thinking": p})
                for p in _pieces(reply.reasoning, reply.chunk_size)
            ]
            + [_delta({"type": "signature_delta", "signature": signature})]
        )
    if reply.text:
        blocks.append(
            [{"type": "content_block_start", "content_block": {"type": "text", "text": ""}}]
            + [_delta({"type": "text_delta", "text": p}) for p in _pieces(reply.text, reply.chunk_size)]
        )
    for call in reply.tool_calls:
        start = {"type": "tool_use", "id": call.id or ids("toolu_"), "name": call.name, "input": {}}
        blocks.append(
            [{"type": "content_block_start", "content_block": start}]
            + [
                _delta({"type": "input_json_delta", "partial_json": p})
                # A call without input still gets one (empty) piece, as Anthropic sends it.
                for p in _pieces(call.arguments_json(), reply.chunk_size) or [""]
            ]
        )
    input_tokens, cache_read, cache_write, output = _usage(body, reply)
    out: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {
                "id": ids("msg_fake"),
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "test-model"),
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cache_read,
                    "output_tokens": 1,
                },
            },
        },
        {"type": "ping"},
    ]
    for index, block in enumerate(blocks):
        out += [{**event, "index": index} for event in block]
        out.append({"type": "content_block_stop", "index": index})
    out.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
            "usage": {"output_tokens": output},
        }
    )
    out.append({"type": "message_stop"})
    if extra.error is not None:
        out = out[: extra.error_after] + [{"type": "error", "error": extra.error}]
    return [(str(event["type"]), event) for event in out]


def frame(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def serve(handler: Any, server: Any, rec: Any, body: dict[str, Any], response: Any) -> None:
    """Stream ``response`` to ``handler``'s client as Anthropic does (``scripted_server`` calls this)."""
    reply = response.reply if isinstance(response, AnthropicReply) else response
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    if reply.delay <= 0 and reply.cut_after is None:
        # Fast mode, as on the chat-completions side: a large reply served again is encoded once.
        key = (id(response), "anthropic", str(body.get("model")))
        frames = server._encoded.get(key)
        if frames is None:
            frames = [frame(n, d) for n, d in events(server._new_id, body, response)]
            if len(frames) >= 1000:
                server._encoded[key] = frames
        for start in range(0, len(frames), FAST_BATCH):
            handler._write_chunk(b"".join(frames[start : start + FAST_BATCH]))
        handler._write_chunk(b"")
        rec.outcome = "complete"
        return
    for n, (name, data) in enumerate(events(server._new_id, body, response)):
        if reply.cut_after is not None and n >= reply.cut_after:
            rec.outcome = "cut"
            handler._drop()
        if n and not server._sleep(reply.delay):
            handler._drop()
        handler._write_chunk(frame(name, data))
    handler._write_chunk(b"")
    rec.outcome = "complete"


def reply_from_json(fields: dict[str, Any], parse_reply: Callable[[dict[str, Any]], Any]) -> AnthropicReply:
    """An ``AnthropicReply`` from its JSON form (``parse_reply`` reads the inner reply)."""
    rest = {k: v for k, v in fields.items() if k != "reply"}
    return AnthropicReply(parse_reply(fields.get("reply") or {}), **rest)


def _delta(delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "delta": delta}


def _pieces(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def _stop_reason(reply: ReplyLike) -> str:
    if reply.finish_reason is None:
        return "tool_use" if reply.tool_calls else "end_turn"
    return _STOP_REASONS.get(reply.finish_reason, reply.finish_reason)


def _usage(body: dict[str, Any], reply: ReplyLike) -> tuple[int, int, int, int]:
    """(input, cache read, cache write, output) tokens: the script's, or made up from the sizes."""
    usage = reply.usage
    if usage is None:
        prompt = max(1, len(json.dumps([body.get("system"), body.get("messages", [])])) // 4)
        produced = (
            len(reply.text) + len(reply.reasoning) + sum(len(c.arguments_json()) for c in reply.tool_calls)
        )
        return prompt, 0, 0, max(1, produced // 4)
    read, write = usage.cached_tokens, usage.cache_write_tokens
    return max(0, usage.prompt_tokens - read - write), read, write, usage.completion_tokens
