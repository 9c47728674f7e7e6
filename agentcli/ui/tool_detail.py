"""What the chat shows under a finished tool's line: the first lines of a command's output, and
the todo list as a checklist."""

from __future__ import annotations

from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text

from agentcli.store.records import ToolPart
from agentcli.ui import theme
from agentcli.ui.markup import for_people

BASH_LINES = 5
_MARKS = {
    "completed": ("✔", "green"),
    "in_progress": ("▶", "yellow"),
    "cancelled": ("✗", theme.META),
    "pending": ("☐", ""),
}


def _bash(output: str) -> Text | None:
    lines = [line for line in output.rstrip().splitlines()]
    if not lines:
        return None
    text = Text("\n".join(line[:200] for line in lines[:BASH_LINES]), style=theme.META)
    if len(lines) > BASH_LINES:
        text.append(f"\n… {len(lines) - BASH_LINES} more lines", style=theme.META)
    return text


def _todos(todos: list[dict[str, object]]) -> Text | None:
    if not todos:
        return None
    text = Text()
    for n, todo in enumerate(todos):
        mark, style = _MARKS.get(str(todo.get("status")), ("☐", ""))
        content = str(todo.get("content", ""))
        text.append(("\n" if n else "") + f"{mark} ", style)
        text.append(
            content, "strike " + theme.META if todo.get("status") in ("completed", "cancelled") else style
        )
    return text


def tool_detail(part: ToolPart) -> RenderableType | None:
    """Lines under the tool's line, or None."""
    state = part.state
    body: Text | None = None
    if part.tool == "bash" and state.status in ("completed", "error"):
        # metadata "output" is the command's own output, without the notes added for the model.
        own = state.meta.output
        if state.status == "completed":
            body = _bash(own if own is not None else for_people(state.output))
        else:
            body = _bash(own or "")
    elif part.tool == "todowrite" and state.status == "completed":
        body = _todos(state.meta.todos or [])
    return Padding(body, (0, 0, 0, 2)) if body is not None else None
