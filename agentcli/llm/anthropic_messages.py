"""Chat-completions messages as Anthropic's Messages API takes them: what litellm 1.106 sends
(``anthropic_messages_pt`` and ``translate_system_message`` in its prompt templates and anthropic
transformation), for the messages agentcli builds.

- The leading system messages become the top-level ``system`` blocks; a later one becomes a user turn
  behind litellm's operator note (``place_mid_conversation_system`` for models without mid-conversation
  system support; for the others ``Unsupported`` is raised and litellm serves the request).
- Consecutive user-side messages (user, tool results) merge into one user turn, consecutive assistant
  messages into one assistant turn; tool results become ``tool_result`` blocks, tool calls ``tool_use``.
- ``thinking_blocks`` on an assistant message (signed thinking, redacted thinking) go first, unchanged.
- ``cache_control`` is carried where litellm carries it (``llm.cache`` puts it there).
- Empty text becomes litellm's placeholder (Anthropic rejects empty text blocks); the final assistant
  turn loses trailing whitespace (Anthropic rejects it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import groupby
from typing import Any

EMPTY_TEXT = "[System: Empty message content sanitised to satisfy protocol]"
SYSTEM_NOTE = (
    "Operator note (not from the user): the following was originally a mid-conversation system-role reminder."
)
_INVALID_ID = re.compile(r"[^a-zA-Z0-9_-]")
_USER_SIDE = frozenset({"user", "tool", "function"})

Message = dict[str, Any]


class Unsupported(Exception):
    """A request this module does not translate the way litellm would: litellm serves it."""


class BadMessages(ValueError):
    """Messages that cannot be sent to Anthropic at all (litellm raises a 400 for them too)."""


def split_system(messages: Sequence[Message]) -> tuple[list[dict[str, Any]], list[Message]]:
    """The top-level ``system`` blocks (from the leading system messages) and the rest."""
    lead = next((i for i, m in enumerate(messages) if m.get("role") != "system"), len(messages))
    return [block for m in messages[:lead] for block in _system_blocks(m)], list(messages[lead:])


def place_later_system(messages: Sequence[Message], keeps_system_role: bool) -> list[Message]:
    """Later system messages as user turns behind the operator note (a run just before tool results
    moves behind them: ``tool_result`` blocks must open the user turn)."""
    if not any(m.get("role") == "system" for m in messages):
        return list(messages)
    if keeps_system_role:
        raise Unsupported("mid-conversation system messages on a model that keeps them")
    runs = [(kind, list(group)) for kind, group in groupby(messages, key=_kind)]
    out: list[Message] = []
    for index, (kind, run) in enumerate(runs):
        follower = runs[index + 1][0] if index + 1 < len(runs) else None
        if kind == "system":
            if follower != "tool":
                out += _as_user_turns(run)
        elif kind == "tool" and index > 0 and runs[index - 1][0] == "system":
            out += run + _as_user_turns(runs[index - 1][1])
        else:
            out += run
    return out


def convert(messages: Sequence[Message], tool_names: Mapping[str, str]) -> list[dict[str, Any]]:
    """The conversation (no leading system messages) as Anthropic messages; ``tool_names`` renames
    tools whose names Anthropic would reject (original → sent)."""
    if not messages:
        raise BadMessages("Anthropic requires at least one non-system message")
    items = [_without_empty_text(m) for m in messages]
    out: list[dict[str, Any]] = []
    i = 0
    while i < len(items):
        start = i
        user: list[dict[str, Any]] = []
        while i < len(items) and items[i].get("role") in _USER_SIDE:
            user += _user_blocks(items[i])
            i += 1
        if user:
            out.append({"role": "user", "content": user})
        assistant: list[dict[str, Any]] = []
        seen_ids: set[str] = set()
        while i < len(items) and items[i].get("role") == "assistant":
            assistant += _assistant_blocks(items[i], tool_names, seen_ids)
            i += 1
        if assistant:
            out.append({"role": "assistant", "content": assistant})
        if i == start:
            raise Unsupported(f"message role {items[i].get('role')!r}")
    if out and out[-1]["role"] == "assistant":
        for block in out[-1]["content"]:
            if block.get("type") == "text":
                block["text"] = block["text"].rstrip()
    return out


def has_tool_blocks(messages: Sequence[Message]) -> bool:
    """Whether the history holds tool calls or results (Anthropic then wants a ``tools`` list)."""
    return any(m.get("role") in ("tool", "function") or m.get("tool_calls") for m in messages)


def tool_use_id(call_id: str) -> str:
    """A tool call id as Anthropic accepts it (``^[a-zA-Z0-9_-]+$``), as litellm rewrites it."""
    return _INVALID_ID.sub("_", call_id or "") or "tool_use_id"


# -- system ----------------------------------------------------------------------------------


def _kind(message: Message) -> str:
    role = message.get("role")
    return "system" if role == "system" else "tool" if role in ("tool", "function") else "other"


def _system_parts(message: Message) -> Iterator[tuple[str, dict[str, Any] | None]]:
    content = message.get("content")
    if isinstance(content, str):
        if content:
            yield content, message.get("cache_control")
        return
    for part in content if isinstance(content, list) else ():
        if isinstance(part, dict) and part.get("type") == "text" and part.get("text"):
            yield part["text"], part.get("cache_control")


def _system_blocks(message: Message) -> list[dict[str, Any]]:
    return [_text(text, cache) for text, cache in _system_parts(message)]


def _as_user_turns(run: list[Message]) -> list[Message]:
    turns = []
    for message in run:
        parts = [_text(text, _ephemeral(cache)) for text, cache in _system_parts(message)]
        if parts:
            turns.append({"role": "user", "content": [{"type": "text", "text": SYSTEM_NOTE}, *parts]})
    return turns


def _ephemeral(cache: Any) -> dict[str, Any] | None:
    """A system message's ``cache_control`` rebuilt as litellm does when it re-rolls the message."""
    if not isinstance(cache, dict) or cache.get("type") != "ephemeral":
        return None
    ttl = cache.get("ttl")
    return {"type": "ephemeral", "ttl": ttl} if ttl in ("1h", "5m") else {"type": "ephemeral"}


