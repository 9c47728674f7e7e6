"""The built-in agents' rules as OpenCode enforces them, end to end: a task started by plan is held to
plan's rules, explore offers read-only tools, the task tool's ``command`` is kept with its result."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_subagents import offered, parts_of, sessions, system_text, task
from tests.workspace import Workspace


def test_a_task_started_by_plan_cannot_write_even_with_yes(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"permission": {"edit": "allow"}})
    fake_llm.push(
        Reply(tool_calls=[task("Write a.py", kind="general", command="/implement")]),
        Reply(tool_calls=[ToolCall("write", {"filePath": "a.py", "content": "x = 1\n"})]),
        Reply(text="I could not write a.py"),
        Reply(text="The subagent could not write."),
    )
    proc = workspace.run("run", "--agent", "plan", "--yes", "get a.py written")
    assert proc.returncode == 0, proc.stderr
    assert not (workspace.project / "a.py").exists()
    assert "the agent that started this task does not allow it: a.py" in proc.stderr
    parent, child = sessions(workspace)
    [write] = parts_of(workspace, child.id)
    assert write.state.status == "error" and "rejected permission" in (write.state.error or "")
    [call] = parts_of(workspace, parent.id)
    assert call.state.metadata["command"] == "/implement"  # the task tool's ``command`` parameter
    task_tool = next(t for t in fake_llm.chat_requests()[0].body["tools"] if t["function"]["name"] == "task")
    assert "command" in task_tool["function"]["parameters"]["properties"]

    # The build agent's task, on the same rules, writes.
    fake_llm.push(
        Reply(tool_calls=[task("Write a.py", kind="general")]),
        Reply(tool_calls=[ToolCall("write", {"filePath": "a.py", "content": "x = 1\n"})]),
        Reply(text="wrote a.py"),
        Reply(text="done"),
    )
    assert workspace.run("run", "--yes", "get a.py written").returncode == 0
    assert (workspace.project / "a.py").read_text() == "x = 1\n"


def test_explore_is_offered_to_the_model_and_gets_read_only_tools(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"permission": {"edit": "allow", "bash": "allow"}})
    fake_llm.push(
        Reply(tool_calls=[task("Find the entry point, quick", kind="explore")]),
        Reply(text="main.py"),
        Reply(text="It is main.py."),
    )
    proc = workspace.run("run", "--yes", "where does it start?")
    assert proc.returncode == 0, proc.stderr
    parent_first, child_first, _ = fake_llm.chat_requests()
    task_tool = next(t for t in parent_first.body["tools"] if t["function"]["name"] == "task")
    assert "- explore: Fast agent specialized for exploring codebases" in task_tool["function"]["description"]
    assert offered(child_first) == {"bash", "glob", "grep", "list", "read", "webfetch"}
    assert "read-only explorer" in system_text(child_first)
