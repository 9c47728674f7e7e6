"""The context window a provider's overflow error names (each server's real words; see
tests/test_window_discovery.py), read by ``errors.classify`` so that a session learns it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentcli.llm.delta import num

# The window as each server's overflow error names it.
_ERROR_WINDOW = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"maximum context length is (\d+) tokens",  # OpenAI, vLLM, DeepSeek, OpenRouter
        r"context length is only (\d+) tokens",  # vLLM
        r"exceeds the available context size \((\d+) tokens\)",  # llama.cpp
        r"loaded with context length of only (\d+) tokens",  # LM Studio
        r"n_ctx\W{0,3}(\d+)",  # LM Studio "(n_keep: 13055>= n_ctx: 4096)", "n_ctx (7424)"
        r"too large for model with (\d+) maximum context length",  # Mistral
        r"maximum prompt length is (\d+)",  # xAI
    )
]


def from_error(detail: str, body: Any = None) -> int | None:
    """The window an overflow error names (llama.cpp's body carries it as ``error.n_ctx``)."""
    inner = body.get("error") if isinstance(body, Mapping) else None
    for source in (inner, body):
        if isinstance(source, Mapping):
            value = num(source.get("n_ctx"))
            if value:
                return value
    for pattern in _ERROR_WINDOW:
        match = pattern.search(detail or "")
        if match and int(match.group(1)) > 0:
            return int(match.group(1))
    return None