def _text(text: str, cache: Any = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if isinstance(cache, dict):
        block["cache_control"] = cache
    return block


# -- user side -------------------------------------------------------------------------------


def _without_empty_text(message: Message) -> Message:
    if message.get("role") not in ("user", "assistant"):
        return message
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": EMPTY_TEXT} if not content.strip() else message
    if isinstance(content, list) and any(_empty_text(p) for p in content):
        parts = [{**p, "text": EMPTY_TEXT} if _empty_text(p) else p for p in content]
        return {**message, "content": parts}
    return message


def _empty_text(part: Any) -> bool:
    if not isinstance(part, dict) or part.get("type") != "text":
        return False
    text = part.get("text")
    return not isinstance(text, str) or not text.strip()


def _user_blocks(message: Message) -> list[dict[str, Any]]:
    if message.get("role") != "user":
        return [_tool_result(message)]
    content = message.get("content")
    if isinstance(content, str):
        return [_text(content, message.get("cache_control"))]
    blocks = []
    for part in content if isinstance(content, list) else ():
        block = _user_part(part) if isinstance(part, dict) else None
        if block is not None:
            if isinstance(part.get("cache_control"), dict):
                block["cache_control"] = part["cache_control"]
            blocks.append(block)
    return blocks


def _user_part(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": part.get("text")}
    if kind == "image_url":
        return _image(part.get("image_url"))
    if kind == "file":
        return _document(part.get("file"))
    if kind == "document":
        return {k: v for k, v in part.items() if k != "cache_control"}
    return None


def _image(image_url: Any) -> dict[str, Any]:
    url = image_url.get("url", "") if isinstance(image_url, dict) else str(image_url or "")
    fmt = image_url.get("format") if isinstance(image_url, dict) else None
    if url.startswith("https://"):
        return {"type": "image", "source": {"type": "url", "url": url}}
    if url.startswith("http://"):
        raise Unsupported("an http:// image (litellm downloads it)")
    media_type, data = _data_url(url, fmt)
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _document(file: Any) -> dict[str, Any]:
    data_url = file.get("file_data") if isinstance(file, dict) else None
    if not data_url:
        raise Unsupported("a file part without file_data")
    media_type, data = _data_url(data_url, file.get("format"))
    return {"type": "document", "source": {"type": "base64", "media_type": media_type, "data": data}}


def _data_url(url: str, fmt: str | None) -> tuple[str, str]:
    if not url.startswith("data:") or ";base64," not in url:
        raise BadMessages("Image url not in expected format: expected a data: URL with base64 data")
    media_type, data = url[5:].split(";base64,", 1)
    return (fmt or media_type.replace("\\/", "/")), data


def _tool_result(message: Message) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, list):
        result_content: Any = [_result_part(p) for p in content if isinstance(p, dict)]
        result_content = [p for p in result_content if p is not None]
    else:
        result_content = content if isinstance(content, str) else ""
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": tool_use_id(str(message.get("tool_call_id") or "")),
        "content": result_content,
    }
    if message.get("cache_control") is not None:
        block["cache_control"] = message["cache_control"]
    return block


