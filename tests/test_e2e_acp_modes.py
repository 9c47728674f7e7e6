"""`agentcli acp` end to end: agentcli's primary agents as the client's session modes (listed on new
and load, switched with session/set_mode or the "mode" config option, kept by the session), the
agent `--agent` names, and a subagent's task shown as one tool call with its answer."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse, ToolCallUpdate

from tests.acp_client import Agent, Asked, Editor, every_line_is_json_rpc, run, running_agent
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_subagents import REVIEWER, system_text, task
from tests.workspace import Workspace

PLAN_NOTE = "You are in plan mode."
DOCS = {"mode": "primary", "description": "Writes documentation"}


def _write_turn(path: Path, content: str) -> list[Reply]:
    write = ToolCall("write", {"filePath": str(path), "content": content})
    return [Reply(tool_calls=[write]), Reply(text=f"wrote {path.name}")]


def _touch_turn(path: Path) -> list[Reply]:
    touch = ToolCall("bash", {"command": f"touch {path.name}", "description": "make the file"})
    return [Reply(tool_calls=[touch]), Reply(text=f"made {path.name}")]


async def _new(agent: Agent, editor: Editor, cwd: Path) -> Any:
    await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
    return await agent.conn.new_session(cwd=str(cwd), mcp_servers=[])


def _mode_updates(editor: Editor) -> list[str]:
    return [u.current_mode_id for u in editor.of_kind("current_mode_update")]


def test_set_mode_to_plan_makes_an_edit_ask_in_the_client_and_build_edits_again_without(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"permission": {"edit": "allow"}, "agent": {"docs": DOCS}})
    planned, built = workspace.project / "planned.txt", workspace.project / "built.txt"
    fake_llm.push(*_touch_turn(planned), *_write_turn(built, "under build"))
    editor = Editor(answers=["once"])

    async def session() -> Any:
        async with running_agent(workspace, editor) as agent:
            new = await _new(agent, editor, workspace.project)
            sid = new.session_id
            await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
            assert (await agent.say(sid, "write planned.txt")).stop_reason == "end_turn"
            assert len(editor.asked) == 1  # plan asks before a command (and refuses edits)
            await agent.conn.set_session_mode(session_id=sid, mode_id="build")
            assert (await agent.say(sid, "write built.txt")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        return new

    new = run(session())
    # The modes are the primary agents, the default first, each with its description.
    assert [(m.id, m.description) for m in new.modes.available_modes] == [
        ("build", "The default agent: works with the tools the permission rules allow."),
        ("docs", "Writes documentation"),
        ("plan", "Plan mode: investigates and plans; edits only its plan files, every command asks first."),
    ]
    assert new.modes.current_mode_id == "build"
    [option] = new.config_options
    assert (option.id, option.category, option.current_value) == ("mode", "mode", "build")
    assert [o.value for o in option.options] == ["build", "docs", "plan"]
    # The command under plan was asked about, and allowed there; build's edit went through unasked.
    assert len(editor.asked) == 1
    planned_call = editor.of_kind("tool_call")[0].tool_call_id
    assert editor.asked[0].tool_call.tool_call_id == planned_call
    assert planned.exists() and built.read_text() == "under build"
    assert _mode_updates(editor) == ["plan", "build"]
    assert [u.config_options[0].current_value for u in editor.of_kind("config_option_update")] == [
        "plan",
        "build",
    ]
    requests = fake_llm.chat_requests()
    assert PLAN_NOTE in system_text(requests[0]) and PLAN_NOTE not in system_text(requests[2])
    [stored] = workspace.store().list_sessions()
    assert stored.agent == "build"


def test_the_agent_chosen_in_the_client_is_kept_by_the_session_and_comes_back_on_load(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"permission": {"edit": "allow"}})
    fake_llm.push(Reply(text="Hello."))
    first = Editor()

    async def create() -> str:
        async with running_agent(workspace, first) as agent:
            sid = (await _new(agent, first, workspace.project)).session_id
            await agent.say(sid, "hello")
            # Switched through the config option this time: the same agents, the same switch.
            answer = await agent.conn.set_config_option(config_id="mode", session_id=sid, value="plan")
            assert answer.config_options[0].current_value == "plan"
            return sid

    sid = run(create())
    assert _mode_updates(first) == ["plan"]
    assert workspace.store().get_session(sid).agent == "plan"  # recorded at once, before any turn

    planned = workspace.project / "planned.txt"
    fake_llm.push(*_touch_turn(planned))
    again = Editor(answers=["once"])

    async def load() -> Any:
        async with running_agent(workspace, again) as agent:
            await agent.conn.initialize(protocol_version=1)
            loaded = await agent.conn.load_session(cwd=str(workspace.project), session_id=sid, mcp_servers=[])
            await agent.say(sid, "write planned.txt")
        return loaded

    loaded = run(load())
    assert loaded.modes.current_mode_id == "plan"
    assert [m.id for m in loaded.modes.available_modes] == ["build", "plan"]
    assert loaded.config_options[0].current_value == "plan"
    assert len(again.asked) == 1 and planned.exists()  # still plan: the command was asked about
    assert PLAN_NOTE in system_text(fake_llm.chat_requests()[-1])


@dataclass
class WaitingEditor(Editor):
    """Answers each permission question "once", but only when ``go`` is set: the turn waits there."""

    go: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(Asked(session_id, tool_call, options))
        self.asking.set()
        await self.go.wait()
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="once"))


def test_a_mode_chosen_during_a_turn_applies_from_the_next_and_is_recorded_when_the_turn_ends(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    first = workspace.project / "first.txt"
    fake_llm.push(*_write_turn(first, "x"), Reply(text="Planning."))
    editor = WaitingEditor()

    async def session() -> tuple[str | None, str | None]:
        async with running_agent(workspace, editor) as agent:
            sid = (await _new(agent, editor, workspace.project)).session_id
            turn = asyncio.create_task(agent.say(sid, "write first.txt"))
            await asyncio.wait_for(editor.asking.wait(), 60)  # the turn is running (build's question)
            await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
            during = workspace.store().get_session(sid).agent
            editor.go.set()
            assert (await turn).stop_reason == "end_turn"
            after = workspace.store().get_session(sid).agent
            await agent.say(sid, "and now?")
        return during, after

    during, after = run(session())
    assert (during, after) == ("build", "plan")
    assert _mode_updates(editor) == ["plan"]
    _, after_write, next_turn = fake_llm.chat_requests()
    assert PLAN_NOTE not in system_text(after_write)  # the running turn kept its agent
    assert PLAN_NOTE in system_text(next_turn)
    assert first.read_text() == "x"


def test_an_unknown_mode_is_invalid_params_and_the_agent_keeps_serving_in_its_mode(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="Still here."))
    editor = Editor()

    async def session() -> list[RequestError]:
        errors = []
        async with running_agent(workspace, editor) as agent:
            sid = (await _new(agent, editor, workspace.project)).session_id
            for call in (
                agent.conn.set_session_mode(session_id=sid, mode_id="nosuch"),
                agent.conn.set_session_mode(session_id=sid, mode_id="general"),  # a subagent
                agent.conn.set_session_mode(session_id="ses_nope", mode_id="plan"),
                agent.conn.set_config_option(config_id="model", session_id=sid, value="x/y"),
                agent.conn.set_config_option(config_id="mode", session_id=sid, value=True),
            ):
                with pytest.raises(RequestError) as caught:
                    await call
                errors.append(caught.value)
            assert (await agent.say(sid, "are you there?")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        return errors

    errors = run(session())
    assert [e.code for e in errors] == [-32602] * 5
    details = [(e.data or {}).get("details", "") for e in errors]
    assert details[0] == "mode 'nosuch' does not exist (primary agents: build, plan)"
    assert "'general' is a subagent" in details[1]
    assert "unknown session" in details[2]
    assert "unknown config option 'model'" in details[3]
    assert editor.text() == "Still here."
    assert not editor.of_kind("current_mode_update")
    assert PLAN_NOTE not in system_text(fake_llm.chat_requests()[-1])
    [stored] = workspace.store().list_sessions()
    assert stored.agent == "build"


def test_acp_agent_starts_new_sessions_in_that_agent_and_a_loaded_session_keeps_its_own(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="Built."), Reply(text="Planned."))
    editor = Editor()

    async def build_session() -> str:
        async with running_agent(workspace, editor) as agent:
            sid = (await _new(agent, editor, workspace.project)).session_id
            await agent.say(sid, "hello")
            return sid

    built = run(build_session())

    async def with_plan() -> tuple[Any, Any]:
        async with running_agent(workspace, editor, "--agent", "plan") as agent:
            new = await _new(agent, editor, workspace.project)
            await agent.say(new.session_id, "how would you do it?")
            loaded = await agent.conn.load_session(
                cwd=str(workspace.project), session_id=built, mcp_servers=[]
            )
        return new, loaded

    new, loaded = run(with_plan())
    assert new.modes.current_mode_id == "plan"
    assert PLAN_NOTE in system_text(fake_llm.chat_requests()[-1])
    assert workspace.store().get_session(new.session_id).agent == "plan"
    assert loaded.modes.current_mode_id == "build"  # --agent is for new sessions only

    async def unknown() -> RequestError:
        async with running_agent(workspace, editor, "--agent", "nosuch") as agent:
            with pytest.raises(RequestError) as caught:
                await _new(agent, editor, workspace.project)
            await agent.conn.load_session(cwd=str(workspace.project), session_id=built, mcp_servers=[])
        return caught.value

    error = run(unknown())
    assert error.code == -32603
    assert str(error) == "--agent 'nosuch' does not exist (primary agents: build, plan)"


def test_a_subagents_task_is_one_think_call_titled_with_its_description_whose_output_is_its_answer(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    (workspace.project / "foo.py").write_text("x = 1\n")
    fake_llm.push(
        Reply(tool_calls=[task("Review foo.py and say if it is fine", description="review foo.py")]),
        Reply(tool_calls=[ToolCall("read", {"filePath": "foo.py"})]),
        Reply(text="foo.py is **fine**."),
        Reply(text="The reviewer says foo.py is fine."),
    )
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = (await _new(agent, editor, workspace.project)).session_id
            assert (await agent.say(sid, "review foo.py")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)

    run(session())
    [start] = editor.of_kind("tool_call")  # the subagent's own read is not a call of this session
    assert start.kind == "think"
    updates = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == start.tool_call_id]
    # While it runs, the calls its subagent made are listed under it.
    assert any(u.content and u.content[0].content.text == "- read foo.py" for u in updates)
    done = updates[-1]
    assert (done.status, done.title) == ("completed", "review foo.py")
    [output] = done.content
    assert output.content.text.startswith("foo.py is **fine**.\n\n_@reviewer: 2 steps, read 1 file")
    assert editor.text() == "The reviewer says foo.py is fine."
