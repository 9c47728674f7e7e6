"""The chat shows the first lines of a command's output and the todo list as a checklist."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.terminal import leave, say, spawn
from tests.workspace import Workspace


def test_chat_shows_bash_output_head_and_the_todo_checklist(workspace: Workspace, fake_llm: FakeLLM) -> None:
    todos = [
        {"content": "write the tests", "status": "completed", "priority": "high", "id": "1"},
        {"content": "ship the release", "status": "in_progress", "priority": "medium", "id": "2"},
        {"content": "tell the team", "status": "pending", "priority": "low", "id": "3"},
    ]
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": "seq 101 112", "description": "count"})]),
        Reply(tool_calls=[ToolCall("todowrite", {"todos": todos})]),
        Reply(text="All set.", usage=Usage(900, 5)),
    )
    child = spawn(workspace, "chat", "--yes")
    say(
        child,
        "count and plan",
        "102",
        "105",
        "7 more lines",
        "✔ .*write the tests",
        "▶ .*ship the release",
        "☐ .*tell the team",
        "All set.",
    )
    assert leave(child) == 0
