"""Agents end to end: `--agent` on `run`, OpenCode's agent files, plan mode's questions, the tools
and MCP servers given to one agent only, the agents a project's config may not loosen untrusted, and
what a broken agent file costs (one line, that agent only)."""

from __future__ import annotations

import json

from agentcli.store.records import ToolPart
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_mcp import local
from tests.test_e2e_subagents import REVIEWER, offered, system_text, task
from tests.workspace import Workspace, assert_one_line_error

PLAN_NOTE = "You are in plan mode."


def agent_file(ws: Workspace, name: str, text: str, folder: str = ".opencode/agent") -> None:
    path = ws.project / folder / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def tool_parts(ws: Workspace) -> list[ToolPart]:
    store = ws.store()
    return [
        p
        for s in store.list_sessions()
        for m in store.messages(s.id)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]


def test_agent_plan_with_yes_edits_only_its_plan_files_even_where_the_rules_allow(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"permission": {"edit": "allow", "bash": "allow"}})
    write = ToolCall("write", {"filePath": "plan.txt", "content": "x"})
    plan_file = ToolCall("write", {"filePath": ".opencode/plans/next.md", "content": "# steps"})
    fake_llm.push(Reply(tool_calls=[write, plan_file]), Reply(text="Here is the plan."))
    proc = workspace.run("run", "--agent", "plan", "--yes", "make the file")
    assert proc.returncode == 0, proc.stderr
    assert "write refused: the plan agent does not allow it: plan.txt" in proc.stderr
    assert not (workspace.project / "plan.txt").exists()
    assert (workspace.project / ".opencode/plans/next.md").read_text() == "# steps"
    # A command still asks in plan mode: nobody to ask, so it is refused; the hint names plan's rules.
    fake_llm.push(Reply(tool_calls=[ToolCall("bash", {"command": "touch made", "description": "t"})]))
    fake_llm.push(Reply(text="ok"))
    proc = workspace.run("run", "--agent", "plan", "touch it")
    assert proc.returncode == 3, proc.stderr
    assert '"agent": {"plan": {"permission": {"bash": {' in proc.stderr
    assert not (workspace.project / "made").exists()
    first = fake_llm.chat_requests()[0]
    assert PLAN_NOTE in system_text(first)
    assert {s.agent for s in workspace.store().list_sessions()} == {"plan"}

    # The build agent, on the same rules, writes without asking.
    fake_llm.push(Reply(tool_calls=[write]), Reply(text="written"))
    proc = workspace.run("run", "make the file")
    assert proc.returncode == 0, proc.stderr
    assert (workspace.project / "plan.txt").read_text() == "x"
    assert PLAN_NOTE not in system_text(fake_llm.chat_requests()[-1])


