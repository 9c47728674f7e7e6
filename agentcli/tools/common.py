"""Small helpers every tool shares: path resolution, the permission question, line cutting."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from agentcli.project_layout import is_secret
from agentcli.tools import atomic
from agentcli.tools.base import PermissionDenied, PermissionRequest, ToolContext, ToolError

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


def is_inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def check_access(ctx: ToolContext, path: Path, tool: str, *, reading: bool) -> Path:
    """The permission checks of a path a tool is about to touch (symlinks resolved): secret stores
    ("read") for reads, then places outside the project ("external_directory"). Returns the real path."""
    real = Path(os.path.realpath(path))
    root = Path(os.path.realpath(ctx.root))
    if reading and is_secret(real):
        ask(ctx, "read", f"{tool} {real} (a file that may hold credentials)", [str(real)])
        return real  # the "read" answer covered this path; do not ask twice
    # agentcli's own spill files and skills are meant to be read by the model.
    own = [Path(os.path.realpath(d)) for d in (ctx.output_dir, *ctx.skill_dirs)]
    if not is_inside(real, root) and not (reading and any(is_inside(real, d) for d in own)):
        ask(ctx, "external_directory", f"{tool} outside the project: {real}", [str(real)])
    return real


_SPECIAL = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_kind(path: Path) -> str | None:
    """What a non-regular, non-directory file is; opening one may block forever or never end."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return next((name for test, name in _SPECIAL if test(mode)), None)


def refuse_special(path: Path) -> None:
    kind = special_kind(path)
    if kind:
        raise ToolError(
            f"Cannot read {path}: it is {kind}, not a regular file (reading it could block forever)"
        )


def read_text(ctx: ToolContext, path: Path, errors: str = "strict") -> str:
    """A text file's content as the user sees it: the editor's buffer when the loop was given one
    that holds it (``ctx.files``), else the disk, as UTF-8."""
    if ctx.files is not None and (text := ctx.files.read_text(path)) is not None:
        return text
    return path.read_bytes().decode("utf-8", errors=errors)


def write_text(ctx: ToolContext, path: Path, text: str) -> None:
    """Replace a file's content: through the editor when it takes it, else atomically on disk."""
    if ctx.files is not None and ctx.files.write_text(path, text):
        return
    atomic.write_text(path, text)


def check_abort(ctx: ToolContext) -> None:
    if ctx.abort.is_set():
        raise ToolError("The tool call was aborted")


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
    *,
    unsure: list[str] | None = None,
    partial: list[str] | None = None,
    maybe: list[str] | None = None,
    texts: tuple[str | None, str] | None = None,
) -> None:
    """Ask the loop for permission; a "deny" answer becomes the model-visible PermissionDenied."""
    request = PermissionRequest(
        tool=tool,
        title=title,
        patterns=patterns,
        metadata=metadata or {},
        unsure=unsure or [],
        partial=partial or [],
        maybe=maybe or [],
        texts=texts,
    )
    answer = ctx.ask(request)
    if answer == "deny":
        raise PermissionDenied(DENIED_MESSAGE)


def first_line(text: str, limit: int = 300) -> str:
    """One line of an error message, so a failure never prints a wall of text."""
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
