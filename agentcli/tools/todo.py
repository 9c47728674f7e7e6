"""todowrite / todoread: the session's task list, kept by whoever owns ``ctx.todos``."""

from __future__ import annotations

import json
import threading
from typing import Any, Literal

from pydantic import BaseModel, Field

from agentcli.store.records import ToolMetadata
from agentcli.tools.base import Tool, ToolContext, ToolResult
from agentcli.tools.params import ToolParams

WRITE_DESCRIPTION = """Create and update the task list for this session, to plan and track multi-step work.

When to use it:
- A task needs three or more distinct steps, or the user gives several tasks at once.
- The user asks for a todo list, or new instructions arrive (capture them as todos).
- You start a task (mark it in_progress; keep only one in_progress at a time) or finish one
  (mark it completed right away, and add any follow-up tasks you found).

When not to use it: a single, simple task; a purely conversational question.

Each call replaces the whole list: send every todo, with content, status (pending, in_progress,
completed, cancelled), priority (high, medium, low) and a stable id."""

READ_DESCRIPTION = """Read the session's current task list. Use it to check what is pending before deciding
what to do next, or when you are unsure of the plan's state."""


class TodoItem(BaseModel):
    content: str = Field(description="Brief description of the task")
    status: Literal["pending", "in_progress", "completed", "cancelled"] = Field(
        description="Current status of the task"
    )
    priority: Literal["high", "medium", "low"] = Field(description="Priority level of the task")
    id: str | None = Field(None, description="Unique identifier for the todo item")


class TodoWriteParams(ToolParams):
    todos: list[TodoItem] = Field(description="The updated todo list")


class TodoReadParams(ToolParams):
    pass


class MemoryTodos:
    """Todos kept in memory (tests, and the default when no store is attached)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._todos: list[dict[str, Any]] = []

    def get(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(t) for t in self._todos]

    def set(self, todos: list[dict[str, Any]]) -> None:
        with self._lock:
            self._todos = [dict(t) for t in todos]


def _result(todos: list[dict[str, Any]]) -> ToolResult:
    open_count = sum(1 for t in todos if t.get("status") not in ("completed", "cancelled"))
    return ToolResult(
        output=json.dumps(todos, indent=2),
        title=f"{open_count} todos",
        metadata=ToolMetadata(todos=todos).dump(),
    )


class TodoWriteTool(Tool[TodoWriteParams]):
    name = "todowrite"
    description = WRITE_DESCRIPTION
    params = TodoWriteParams

    def execute(self, args: TodoWriteParams, ctx: ToolContext) -> ToolResult:
        todos = [t.model_dump(exclude_none=True) for t in args.todos]
        for number, todo in enumerate(todos, start=1):
            todo.setdefault("id", str(number))  # OpenCode's older schema required an id; keep one
        ctx.todos.set(todos)
        return _result(todos)


class TodoReadTool(Tool[TodoReadParams]):
    name = "todoread"
    description = READ_DESCRIPTION
    params = TodoReadParams

    def execute(self, args: TodoReadParams, ctx: ToolContext) -> ToolResult:
        return _result(ctx.todos.get())
