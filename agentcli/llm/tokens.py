"""Token estimates, exactly as OpenCode makes them (``src/util/token.ts``).

OpenCode counts ``round(text.length / 4)``: JavaScript's ``.length`` is UTF-16 code units (an emoji
counts 2) and ``Math.round`` rounds halves up, where Python's ``round`` would round them to even.

The estimate decides (pre-flight compaction, the tail a summary keeps, what fits in one message), so
it is one function of the text alone: never a tokenizer that is there only once a background import
of litellm has finished (which made the same request count differently from one run to the next).
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4


def utf16_length(text: str) -> int:
    """JavaScript's ``text.length`` (ASCII, the common case, without encoding)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def tokens_for_length(length: int) -> int:
    """``Math.round(length / 4)`` for a UTF-16 length: halves round up, as in JavaScript."""
    return max(0, (length + CHARS_PER_TOKEN // 2) // CHARS_PER_TOKEN)


def estimate(text: str) -> int:
    """OpenCode's estimate: ``max(0, Math.round(length / 4))``. The one text estimator: pruning,
    tail selection and request sizes all count with it."""
    return tokens_for_length(utf16_length(text or ""))


# Built once: json.dumps with non-default options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str)


def json_text(value: Any) -> str:
    """``JSON.stringify(value)``: compact separators, non-ASCII kept as is."""
    return _ENCODER.encode(value)


def estimate_json(value: Any) -> int:
    """The estimate of ``JSON.stringify(value)``."""
    return estimate(json_text(value))


def estimate_request(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Tokens a request will take: the chars/4 estimate of its JSON, whatever the model and whether
    litellm is loaded or not. Never raises."""
    try:
        payload: Any = {"messages": messages, "tools": tools} if tools else messages
        return estimate_json(payload)
    except Exception:  # noqa: BLE001 - a request we cannot even serialise still gets a number
        return estimate(str(messages)) + estimate(str(tools or ""))