def _result_part(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "text":
        block = {"type": "text", "text": part.get("text")}
    elif kind == "image_url":
        url = (
            part["image_url"].get("url") if isinstance(part.get("image_url"), dict) else part.get("image_url")
        )
        if isinstance(url, str) and url.startswith("data:") and not url.startswith("data:image/"):
            raise Unsupported("a document in a tool result")
        block = _image(part.get("image_url"))
    elif kind == "file":
        block = _document(part.get("file"))
    else:
        return None
    if part.get("cache_control") is not None:
        block["cache_control"] = part["cache_control"]
    return block


# -- assistant side ----------------------------------------------------------------------------


def _assistant_blocks(message: Message, names: Mapping[str, str], seen_ids: set[str]) -> list[dict[str, Any]]:
    content = message.get("content")
    parts = content if isinstance(content, list) else []
    blocks: list[dict[str, Any]] = []
    inline_thinking = any(isinstance(p, dict) and p.get("type") in _THINKING for p in parts)
    if not inline_thinking:
        blocks += [dict(b) for b in message.get("thinking_blocks") or () if _signable(b)]
    if isinstance(content, str) and content:
        blocks.append(_text(content, message.get("cache_control")))
    for part in parts:
        block = _assistant_part(part) if isinstance(part, dict) else None
        if block is not None:
            blocks.append(block)
    for call in message.get("tool_calls") or ():
        block = _tool_use(call, names) if isinstance(call, dict) else None
        if block is not None and block["id"] not in seen_ids:
            seen_ids.add(block["id"])
            blocks.append(block)
    if message.get("function_call") is not None:
        raise Unsupported("a legacy function_call message")
    return blocks


_THINKING = ("thinking", "redacted_thinking")


def _signable(block: Any) -> bool:
    """A thinking block Anthropic can verify: signed thinking, or redacted thinking."""
    if not isinstance(block, dict) or block.get("type") not in _THINKING:
        return False
    return block.get("type") == "redacted_thinking" or bool(block.get("signature"))


def _assistant_part(part: dict[str, Any]) -> dict[str, Any] | None:
    kind = part.get("type")
    if kind == "thinking":
        return dict(part) if _signable(part) else None
    if kind == "text" and part.get("text"):
        return _text(part["text"], part.get("cache_control"))
    if kind in ("server_tool_use",) or str(kind).endswith("_tool_result"):
        raise Unsupported(f"an assistant {kind} block")
    return None


def _tool_use(call: dict[str, Any], names: Mapping[str, str]) -> dict[str, Any] | None:
    if call.get("type") != "function":
        return None
    function = call.get("function") or {}
    name = function.get("name")
    block: dict[str, Any] = {
        "type": "tool_use",
        "id": tool_use_id(str(call.get("id") or "")),
        "name": names.get(name, name) if isinstance(name, str) else name,
        "input": _arguments(function.get("arguments"), name),
    }
    if isinstance(call.get("cache_control"), dict):
        block["cache_control"] = call["cache_control"]
    return block


def _arguments(arguments: Any, tool: str | None) -> Any:
    if not isinstance(arguments, str) or not arguments.strip():
        return {}
    try:
        return json.loads(arguments)
    except ValueError as exc:
        # litellm tries a bracket repair first; our stored inputs are always whole JSON.
        raise BadMessages(f"Failed to parse tool call arguments for tool '{tool}': {exc}") from exc
