"""A stored tool call (``ToolPart``) as ACP shows one: its kind, title, the files it touches, its
diff and its output, and the todo list as the client's ``plan``. Built from the part alone, so a
live turn and a replayed session show the same thing. A subagent's task is one call of kind
"think", titled with its description, whose output is the subagent's final answer."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal

from acp import plan_entry, start_tool_call, text_block, tool_content, tool_diff_content, update_plan
from acp import update_tool_call as progress_update
from acp.schema import AgentPlanUpdate, ToolCallLocation, ToolCallProgress, ToolCallStart, ToolKind

from agentcli.session.agents.subagent import task_answer
from agentcli.store.records import FileChange, ToolPart
from agentcli.ui.tool_line import progress_text, tool_subject

KINDS: dict[str, ToolKind] = {
    "read": "read",
    "skill": "read",
    "edit": "edit",
    "write": "edit",
    "bash": "execute",
    "glob": "search",
    "grep": "search",
    "list": "search",
    "webfetch": "fetch",
    "todowrite": "think",
    "todoread": "think",
    "task": "think",  # another agent works on it: shown as thinking, as other ACP agents show theirs
}
STATUS: dict[str, Any] = {
    "pending": "pending",
    "running": "in_progress",
    "completed": "completed",
    "error": "failed",
}
SHOWN_OUTPUT = 20_000  # characters of a tool's output shown in the client (the model got its own cut)
SHOWN_SUBAGENT_CALLS = 12  # a running task shows its subagent's latest calls, not all of them
PLAN_STATUS: dict[str, Any] = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


def call_id(part: ToolPart) -> str:
    """The part's own id: unique in the session, unlike a provider's call id."""
    return part.id


def kind(part: ToolPart) -> ToolKind:
    return KINDS.get(part.tool, "other")


def title(part: ToolPart, directory: Path) -> str:
    subject = tool_subject(part, directory)
    if part.tool == "task" and subject:
        return subject  # the task's description
    if part.tool == "bash" and isinstance(part.state.input.get("description"), str):
        subject = part.state.input["description"] or subject
    return f"{part.tool} {subject}".strip()


def _path(value: Any, directory: Path) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    path = Path(os.path.expanduser(value))
    return os.path.abspath(path if path.is_absolute() else directory / path)


def locations(part: ToolPart, directory: Path) -> list[ToolCallLocation]:
    args = part.state.input
    path = _path(args.get("filePath") or args.get("path"), directory)
    if path is None:
        return []
    offset = args.get("offset") if part.tool == "read" else None
    line = offset if isinstance(offset, int) and offset > 0 else None
    if part.tool == "edit":
        texts = _edit_texts(part)
        line = texts[0][: texts[0].find(args["oldString"])].count("\n") + 1 if texts else None
    return [ToolCallLocation(path=path, line=line)]


def _edit_texts(part: ToolPart) -> tuple[str, str] | None:
    """The whole file before and after an edit, so the client numbers the diff's lines as the file's:
    from its undo record once made, checked against what was written (None: not known for sure).
    Before it runs the pieces are shown: the file on disk may not be what the editor holds unsaved."""
    args = part.state.input
    old, new = args.get("oldString"), args.get("newString")
    if not isinstance(old, str) or not old or not isinstance(new, str):
        return None
    change = part.state.change
    before = change.before if change is not None else None
    if before is None or old not in before:
        return None
    after = before.replace(old, new) if args.get("replaceAll") is True else before.replace(old, new, 1)
    if change is not None and change.after_sha256 and FileChange.digest(after) != change.after_sha256:
        return None
    return before, after


def _diff(part: ToolPart, directory: Path) -> list[Any]:
    """What an edit or write changes, as the client's diff: the whole file before and after, else
    (not known for sure) the edit's pieces."""
    args = part.state.input
    path = _path(args.get("filePath"), directory)
    if path is None:
        return []
    if part.tool == "edit" and isinstance(args.get("newString"), str):
        texts = _edit_texts(part)
        if texts is not None:
            return [tool_diff_content(path, texts[1], texts[0])]
        old = args.get("oldString")
        return [tool_diff_content(path, args["newString"], old if isinstance(old, str) and old else None)]
    if part.tool == "write" and isinstance(args.get("content"), str):
        change = part.state.change
        return [tool_diff_content(path, args["content"], change.before if change else None)]
    return []


