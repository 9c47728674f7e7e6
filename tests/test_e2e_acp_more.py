"""`agentcli acp` end to end, continued: the workspace-trust question asked in the client, the todo
list as the client's plan, and what the agent says it takes in a prompt."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from acp import RequestError, image_block, text_block

from tests.acp_client import Editor, every_line_is_json_rpc, run, running_agent
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace


def _project_allowing_bash(ws: Workspace) -> Path:
    """The user's provider in their global config (always trusted); the project's own config lets
    bash run without asking, a key that needs the folder trusted. Returns the file bash would touch."""
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text((ws.project / "opencode.json").read_text())
    (ws.project / "opencode.json").write_text(json.dumps({"permission": {"bash": "allow"}}))
    ws.extra_env["AGENTCLI_TRUST_ALL"] = ""  # the harness trusts every folder; a user does not
    return ws.project / "ran.txt"


def _bash_turn(marker: Path) -> list[Reply]:
    return [
        Reply(tool_calls=[ToolCall("bash", {"command": f"touch {marker}", "description": "touch it"})]),
        Reply(text="Done."),
    ]


def test_trust_is_asked_in_the_client_before_the_first_turn_and_remembered(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    marker = _project_allowing_bash(workspace)
    fake_llm.push(*_bash_turn(marker), Reply(text="No question this time."))
    editor = Editor(answers=["trust"])

    async def sessions() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            assert (await agent.say(sid, "touch the file")).stop_reason == "end_turn"
            other = (await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=[])).session_id
            assert (await agent.say(other, "hello again")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)

    run(sessions())
    # Asked once, before anything ran; then the project's "bash: allow" took effect (no bash question).
    [asked] = editor.asked
    assert {o.option_id: o.kind for o in asked.options}["trust"] == "allow_always"
    [card] = [u for u in editor.of_kind("tool_call") if u.tool_call_id == asked.tool_call.tool_call_id]
    assert "permission.bash" in card.content[0].content.text
    assert marker.exists()
    assert str(workspace.project) in workspace.run("trust", "--list").stdout


def test_trust_refused_in_the_client_leaves_the_risky_keys_out(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    marker = _project_allowing_bash(workspace)
    fake_llm.push(*_bash_turn(marker))
    editor = Editor(answers=["never", "deny"])

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            assert (await agent.say(sid, "touch the file")).stop_reason == "end_turn"

    run(session())
    # The trust question, then bash asked after all: the project's "allow" was left out.
    trust, bash = editor.asked
    assert [o.option_id for o in trust.options] == ["trust", "not-now", "never"]
    assert bash.tool_call.tool_call_id == editor.of_kind("tool_call")[-1].tool_call_id
    assert not marker.exists()
    assert "not trusted" in workspace.run("trust", "--list").stdout


def test_the_todo_list_is_the_clients_plan(workspace: Workspace, fake_llm: FakeLLM) -> None:
    todos = [
        {"content": "Read the code", "status": "completed", "priority": "high"},
        {"content": "Fix the bug", "status": "in_progress", "priority": "high"},
        {"content": "Old idea", "status": "cancelled", "priority": "low"},
    ]
    fake_llm.push(Reply(tool_calls=[ToolCall("todowrite", {"todos": todos})]), Reply(text="Planned."))
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            await agent.say(sid, "plan it")

    run(session())
    [plan] = editor.of_kind("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("Read the code", "completed"),
        ("Fix the bug", "in_progress"),
    ]


def test_images_are_offered_only_for_a_model_that_takes_them(workspace: Workspace) -> None:
    async def capabilities() -> bool:
        editor = Editor()
        async with running_agent(workspace, editor) as agent:
            answer = await agent.conn.initialize(protocol_version=1)
        assert answer.agent_capabilities.prompt_capabilities.embedded_context
        return bool(answer.agent_capabilities.prompt_capabilities.image)

    assert run(capabilities()) is False
    config = workspace.write_config()
    config["provider"]["fake"]["models"]["test-model"]["modalities"] = {"input": ["text", "image"]}
    workspace.write_config({"provider": config["provider"]})
    assert run(capabilities()) is True


def test_a_session_without_a_model_is_refused_in_one_line_and_the_agent_goes_on(
    workspace: Workspace,
) -> None:
    config = json.loads((workspace.project / "opencode.json").read_text())
    del config["model"]
    (workspace.project / "opencode.json").write_text(json.dumps(config))

    async def session() -> None:
        editor = Editor()
        async with running_agent(workspace, editor) as agent:
            await agent.conn.initialize(protocol_version=1)
            with pytest.raises(RequestError) as refused:
                await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=[])
            assert "no model chosen" in str(refused.value) and "\n" not in str(refused.value)
            again = await agent.conn.initialize(protocol_version=1)
            assert again.protocol_version == 1  # still serving
        every_line_is_json_rpc(agent.stdout_lines)

    run(session())


def test_an_image_in_the_prompt_reaches_a_model_that_takes_images(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    config = workspace.write_config()
    config["provider"]["fake"]["models"]["test-model"]["attachment"] = True
    workspace.write_config({"provider": config["provider"]})
    fake_llm.push(Reply(text="A red dot."))
    pixel = base64.b64encode(b"\x89PNG\r\n\x1a\n fake png bytes").decode()

    async def session() -> None:
        editor = Editor()
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            blocks = [text_block("what is this?"), image_block(pixel, "image/png")]
            assert (await agent.conn.prompt(session_id=sid, prompt=blocks)).stop_reason == "end_turn"

    run(session())
    content = fake_llm.chat_requests()[0].body["messages"][-1]["content"]
    assert content[0] == {"type": "text", "text": "what is this?"}
    assert content[1]["image_url"]["url"] == f"data:image/png;base64,{pixel}"
