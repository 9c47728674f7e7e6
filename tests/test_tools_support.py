"""Shared helpers for the tool tests: a real ToolContext over a temp directory, recording every
permission question. (Named test_tools_* to stay within the tools' test files; it holds no tests.)"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentcli.tools.base import PermissionAnswer, PermissionRequest, ToolContext, ToolResult
from agentcli.tools.filetime import MemoryFileTimes
from agentcli.tools.registry import get_tool, run_tool
from agentcli.tools.todo import MemoryTodos


@dataclass
class Asker:
    answer: PermissionAnswer = "once"
    asked: list[PermissionRequest] = field(default_factory=list)

    def __call__(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return self.answer


def make_ctx(root: Path, answer: PermissionAnswer = "once", **overrides: object) -> tuple[ToolContext, Asker]:
    asker = Asker(answer)
    work = root / "work"
    work.mkdir(exist_ok=True)
    ctx = ToolContext(
        session_id="ses_test",
        message_id="msg_test",
        call_id="call_1",
        directory=work,
        ask=asker,
        file_times=MemoryFileTimes(),
        todos=MemoryTodos(),
        output_dir=root / "tool-output",
        **overrides,  # type: ignore[arg-type]
    )
    return ctx, asker


def call(ctx: ToolContext, name: str, args: dict | str) -> ToolResult:
    """Run a tool the way the loop does: through the registry."""
    return run_tool(get_tool(name, ctx.skill_dirs), args, ctx)
