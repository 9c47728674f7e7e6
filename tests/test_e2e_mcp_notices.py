"""An MCP server that fails to start or dies is one stderr line at the time, and a note kept on the
session (a typed field of its record) that `sessions show` displays later; the model never sees it."""

from __future__ import annotations

import json

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_mcp import local
from tests.workspace import Workspace


def test_a_server_that_cannot_start_is_noted_on_the_session_and_sessions_show_displays_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"mcp": {"broken": local("--fail-start"), "t": local()}})
    fake_llm.push(Reply(tool_calls=[ToolCall("t_echo", {"text": "fine"})]), Reply(text="ok"))
    proc = workspace.run("run", "go")
    assert proc.returncode == 0, proc.stderr
    [told] = [line for line in proc.stderr.splitlines() if "broken" in line]
    [session] = workspace.store().list_sessions()
    [notice] = session.notices
    assert notice.kind == "mcp" and notice.subject == "broken" and notice.agent is None
    assert told == f"agentcli: {notice.text}" and notice.text.endswith("cannot start: missing API token")

    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    assert "mcp server broken failed to start" in shown.stdout
    # Shown where it happened: before the step that ran without the server.
    assert shown.stdout.index("failed to start") < shown.stdout.index("● Assistant")
    info = json.loads(workspace.run("sessions", "show", session.id, "--json").stdout)["info"]
    assert [n["subject"] for n in info["notices"]] == ["broken"]
    exported = workspace.run("sessions", "export", session.id, "--format", "md").stdout
    assert "mcp server broken failed to start" in exported
    # Beside the conversation, never in it.
    assert all("missing API token" not in json.dumps(r.body) for r in fake_llm.chat_requests())


def test_a_server_that_dies_is_noted_once_on_the_session(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"flaky": local()}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("flaky_crash", {})]),
        Reply(tool_calls=[ToolCall("flaky_echo", {"text": "restarted"})]),
        Reply(text="done"),
    )
    proc = workspace.run("run", "crash it")
    assert proc.returncode == 0, proc.stderr
    [session] = workspace.store().list_sessions()
    [notice] = session.notices  # noted once, though two more steps ran after it
    assert notice.subject == "flaky" and "stopped (the connection closed" in notice.text
    assert "it is restarted at the next step" in notice.text
    shown = workspace.run("sessions", "show", session.id).stdout
    assert "⚠" in shown and "mcp server flaky stopped" in shown
    assert all("mcp server flaky" not in json.dumps(r.body) for r in fake_llm.chat_requests())


def test_an_agents_own_server_that_fails_is_noted_on_the_task_session_naming_the_agent(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    reviewer = {
        "mode": "subagent",
        "description": "Reviews code",
        "mcp": {"notes": local("--fail-start")},
    }
    workspace.write_config({"agent": {"reviewer": reviewer}})
    task = {"description": "review", "prompt": "Review it", "subagent_type": "reviewer"}
    fake_llm.push(Reply(tool_calls=[ToolCall("task", task)]), Reply(text="reviewed"), Reply(text="done"))
    proc = workspace.run("run", "delegate")
    assert proc.returncode == 0, proc.stderr
    store = workspace.store()
    [child] = [s for s in store.list_sessions() if s.parent_id]
    [notice] = child.notices
    assert notice.subject == "notes" and notice.agent == "reviewer"
    assert store.get_session(child.parent_id).notices == []  # the parent never had that server
    shown = workspace.run("sessions", "show", child.id).stdout
    assert "mcp server notes failed to start" in shown and "(@reviewer's own server)" in shown
