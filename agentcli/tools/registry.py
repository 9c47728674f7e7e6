"""The tool list and the one door through which the loop runs a tool call.

``run_tool`` parses and checks the model's arguments, runs the tool, turns any unexpected
exception into a one-line ToolError, and applies OpenCode's output truncation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.store.records import ToolMetadata
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.bash import BashTool
from agentcli.tools.common import first_line
from agentcli.tools.edit import EditTool
from agentcli.tools.glob import GlobTool
from agentcli.tools.grep import GrepTool
from agentcli.tools.ls import ListTool
from agentcli.tools.read import ReadTool
from agentcli.tools.skill import SkillTool
from agentcli.tools.todo import TodoReadTool, TodoWriteTool
from agentcli.tools.truncate import truncate_output
from agentcli.tools.webfetch import WebFetchTool
from agentcli.tools.write import WriteTool


def all_tools(skill_dirs: list[Path] | None = None, *, skill_confine: Path | None = None) -> list[Tool]:
    """Fresh instances of every built-in tool, in OpenCode's order; the skill tool's description
    lists the skills found in ``skill_dirs`` (``skill_confine``: see `available_skills`)."""
    return [
        BashTool(),
        ReadTool(),
        GlobTool(),
        GrepTool(),
        ListTool(),
        EditTool(),
        WriteTool(),
        WebFetchTool(),
        TodoWriteTool(),
        TodoReadTool(),
        SkillTool(skill_dirs, confine=skill_confine),
    ]


TOOL_NAMES = [t.name for t in all_tools()]


def get_tool(name: str, skill_dirs: list[Path] | None = None) -> Tool:
    """The tool called ``name``; ToolError naming the available tools when there is none."""
    for tool in all_tools(skill_dirs):
        if tool.name == name:
            return tool
    raise ToolError(f"Unknown tool: {name!r}. Available tools: {', '.join(TOOL_NAMES)}")


def parse_arguments(tool: Tool[Any], raw_args: str | dict[str, Any]) -> Any:
    """The model's argument text (or an already parsed dict) → the tool's ``params``, checked."""
    if isinstance(raw_args, dict):
        args: Any = raw_args
    else:
        text = raw_args.strip()
        try:
            args = json.loads(text) if text else {}
        except json.JSONDecodeError as exc:
            raise ToolError(
                f"Invalid arguments for {tool.name}: the arguments are not valid JSON ({exc.msg} at line "
                f"{exc.lineno} column {exc.colno}). Send a single JSON object."
            ) from None
    if not isinstance(args, dict):
        raise ToolError(
            f"Invalid arguments for {tool.name}: expected a JSON object, got {type(args).__name__}."
        )
    return tool.parse(args)


def describe_exception(exc: BaseException) -> str:
    """One line for an unexpected failure, naming the file when the OS told us which."""
    if isinstance(exc, UnicodeDecodeError):
        return f"Cannot decode the file as {exc.encoding} text (invalid byte at position {exc.start})"
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        if isinstance(exc, FileNotFoundError):
            return f"File not found{where}"
        if isinstance(exc, PermissionError):
            return f"Permission denied{where}"
        if isinstance(exc, IsADirectoryError):
            return f"Path is a directory, not a file{where}"
        return f"{exc.strerror or type(exc).__name__}{where}"
    return f"{type(exc).__name__}: {first_line(str(exc))}" if str(exc) else type(exc).__name__


def apply_truncation(tool: Tool, result: ToolResult, ctx: ToolContext) -> ToolResult:
    """Cut an oversized output and save the full text (tools that page themselves are left alone)."""
    if tool.self_truncates:
        return result
    cut = truncate_output(
        result.output, max_lines=ctx.max_lines, max_bytes=ctx.max_bytes, output_dir=ctx.output_dir
    )
    if cut.truncated:
        result.output = cut.content
        cut_meta = ToolMetadata(truncated=True, output_path=str(cut.output_path))
        result.metadata = {**result.metadata, **cut_meta.dump()}
    return result


def run_tool(tool: Tool, raw_args: str | dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run one tool call. Every failure the model should see comes out as a one-line ToolError
    (PermissionDenied for a refusal)."""
    args = parse_arguments(tool, raw_args)
    if ctx.abort.is_set():
        raise ToolError("Tool execution aborted")
    try:
        result = tool.execute(args, ctx)
    except ToolError:
        raise
    except Exception as exc:  # the loop must go on: the model sees the failure as the tool's error
        raise ToolError(describe_exception(exc)) from exc
    return apply_truncation(tool, result, ctx)