def test_an_agent_file_sets_prompt_temperature_tools_and_steps(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    agent_file(
        workspace,
        "docs",
        "---\ndescription: Writes docs\nmode: primary\ntemperature: 0.2\ntools:\n  bash: false\n"
        "steps: 7\n---\nYou write documentation, nothing else.\n",
    )
    config = workspace.write_config()
    config["provider"]["fake"]["models"]["test-model"]["temperature"] = True  # it takes one (OpenCode)
    workspace.write_config(config)
    fake_llm.push(Reply(text="docs written"))
    proc = workspace.run("run", "--agent", "docs", "document it")
    assert proc.returncode == 0, proc.stderr
    [request] = fake_llm.chat_requests()
    assert system_text(request).startswith("You write documentation, nothing else.")
    assert request.body["temperature"] == 0.2
    assert "bash" not in offered(request) and "read" in offered(request)
    rows = json.loads(workspace.run("sessions", "list", "--json").stdout)
    assert rows[0]["agent"] == "docs"

    # A continued session goes on with its agent; a model that does not say it takes a temperature
    # gets none (OpenCode sends the agent's only where the model's capabilities say ``temperature``).
    workspace.write_config()
    fake_llm.push(Reply(text="more docs"))
    assert workspace.run("run", "--continue", "and the rest").returncode == 0
    assert system_text(fake_llm.chat_requests()[-1]).startswith("You write documentation")
    assert "temperature" not in fake_llm.chat_requests()[-1].body


def test_agentcli_agents_folder_and_the_global_agent_folder(workspace: Workspace, fake_llm: FakeLLM) -> None:
    agent_file(
        workspace, "local", "---\nmode: primary\n---\nPROJECT AGENT PROMPT\n", folder=".agentcli/agents"
    )
    global_dir = workspace.home / ".config" / "opencode" / "agent"
    global_dir.mkdir(parents=True)
    (global_dir / "mine.md").write_text("---\nmode: primary\n---\nGLOBAL AGENT PROMPT\n")
    fake_llm.push(Reply(text="one"), Reply(text="two"))
    assert workspace.run("run", "--agent", "local", "hi").returncode == 0
    assert workspace.run("run", "--agent", "mine", "hi").returncode == 0
    first, second = fake_llm.chat_requests()
    assert "PROJECT AGENT PROMPT" in system_text(first) and "GLOBAL AGENT PROMPT" in system_text(second)


def test_an_unknown_agent_or_a_subagent_is_one_line(workspace: Workspace) -> None:
    line = assert_one_line_error(workspace.run("run", "--agent", "nosuch", "hi"))
    assert line == "agentcli: error: --agent 'nosuch' does not exist (primary agents: build, plan)"
    line = assert_one_line_error(workspace.run("run", "--agent", "general", "hi"))
    assert line.startswith("agentcli: error: --agent 'general' is a subagent: the model hands it tasks")


def test_a_broken_agent_file_is_one_warning_and_the_rest_loads(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    agent_file(workspace, "bad", "---\ndescription: [unclosed\nmode: subagent\n---\nbody\n")
    agent_file(workspace, "typo", "---\nmode: sideways\n---\nbody\n")
    agent_file(workspace, "open", "---\nmode: primary\nbody without an end\n")
    agent_file(workspace, "good", "---\nmode: primary\n---\nGOOD AGENT\n")
    fake_llm.push(Reply(text="fine"))
    proc = workspace.run("run", "--agent", "good", "hi")
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("agentcli: warning:")]
    assert warnings == [
        "agentcli: warning: .opencode/agent/bad.md: the front matter is not valid YAML (expected ',' or ']', "
        "but got ':' at line 3); agent bad left out",
        "agentcli: warning: .opencode/agent/open.md: the front matter is not closed "
        "(a line with --- must end "
        "it); agent open left out",
        "agentcli: warning: .opencode/agent/typo.md: agent.typo.mode: must be one of primary, subagent, all; "
        "agent typo left out",
    ]
    assert "Traceback" not in proc.stderr
    assert "GOOD AGENT" in system_text(fake_llm.chat_requests()[0])
    line = assert_one_line_error(workspace.run("run", "--agent", "bad", "hi"))
    assert "--agent 'bad' does not exist" in line


def test_per_agent_tools_are_not_offered_to_the_parent(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(
        {"tools": {"webfetch": False}, "agent": {"reviewer": {**REVIEWER, "tools": {"webfetch": True}}}}
    )
    fake_llm.push(Reply(tool_calls=[task("Fetch")]), Reply(text="fetched"), Reply(text="done"))
    assert workspace.run("run", "go").returncode == 0
    parent_first, child_first, _ = fake_llm.chat_requests()
    assert "webfetch" not in offered(parent_first) and "webfetch" in offered(child_first)


def test_an_agents_own_mcp_servers_start_for_it_and_never_reach_the_parent(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    marker = workspace.root / "started"
    reviewer = {**REVIEWER, "mcp": {"notes": local("--marker", str(marker))}}
    workspace.write_config({"agent": {"reviewer": reviewer}})
    fake_llm.push(Reply(text="no task needed"))
    assert workspace.run("run", "hi").returncode == 0
    assert not marker.exists()  # not started: nothing ran the agent that has it
    assert not any(n.startswith("notes_") for n in offered(fake_llm.chat_requests()[-1]))

    fake_llm.push(
        Reply(tool_calls=[task("Echo")]),
        Reply(tool_calls=[ToolCall("notes_echo", {"text": "from the agent's server"})]),
        Reply(text="echoed"),
        Reply(text="done"),
    )
    proc = workspace.run("run", "delegate")
    assert proc.returncode == 0, proc.stderr
    parent_first, child_first, _, parent_last = fake_llm.chat_requests()[-4:]
    assert not any(n.startswith("notes_") for n in offered(parent_first) | offered(parent_last))
    assert "notes_echo" in offered(child_first)
    assert any(
        p.tool == "notes_echo" and p.state.output == "from the agent's server" for p in tool_parts(workspace)
    )


def test_context_shows_the_tools_given_to_subagents_only(workspace: Workspace, fake_llm: FakeLLM) -> None:
    reviewer = {**REVIEWER, "tools": {"webfetch": True}, "mcp": {"notes": local()}}
    workspace.write_config({"tools": {"webfetch": False}, "agent": {"reviewer": reviewer}})
    fake_llm.push(Reply(text="hello"))
    assert workspace.run("run", "hi").returncode == 0
    proc = workspace.run("context")
    assert proc.returncode == 0, proc.stderr
    assert "@reviewer only: 1 tool (" in proc.stdout
    assert "MCP notes (starts when it runs) — in its own window, not this one" in proc.stdout


def _untrusted_agent(ws: Workspace, text: str) -> None:
    """The model's provider in the user's global config; the project only adds an agent file."""
    provider = ws.write_config()
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps(provider))
    (ws.project / "opencode.json").unlink()
    agent_file(ws, "deployer", text)
    ws.extra_env["AGENTCLI_TRUST_ALL"] = ""


def test_a_projects_agent_that_loosens_permission_needs_trust(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _untrusted_agent(workspace, "---\nmode: primary\npermission:\n  bash: allow\n---\nDeploy.\n")
    line = assert_one_line_error(workspace.run("run", "--agent", "deployer", "ship it"))
    assert "agent.deployer.permission.bash" in line and "agentcli trust" in line
    assert fake_llm.chat_requests() == []

    assert workspace.run("trust").returncode == 0
    ship = ToolCall("bash", {"command": "echo shipped", "description": "ship"})
    fake_llm.push(Reply(tool_calls=[ship]), Reply(text="shipped"))
    proc = workspace.run("run", "--agent", "deployer", "ship it")
    assert proc.returncode == 0, proc.stderr  # trusted: the agent's rule allows bash without asking
    assert tool_parts(workspace)[0].state.status == "completed"


def test_a_projects_agent_that_loosens_nothing_needs_no_trust(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _untrusted_agent(workspace, "---\nmode: primary\npermission:\n  bash: deny\n---\nCareful.\n")
    fake_llm.push(Reply(text="careful answer"))
    proc = workspace.run("run", "--agent", "deployer", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "Careful." in system_text(fake_llm.chat_requests()[0])


def test_the_agent_key_in_opencode_json_overrides_a_builtin(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(
        {"agent": {"plan": {"permission": {"edit": "deny"}}, "build": {"prompt": "BUILD PROMPT"}}}
    )
    fake_llm.push(
        Reply(tool_calls=[ToolCall("write", {"filePath": "x", "content": "x"})]), Reply(text="denied")
    )
    proc = workspace.run("run", "--agent", "plan", "--yes", "write x")
    assert proc.returncode == 0, proc.stderr
    # Denied whole, the tool is not offered (as in OpenCode): a call to it is an unknown tool.
    assert "write" not in offered(fake_llm.chat_requests()[0])
    assert "Unknown tool 'write'" in tool_parts(workspace)[0].state.error
    fake_llm.push(Reply(text="built"))
    assert workspace.run("run", "hi").returncode == 0
    assert system_text(fake_llm.chat_requests()[-1]).startswith("BUILD PROMPT")


def test_plan_writes_its_plans_in_the_data_folder_outside_a_git_repository(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.project / ".git").rmdir()  # no repository: OpenCode's plans go to its data folder
    workspace.write_config({"permission": {"edit": "allow"}})
    plans = workspace.home / ".local" / "share" / "agentcli" / "plans"
    in_data = ToolCall("write", {"filePath": str(plans / "next.md"), "content": "# steps"})
    fake_llm.push(Reply(tool_calls=[in_data]), Reply(text="Planned."))
    proc = workspace.run("run", "--agent", "plan", "plan it")  # no --yes: nobody to ask
    assert proc.returncode == 0, proc.stderr
    assert (plans / "next.md").read_text() == "# steps"  # outside the project, without a question
    assert f"Write your plan to a Markdown file in {plans}/" in system_text(fake_llm.chat_requests()[0])
    elsewhere = ToolCall("write", {"filePath": str(workspace.home / "notes.md"), "content": "x"})
    fake_llm.push(Reply(tool_calls=[elsewhere]), Reply(text="Planned."))
    proc = workspace.run("run", "--agent", "plan", "--yes", "plan it")
    assert "write refused: the plan agent does not allow it" in proc.stderr
    assert not (workspace.home / "notes.md").exists()


def test_plan_is_told_its_plans_folder_in_a_git_repository(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Planned."))
    proc = workspace.run("run", "--agent", "plan", "plan it")
    assert proc.returncode == 0, proc.stderr
    folder = workspace.project.resolve() / ".opencode" / "plans"
    assert f"Write your plan to a Markdown file in {folder}/" in system_text(fake_llm.chat_requests()[0])
