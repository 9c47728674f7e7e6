"""OpenCode's tool names for MCP tools: ``<server>_<tool>``, each part sanitised."""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME = 64  # providers refuse longer function names (OpenAI, Anthropic): the whole request fails


def sanitise(name: str) -> str:
    return _UNSAFE.sub("_", name)


def tool_name(server: str, tool: str) -> str:
    return f"{sanitise(server)}_{sanitise(tool)}"[:MAX_NAME]
