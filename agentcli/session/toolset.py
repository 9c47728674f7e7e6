"""The tools a step offers: the built-in and plugin tools, then the MCP tools that are ready, less
those the config's ``tools`` key turns off (OpenCode's ``"tools": {"github_*": false}``), then the
agent's own ``tools`` (which may turn one back on for that agent only)."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any


def enabled(name: str, *rule_sets: Mapping[str, bool]) -> bool:
    """Each key is a tool name or a glob; the last one matching decides, as in permission patterns.
    A later rule set decides over an earlier one wherever one of its keys matches."""
    on = True
    for rules in rule_sets:
        for pattern, value in rules.items():
            if fnmatch.fnmatchcase(name, pattern):
                on = value
    return on


def offered(
    base: Mapping[str, Any], mcp: Any | Iterable[Any], *rule_sets: Mapping[str, bool]
) -> dict[str, Any]:
    """``base``: name → Tool; ``mcp``: an MCP host or several (None: none configured). A built-in
    tool keeps its name should a server's tool be called the same."""
    tools = dict(base)
    hosts = mcp if isinstance(mcp, list | tuple) else [mcp]
    for host in hosts:
        if host is not None:
            for tool in host.tools():
                tools.setdefault(tool.name, tool)
    rule_sets = tuple(r for r in rule_sets if r)
    if not rule_sets:
        return tools
    return {name: tool for name, tool in tools.items() if enabled(name, *rule_sets)}
