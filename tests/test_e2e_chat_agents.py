"""Agents in the chat (a real pseudo-terminal): the prompt shows the agent, Tab switches it, the
session records it, `@agent message` goes to a subagent, and Ctrl-C during a task cancels the task's
session and the parent's step."""

from __future__ import annotations

from agentcli.store.records import AssistantMessage
from tests.fakellm import FakeLLM, Hang, Reply
from tests.terminal import PROMPT, leave, say, spawn
from tests.test_e2e_agents import PLAN_NOTE
from tests.test_e2e_subagents import REVIEWER, parts_of, sessions, system_text, task
from tests.workspace import Workspace


def test_tab_switches_the_primary_agent_and_the_prompt_shows_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    child = spawn(workspace, "chat", prompt=False)
    child.expect("build")
    child.expect(PROMPT)
    child.send("\t")  # Tab on an empty line: the next primary agent
    child.expect("plan")
    fake_llm.push(Reply(text="Here is the plan."))
    say(child, "how would you do it?", "Here is the plan.")
    assert PLAN_NOTE in system_text(fake_llm.chat_requests()[-1])
    child.send("\t")  # back to build, for the next message of the same session
    child.expect("build")
    fake_llm.push(Reply(text="Building now."))
    say(child, "do it", "Building now.")
    assert PLAN_NOTE not in system_text(fake_llm.chat_requests()[-1])
    assert leave(child) == 0
    [session] = workspace.store().list_sessions()
    agents = [m.info.agent for m in workspace.store().messages(session.id)]
    assert agents == ["plan", "plan", "build", "build"]
    assert session.agent == "build"


def test_tab_on_a_line_with_text_never_switches_the_agent(workspace: Workspace, fake_llm: FakeLLM) -> None:
    child = spawn(workspace, "chat")
    fake_llm.push(Reply(text="Fixed."))
    say(child, "fix the bug\t", "Fixed.")  # nothing to complete: Tab does nothing, the agent stays build
    assert leave(child) == 0
    [request] = fake_llm.chat_requests()
    assert PLAN_NOTE not in system_text(request)
    assert request.body["messages"][-1]["content"] == "fix the bug"
    [session] = workspace.store().list_sessions()
    assert [m.info.agent for m in workspace.store().messages(session.id)] == ["build", "build"]


def test_tab_still_completes_slash_commands(workspace: Workspace) -> None:
    child = spawn(workspace, "chat")
    child.send("/hel\t")
    # The completed "p" may be drawn apart from "/hel" (with cursor moves between) when the typing was
    # drawn before Tab was read, as on a busy machine.
    child.expect(r"/hel(?:\x1b\[[0-9;?]*[A-Za-z])*p")
    child.send("\r")
    child.expect("/compact")
    child.expect(PROMPT)
    assert leave(child) == 0


def test_at_agent_in_the_chat_sends_the_message_to_that_subagent(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    child = spawn(workspace, "chat")
    fake_llm.push(Reply(text="Reviewed: all good."))
    say(child, "@reviewer look at the tests", "Reviewed: all good.")
    assert leave(child) == 0
    [request] = fake_llm.chat_requests()
    assert "You review code carefully." in system_text(request)
    assert request.body["messages"][-1]["content"] == "look at the tests"


def test_ctrl_c_during_a_task_cancels_it_and_the_chat_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    child = spawn(workspace, "chat")
    fake_llm.push(Reply(tool_calls=[task("Think hard")]), Hang(60))
    child.send("delegate it\r")
    fake_llm.wait_for(2, timeout=60)  # the child's request is in flight
    child.sendintr()
    child.expect("cancelled")
    child.expect(PROMPT)
    fake_llm.push(Reply(text="Still here."))
    say(child, "are you there?", "Still here.")
    assert leave(child) == 0
    parent, sub = sessions(workspace)
    [call] = parts_of(workspace, parent.id)
    assert call.state.status == "error" and call.state.interrupted
    steps = [m.info for m in workspace.store().messages(sub.id) if isinstance(m.info, AssistantMessage)]
    assert steps[-1].error is not None and steps[-1].error.name == "MessageAbortedError"


def test_agent_lists_the_agents_and_switches(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    child = spawn(workspace, "--agent", "plan", prompt=False)  # bare agentcli: the chat
    child.expect("plan")
    child.expect(PROMPT)
    say(child, "/agent", r"› plan", "@reviewer")
    say(child, "/agent nosuch", "does not exist")
    say(child, "/agent build", "agent: build")
    fake_llm.push(Reply(text="building"))
    say(child, "go", "building")
    assert PLAN_NOTE not in system_text(fake_llm.chat_requests()[-1])
    assert leave(child) == 0
