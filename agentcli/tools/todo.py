"""todowrite / todoread: the session's task list, kept by whoever owns ``ctx.todos``."""

from __future__ import annotations

import json
import threading
from typing import Any

from agentcli.tools.base import Tool, ToolContext, ToolResult

STATUSES = ["pending", "in_progress", "completed", "cancelled"]
PRIORITIES = ["high", "medium", "low"]

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

_ITEM = {
    "type": "object",
    "properties": {
        "content": {"type": "string", "description": "Brief description of the task"},
        "status": {"type": "string", "enum": STATUSES, "description": "Current status of the task"},
        "priority": {"type": "string", "enum": PRIORITIES, "description": "Priority level of the task"},
        "id": {"type": "string", "description": "Unique identifier for the todo item"},
    },
    "required": ["content", "status", "priority"],
}


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
        output=json.dumps(todos, indent=2), title=f"{open_count} todos", metadata={"todos": todos}
    )


class TodoWriteTool(Tool):
    name = "todowrite"
    description = WRITE_DESCRIPTION
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {"todos": {"type": "array", "items": _ITEM, "description": "The updated todo list"}},
        "required": ["todos"],
        "additionalProperties": False,
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        todos = [dict(t) for t in args["todos"]]
        for number, todo in enumerate(todos, start=1):
            todo.setdefault("id", str(number))  # OpenCode's older schema required an id; keep one
        ctx.todos.set(todos)
        return _result(todos)


class TodoReadTool(Tool):
    name = "todoread"
    description = READ_DESCRIPTION
    parameters: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return _result(ctx.todos.get())
