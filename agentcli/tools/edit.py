"""edit: replace one exact (or forgivingly matched) piece of a file."""

from __future__ import annotations

from pydantic import Field

from agentcli.store.records import FileChange, FileDiff, ToolMetadata
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import ask, check_access, display, read_text, resolve, write_text
from agentcli.tools.diffs import unified
from agentcli.tools.edit_match import IDENTICAL, MatchError, replace
from agentcli.tools.filetime import assert_fresh
from agentcli.tools.formatters import after_write
from agentcli.tools.params import ToolParams

DESCRIPTION = """Replace text in a file.

Usage:
- Read the file with the read tool first in this session; an edit of a file you have not read,
  or that changed on disk since you read it, is refused.
- oldString is the exact text to replace, as it appears in the file (without the line-number
  prefix of the read tool's output); keep its indentation exactly.
- The edit fails if oldString is not found, or if it is found more than once: then give more
  surrounding lines to make it unique, or set replaceAll to change every occurrence (for example
  to rename a variable).
- An empty oldString creates the file with newString as its content.
- newString must differ from oldString."""


def _with_ending(text: str, ending: str) -> str:
    text = text.replace("\r\n", "\n")
    return text.replace("\n", ending) if ending != "\n" else text


class EditParams(ToolParams):
    filePath: str = Field(description="The absolute path to the file to modify")
    oldString: str = Field(description="The text to replace")
    newString: str = Field(description="The text to replace it with (must be different from oldString)")
    replaceAll: bool | None = Field(None, description="Replace all occurrences of oldString (default false)")


class EditTool(Tool[EditParams]):
    name = "edit"
    description = DESCRIPTION
    params = EditParams

    def execute(self, args: EditParams, ctx: ToolContext) -> ToolResult:
        old, new = args.oldString, args.newString
        if old == new:
            raise ToolError(IDENTICAL)
        path = resolve(ctx, args.filePath)
        check_access(ctx, path, "edit", reading=False)
        if path.is_dir():
            raise ToolError(f"Path is a directory, not a file: {path}")

        exists = path.exists()
        if old == "":
            # Creating (or replacing) the whole file: the same guard as write for an existing one.
            before = ""
            if exists:
                assert_fresh(ctx.file_times, path)
                before = read_text(ctx, path)
            after = new
        else:
            if not exists:
                raise ToolError(f"File {path} not found")
            assert_fresh(ctx.file_times, path)
            before = read_text(ctx, path)
            ending = "\r\n" if "\r\n" in before else "\n"
            try:
                after = replace(
                    before, _with_ending(old, ending), _with_ending(new, ending), bool(args.replaceAll)
                )
            except MatchError as exc:
                raise ToolError(str(exc)) from None

        rel = display(ctx, path)
        diff = unified(str(path), before.replace("\r\n", "\n"), after.replace("\r\n", "\n"))
        meta = {"filepath": str(path), "diff": diff.patch}
        ask(ctx, "edit", f"Edit {path}", [rel], meta, texts=(before if exists else None, after))
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(ctx, path, after)
        ctx.file_times.record_read(path)
        after, formatted = after_write(ctx, path, after)
        filediff = FileDiff(
            file=str(path), patch=diff.patch, additions=diff.additions, deletions=diff.deletions
        )
        return ToolResult(
            output=f"Edit applied successfully. ({diff.summary()})" + formatted,
            title=rel,
            metadata=ToolMetadata(diff=diff.patch, filediff=filediff).dump(),
            change=FileChange.made(path, before if exists else None, after),
        )
