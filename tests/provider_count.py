"""A provider's own count of a request's input tokens, for the scripted server to report: a real BPE
tokenizer (OpenAI's cl100k_base, through tiktoken, which litellm installs with its vocabulary files)
over what the model reads — each message's text, its tool calls' names and arguments, the tool
schemas — plus a few tokens of framing per message, as OpenAI documents its chat format. It knows
nothing of agentcli's estimate (4 characters a token of the request's JSON), so a figure that only
restates that estimate is caught."""

from __future__ import annotations

import importlib.util
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

PER_MESSAGE = 3  # <|start|>role ... <|end|>, as OpenAI's cookbook counts a chat message
PER_REQUEST = 3  # the reply's own <|start|>assistant


@cache
def _encoding() -> Any:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))  # the vocabulary litellm ships: offline
    try:
        import tiktoken

        return tiktoken.get_encoding("cl100k_base")
    except Exception:  # noqa: BLE001 - no vocabulary here: the caller skips with the reason
        return None


def available() -> bool:
    return _encoding() is not None


def count(text: str) -> int:
    return len(_encoding().encode(text, disallowed_special=()))


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(item.get("text", "")) for item in content if isinstance(item, dict))
    return ""


def message_tokens(message: dict[str, Any]) -> int:
    tokens = PER_MESSAGE + count(str(message.get("role", ""))) + count(_content(message.get("content")))
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        tokens += (
            PER_MESSAGE + count(str(function.get("name", ""))) + count(str(function.get("arguments", "")))
        )
    if message.get("tool_call_id"):
        tokens += 1
    return tokens


def request_tokens(body: dict[str, Any]) -> int:
    """The input tokens of one chat-completions request body."""
    tokens = PER_REQUEST + sum(message_tokens(m) for m in body.get("messages") or [])
    tools = body.get("tools") or []
    if tools:
        tokens += count(json.dumps([t.get("function", t) for t in tools], ensure_ascii=False))
    return tokens
