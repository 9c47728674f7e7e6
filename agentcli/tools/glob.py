"""glob: files whose path matches a pattern, newest first."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import check_abort, check_access, display, resolve
from agentcli.tools.params import ToolParams
from agentcli.tools.walk import matches, mtime, walk_files

LIMIT = 100

DESCRIPTION = """Find files by name with a glob pattern, in a codebase of any size.

Usage:
- Patterns like "**/*.js", "src/**/*.ts" or "*.{ts,tsx}"; a pattern without "/" matches file
  names at any depth.
- Returns absolute paths, most recently modified first, at most 100.
- path is the directory to search (default: the working directory); leave it out rather than
  passing "undefined" or "null".
- Folders such as .git and node_modules, and what .gitignore lists, are skipped.
- To search file contents use the grep tool. Call several searches at once when useful."""


def _relative_pattern(pattern: str, root: Path) -> str:
    """Models sometimes pass an absolute pattern; make it relative to the search root."""
    if not pattern.startswith("/"):
        return pattern
    try:
        return Path(pattern).relative_to(root).as_posix()
    except ValueError:
        return pattern


class GlobParams(ToolParams):
    pattern: str = Field(description="The glob pattern to match files against")
    path: str | None = Field(
        None, description="The directory to search in. Omit it to use the current working directory."
    )


class GlobTool(Tool[GlobParams]):
    name = "glob"
    description = DESCRIPTION
    params = GlobParams

    def execute(self, args: GlobParams, ctx: ToolContext) -> ToolResult:
        root = resolve(ctx, args.path or ".")
        check_access(ctx, root, "glob", reading=True)
        if not root.is_dir():
            raise ToolError(f"Search path is not a directory: {root}")
        pattern = _relative_pattern(args.pattern, root)
        if not pattern.strip():
            raise ToolError("pattern must not be empty")
        found = []
        for p, rel in walk_files(root):
            check_abort(ctx)
            if matches(pattern, rel):
                found.append((mtime(p), p))
        found.sort(key=lambda item: item[0], reverse=True)
        truncated = len(found) > LIMIT
        shown = [str(p) for _, p in found[:LIMIT]]
        if not shown:
            output = "No files found"
        else:
            output = "\n".join(shown)
            if truncated:
                output += (
                    f"\n\n(Results are truncated: showing the {LIMIT} most recent of {len(found)} files. "
                    "Consider using a more specific path or pattern.)"
                )
        return ToolResult(
            output=output,
            title=display(ctx, root),
            metadata={"count": len(shown), "truncated": truncated},
        )