def _output(part: ToolPart) -> list[Any]:
    state = part.state
    if state.status == "error":
        return [tool_content(text_block(state.error or "failed"))]
    if state.status == "running" and (shown := progress_text(part)):
        return [tool_content(text_block(shown))]  # an MCP server's progress, replaced by the result
    if state.status != "completed" or not state.output:
        return []
    text = _cut(state.output)
    if part.tool in ("todowrite", "todoread"):
        return []  # shown as the plan
    if part.tool in ("edit", "write"):
        return [tool_content(text_block(text))]  # one line beside the diff
    if part.tool == "task":
        return _task_output(part, text)
    return [tool_content(text_block(fenced(text)))]


def _cut(text: str) -> str:
    if len(text) <= SHOWN_OUTPUT:
        return text
    return text[:SHOWN_OUTPUT] + f"\n… ({len(text) - SHOWN_OUTPUT} more characters)"


def _task_output(part: ToolPart, text: str) -> list[Any]:
    """The subagent's final answer (markdown, as it wrote it) and the note of what it did."""
    answer = _cut(task_answer(part.state.output))
    if not answer:
        return [tool_content(text_block(fenced(text)))]
    meta = part.state.meta
    note = f"\n\n_@{meta.agent}: {meta.note}_" if meta.agent and meta.note else ""
    return [tool_content(text_block(answer + note))]


def fenced(text: str) -> str:
    """A markdown code block around any text (a fence longer than any run of backticks in it)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text.rstrip()}\n{fence}"


def content(part: ToolPart, directory: Path) -> list[Any]:
    return _diff(part, directory) + _output(part)


def asked_change(
    part: ToolPart, directory: Path, texts: tuple[str | None, str]
) -> tuple[list[Any], list[ToolCallLocation]]:
    """An edit or write being asked about, as the whole file before and after (what the tool read,
    the editor's buffer included), so the client numbers the diff's lines as the file's; and its
    location, the first line that changes."""
    path = _path(part.state.input.get("filePath"), directory)
    if path is None:
        return [], []
    before, after = texts
    old, new = (before or "").splitlines(), after.splitlines()
    first = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new))
    )
    return [tool_diff_content(path, after, before)], [ToolCallLocation(path=path, line=first + 1)]


def start(part: ToolPart, directory: Path) -> ToolCallStart:
    """The first sight of a call (``tool_call``), with everything known so far."""
    return start_tool_call(
        call_id(part),
        title(part, directory) if part.state.status != "pending" else part.tool,
        kind=kind(part),
        status=STATUS[part.state.status],
        content=content(part, directory) or None,
        locations=locations(part, directory) or None,
        raw_input=part.state.input or None,
    )


def progress(part: ToolPart, directory: Path) -> ToolCallProgress:
    """A later state of the call (``tool_call_update``): running with its arguments, then done."""
    return progress_update(
        call_id(part),
        title=title(part, directory),
        kind=kind(part),
        status=STATUS[part.state.status],
        content=content(part, directory) or None,
        locations=locations(part, directory) or None,
        raw_input=part.state.input or None,
        raw_output={"output": part.state.output} if part.state.status == "completed" else None,
    )


def subagent_progress(task: ToolPart, done: list[ToolPart], directory: Path) -> ToolCallProgress:
    """A running task's content: the calls its subagent has finished so far, the latest last."""
    shown = done[-SHOWN_SUBAGENT_CALLS:]
    lines = [f"- {'✗ ' if p.state.status == 'error' else ''}{title(p, directory)}" for p in shown]
    if len(done) > len(shown):
        lines.insert(0, f"- … {len(done) - len(shown)} earlier")
    return progress_update(call_id(task), content=[tool_content(text_block("\n".join(lines)))])


_PRIORITY: dict[Any, Literal["high", "medium", "low"]] = {"high": "high", "medium": "medium", "low": "low"}


def plan(part: ToolPart) -> AgentPlanUpdate | None:
    """The todo list a finished ``todowrite`` set, as the client's plan (cancelled items leave it)."""
    if part.tool != "todowrite" or part.state.status != "completed":
        return None
    todos = part.state.meta.todos
    if todos is None:
        todos = part.state.input.get("todos")
    if not isinstance(todos, list):
        return None
    entries = [
        plan_entry(
            str(todo.get("content", "")),
            priority=_PRIORITY.get(todo.get("priority"), "medium"),
            status=PLAN_STATUS[todo["status"]],
        )
        for todo in todos
        if isinstance(todo, dict) and todo.get("status") in PLAN_STATUS
    ]
    return update_plan(entries)
