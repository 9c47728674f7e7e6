"""write: create or overwrite a whole file (asks the "edit" permission, like OpenCode)."""

from __future__ import annotations

from pydantic import Field

from agentcli.store.records import FileChange
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import ask, check_access, display, read_text, resolve, write_text
from agentcli.tools.diffs import unified
from agentcli.tools.filetime import assert_fresh
from agentcli.tools.formatters import after_write
from agentcli.tools.params import ToolParams

DESCRIPTION = """Write a file to the local filesystem, replacing it if it exists.

Usage:
- filePath should be an absolute path; missing parent directories are created.
- An existing file can only be overwritten after you have read it with the read tool in this
  session, and only if it has not changed since; otherwise the write is refused.
- Prefer the edit tool to change part of an existing file; use write for new files or full rewrites.
- Do not create documentation or README files unless the user asks for them."""


class WriteParams(ToolParams):
    content: str = Field(description="The content to write to the file")
    filePath: str = Field(description="The absolute path to the file to write")


class WriteTool(Tool[WriteParams]):
    name = "write"
    description = DESCRIPTION
    params = WriteParams

    def execute(self, args: WriteParams, ctx: ToolContext) -> ToolResult:
        path = resolve(ctx, args.filePath)
        check_access(ctx, path, "write", reading=False)
        content = args.content
        if path.is_dir():
            raise ToolError(f"Path is a directory, not a file: {path}")
        exists = path.exists()
        before = ""
        if exists:
            assert_fresh(ctx.file_times, path)
            before = read_text(ctx, path, errors="replace")
        rel = display(ctx, path)
        diff = unified(str(path), before, content)
        ask(
            ctx,
            "write",
            ("Overwrite this file: " if exists else "Create new file: ") + str(path),
            [rel],
            {"filepath": str(path), "content": content, "exists": exists, "diff": diff.patch},
            texts=(before if exists else None, content),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(ctx, path, content)
        ctx.file_times.record_read(path)
        content, formatted = after_write(ctx, path, content)
        verb = "Overwrote" if exists else "Created"
        return ToolResult(
            output=f"Wrote file successfully. {verb} {path} ({diff.summary()})." + formatted,
            title=rel,
            metadata={"filepath": str(path), "exists": exists, "diff": diff.patch},
            change=FileChange.made(path, before if exists else None, content),
        )
