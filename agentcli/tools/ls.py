"""list: a directory tree (tool name "list", as in OpenCode), skipping the usual noise folders."""

from __future__ import annotations

from collections import defaultdict

from pydantic import Field

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import check_abort, check_access, display, resolve
from agentcli.tools.params import ToolParams
from agentcli.tools.walk import walk_files

LIMIT = 100

DESCRIPTION = """List the files and folders under a directory, as an indented tree.

Usage:
- path is the directory to list (absolute, or relative to the working directory; default: the
  working directory).
- ignore is a list of glob patterns to leave out, e.g. ["*.log", "docs/"].
- Folders such as .git, node_modules, __pycache__, dist and build are always left out.
- At most 100 files are shown. Prefer glob and grep when you know what you are looking for."""


def render_tree(root_label: str, files: list[str]) -> str:
    """An OpenCode-style tree: the root path, then folders (before files) indented two spaces a level."""
    children: dict[str, set[str]] = defaultdict(set)
    names: dict[str, list[str]] = defaultdict(list)
    for rel in files:
        parts = rel.split("/")
        for depth in range(len(parts) - 1):
            parent = "/".join(parts[:depth]) or "."
            children[parent].add("/".join(parts[: depth + 1]))
        names["/".join(parts[:-1]) or "."].append(parts[-1])

    out = [root_label.rstrip("/") + "/"]

    def emit(folder: str, depth: int) -> None:
        pad = "  " * (depth + 1)
        for sub in sorted(children[folder]):
            out.append(f"{pad}{sub.rsplit('/', 1)[-1]}/")
            emit(sub, depth + 1)
        out.extend(f"{pad}{name}" for name in sorted(names[folder]))

    emit(".", 0)
    return "\n".join(out)


class ListParams(ToolParams):
    path: str | None = Field(None, description="The absolute path to the directory to list")
    ignore: list[str] | None = Field(None, description="List of glob patterns to ignore")


class ListTool(Tool[ListParams]):
    name = "list"
    description = DESCRIPTION
    params = ListParams

    def execute(self, args: ListParams, ctx: ToolContext) -> ToolResult:
        root = resolve(ctx, args.path or ".")
        check_access(ctx, root, "list", reading=True)
        if not root.exists():
            raise ToolError(f"Directory not found: {root}")
        if not root.is_dir():
            raise ToolError(f"Not a directory: {root}. Use the read tool to read a file.")
        files: list[str] = []
        truncated = False
        for _, rel in walk_files(root, ignore=args.ignore or ()):
            check_abort(ctx)
            if len(files) >= LIMIT:
                truncated = True
                break
            files.append(rel)
        output = render_tree(str(root), files)
        if truncated:
            output += (
                f"\n\n(Showing the first {LIMIT} files. Use a deeper path or the glob tool to see more.)"
            )
        return ToolResult(
            output=output,
            title=display(ctx, root),
            metadata={"count": len(files), "truncated": truncated},
        )
