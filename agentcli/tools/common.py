"""Small helpers every tool shares: path resolution, the permission question, line cutting."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentcli.tools.base import PermissionDenied, PermissionRequest, ToolContext

# OpenCode's wording, so a model that knows OpenCode reacts the same way.
DENIED_MESSAGE = (
    "The user rejected permission to use this tool call. "
    "You may try again with different parameters, or ask the user how to proceed."
)


def resolve(ctx: ToolContext, path: str) -> Path:
    """An absolute, normalised path; relative paths are relative to the session's directory."""
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = ctx.directory / p
    return Path(os.path.abspath(p))  # abspath also normalises "a/../b"


def display(ctx: ToolContext, path: Path) -> str:
    """The path as the user thinks of it: relative to the session directory when inside it."""
    try:
        return path.relative_to(ctx.directory).as_posix() or "."
    except ValueError:
        return str(path)


def ask(
    ctx: ToolContext,
    tool: str,
    title: str,
    patterns: list[str],
    metadata: dict[str, Any] | None = None,
) -> None:
    """Ask the loop for permission; a "deny" answer becomes the model-visible PermissionDenied."""
    answer = ctx.ask(PermissionRequest(tool=tool, title=title, patterns=patterns, metadata=metadata or {}))
    if answer == "deny":
        raise PermissionDenied(DENIED_MESSAGE)


def first_line(text: str, limit: int = 300) -> str:
    """One line of an error message, so a failure never prints a wall of text."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
