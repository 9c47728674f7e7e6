"""OpenCode's legacy ``mode`` key and ``.opencode/mode/*.md`` files: each mode is a primary agent, as
OpenCode 1.18.33 reads them (a ``mode`` entry over the ``agent`` entry of its name), and a project's
modes are screened for trust exactly as its agents are."""

from __future__ import annotations

import json

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_subagents import system_text
from tests.workspace import Workspace, assert_one_line_error


def test_a_mode_entry_is_a_primary_agent_over_the_agent_entry_of_its_name(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(
        {
            "agent": {"review": {"mode": "subagent", "prompt": "From agent.", "description": "d"}},
            "mode": {"review": {"prompt": "Review carefully."}},
        }
    )
    fake_llm.push(Reply(text="reviewed"))
    proc = workspace.run("run", "--agent", "review", "look")
    assert proc.returncode == 0, proc.stderr
    assert "'mode' is not used" not in proc.stderr and "unknown key" not in proc.stderr
    assert "Review carefully." in system_text(fake_llm.chat_requests()[0])


def test_a_mode_file_is_a_primary_agent(workspace: Workspace, fake_llm: FakeLLM) -> None:
    folder = workspace.project / ".opencode" / "mode"
    folder.mkdir(parents=True)
    (folder / "docs.md").write_text("---\ndescription: Writes docs\n---\nWrite documentation only.\n")
    fake_llm.push(Reply(text="written"))
    proc = workspace.run("run", "--agent", "docs", "go")
    assert proc.returncode == 0, proc.stderr
    assert "Write documentation only." in system_text(fake_llm.chat_requests()[0])


def _untrusted(ws: Workspace, project: dict) -> None:
    """The model's provider in the user's global config; the project's opencode.json only ``project``."""
    provider = ws.write_config()
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps(provider))
    (ws.project / "opencode.json").write_text(json.dumps(project))
    ws.extra_env["AGENTCLI_TRUST_ALL"] = ""


def test_a_projects_mode_that_loosens_permission_waits_for_trust(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _untrusted(workspace, {"mode": {"deployer": {"prompt": "Deploy.", "permission": {"bash": "allow"}}}})
    line = assert_one_line_error(workspace.run("run", "--agent", "deployer", "ship it"))
    assert "agent.deployer.permission.bash" in line and "agentcli trust" in line
    assert fake_llm.chat_requests() == []
    assert workspace.run("trust").returncode == 0
    ship = ToolCall("bash", {"command": "echo shipped", "description": "ship"})
    fake_llm.push(Reply(tool_calls=[ship]), Reply(text="shipped"))
    proc = workspace.run("run", "--agent", "deployer", "ship it")
    assert proc.returncode == 0, proc.stderr  # trusted: the mode's rule allows bash without asking


def test_a_projects_mode_that_loosens_nothing_needs_no_trust(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _untrusted(workspace, {"mode": {"careful": {"prompt": "Careful.", "permission": {"bash": "deny"}}}})
    fake_llm.push(Reply(text="careful answer"))
    proc = workspace.run("run", "--agent", "careful", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "Careful." in system_text(fake_llm.chat_requests()[0])
