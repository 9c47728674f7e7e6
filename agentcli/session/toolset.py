"""The tools a step offers: the built-in and plugin tools, then the MCP tools that are ready, less
those the config's ``tools`` key turns off (OpenCode's ``"tools": {"github_*": false}``)."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any


def enabled(name: str, rules: Mapping[str, bool]) -> bool:
    """Each key is a tool name or a glob; the last one matching decides, as in permission patterns."""
    on = True
    for pattern, value in rules.items():
        if fnmatch.fnmatchcase(name, pattern):
            on = value
    return on


def offered(base: Mapping[str, Any], mcp: Any, rules: Mapping[str, bool]) -> dict[str, Any]:
    """``base``: name → Tool; ``mcp``: the MCP host (None: none configured). A built-in tool keeps
    its name should a server's tool be called the same."""
    tools = dict(base)
    if mcp is not None:
        for tool in mcp.tools():
            tools.setdefault(tool.name, tool)
    if not rules:
        return tools
    return {name: tool for name, tool in tools.items() if enabled(name, rules)}
