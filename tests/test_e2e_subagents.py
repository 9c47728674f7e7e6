"""Subagents end to end: `agentcli run` against the scripted model, which calls the task tool; the
task runs a child session of its own (its own prompt, window, tools and step limit), and only its
answer comes back to the parent."""

from __future__ import annotations

import json
import signal
import subprocess
from typing import Any

from agentcli.store.records import AssistantMessage, ToolPart
from tests import zygote
from tests.fakellm import ErrorResponse, FakeLLM, Hang, Recorded, Reply, ToolCall, Usage
from tests.workspace import Workspace, agentcli_argv

REVIEWER = {"mode": "subagent", "description": "Reviews code", "prompt": "You review code carefully."}


def task(prompt: str, kind: str = "reviewer", description: str = "review foo", **extra: Any) -> ToolCall:
    return ToolCall("task", {"description": description, "prompt": prompt, "subagent_type": kind, **extra})


def offered(request: Recorded) -> set[str]:
    return {t["function"]["name"] for t in request.body.get("tools") or []}


def system_text(request: Recorded) -> str:
    return "\n".join(m["content"] for m in request.body["messages"] if m["role"] == "system")


def tool_results(request: Recorded) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


def parts_of(ws: Workspace, session_id: str) -> list[ToolPart]:
    return [p for m in ws.store().messages(session_id) for p in m.parts if isinstance(p, ToolPart)]


def sessions(ws: Workspace) -> tuple[Any, Any]:
    """(the parent session, its one task session)."""
    store = ws.store()
    [child] = [s for s in store.list_sessions() if s.parent_id]
    return store.get_session(child.parent_id), child


def test_a_task_runs_in_a_child_session_with_the_agents_prompt_and_only_its_answer_returns(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    (workspace.project / "foo.py").write_text("FILE_BODY_THE_PARENT_NEVER_SEES = 1\n")
    fake_llm.push(
        Reply(tool_calls=[task("Review foo.py and say if it is fine")]),
        Reply(tool_calls=[ToolCall("read", {"filePath": "foo.py"})]),
        Reply(text="foo.py is fine"),
        Reply(text="The reviewer says foo.py is fine."),
    )
    proc = workspace.run("run", "PARENT_QUESTION please review foo")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The reviewer says foo.py is fine."
    assert "↳ @reviewer ● read foo.py" in proc.stderr  # the task's own calls, shown under it

    parent_first, child_first, child_second, parent_last = fake_llm.chat_requests()
    # The child starts from the agent's prompt and the task's prompt: none of the parent's conversation.
    assert "You review code carefully." in system_text(child_first)
    assert "You review code carefully." not in system_text(parent_first)
    assert [m["role"] for m in child_first.body["messages"]] == ["system", "user"]
    assert child_first.body["messages"][-1]["content"] == "Review foo.py and say if it is fine"
    assert "PARENT_QUESTION" not in json.dumps(child_first.body)
    # A subagent keeps no todo list and starts no tasks of its own.
    assert "task" in offered(parent_first) and "todowrite" in offered(parent_first)
    assert not {"task", "todowrite", "todoread"} & offered(child_first)
    assert "- reviewer: Reviews code" in next(
        t["function"]["description"] for t in parent_first.body["tools"] if t["function"]["name"] == "task"
    )
    # The parent's window receives the answer and a one-line note, never the file the child read.
    [result] = tool_results(parent_last)
    assert "FILE_BODY_THE_PARENT_NEVER_SEES" in json.dumps(child_second.body)
    assert "FILE_BODY_THE_PARENT_NEVER_SEES" not in json.dumps(parent_last.body)
    parent, child = sessions(workspace)
    assert result == (
        f"task_id: {child.id} (@reviewer: 2 steps, read 1 file)\n\n"
        "<task_result>\nfoo.py is fine\n</task_result>"
    )
    assert child.parent_id == parent.id and child.agent == "reviewer" and parent.agent == "build"
    [read] = parts_of(workspace, child.id)
    assert read.tool == "read" and read.state.status == "completed"
    [call] = parts_of(workspace, parent.id)
    assert call.tool == "task" and call.state.metadata["sessionId"] == child.id


def test_sessions_list_nests_a_task_under_its_parent_and_show_shows_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    fake_llm.push(Reply(tool_calls=[task("Say hi")]), Reply(text="hi from the reviewer"), Reply(text="done"))
    assert workspace.run("run", "first").returncode == 0
    fake_llm.push(Reply(text="second answer"))
    assert workspace.run("run", "second").returncode == 0  # a newer session, listed first
    parent, child = sessions(workspace)

    listed = workspace.run("sessions", "list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()[2:]
    ids = [line.split()[0] for line in lines]
    assert ids.index(child.id) == ids.index(parent.id) + 1, listed.stdout
    assert "└─ review foo (@reviewer subagent)" in lines[ids.index(child.id)]
    rows = json.loads(workspace.run("sessions", "list", "--json").stdout)
    assert {r["id"]: r["parent_id"] for r in rows}[child.id] == parent.id
    assert len(rows) == 3

    shown = workspace.run("sessions", "show", child.id)
    assert shown.returncode == 0, shown.stderr
    assert f"a task's session, started by {parent.id}" in shown.stdout
    assert "hi from the reviewer" in shown.stdout and "@reviewer" in shown.stdout
    assert f"task_id: {child.id}" in workspace.run("sessions", "show", parent.id, "--full").stdout

    deleted = workspace.run("sessions", "delete", parent.id, "--yes")
    assert deleted.stdout.rstrip().endswith("and its 1 task session"), deleted.stdout
    assert [s.id for s in workspace.store().list_sessions()] != [] and not workspace.store().children(
        [parent.id]
    )


def test_the_childs_cost_and_tokens_roll_up_into_the_parents_totals(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    config = workspace.write_config()
    config["provider"]["fake"]["models"]["priced"] = {
        "id": "gpt-4o",
        "limit": {"context": 100_000, "output": 8_000},
    }
    workspace.write_config({**config, "model": "fake/priced", "agent": {"reviewer": REVIEWER}})
    fake_llm.push(
        Reply(tool_calls=[task("Review")], usage=Usage(1000, 50)),
        Reply(text="reviewed", usage=Usage(20_000, 400)),
        Reply(text="done", usage=Usage(1200, 30)),
    )
    proc = workspace.run("run", "--format", "json", "review")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    parent, child = sessions(workspace)
    assert child.tokens.total == 20_400 and child.cost > 0
    assert parent.tokens.total == 1050 + 1230 + 20_400
    assert abs(parent.cost - (child.cost + _own_cost(workspace, parent.id))) < 1e-9
    assert result["tokens"]["total"] == parent.tokens.total and result["cost"] == parent.cost
    assert parent.context_tokens == 1230  # the parent's window is its own: the child's is not in it


def _own_cost(ws: Workspace, session_id: str) -> float:
    return sum(m.info.cost for m in ws.store().messages(session_id) if isinstance(m.info, AssistantMessage))


def test_an_unknown_subagent_type_is_the_tools_error_listing_the_valid_ones(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    fake_llm.push(Reply(tool_calls=[task("Do it", kind="wizard")]), Reply(text="sorry"))
    proc = workspace.run("run", "go")
    assert proc.returncode == 0, proc.stderr
    [call] = parts_of(workspace, workspace.store().list_sessions()[0].id)
    assert call.state.error == (
        "Unknown agent type: wizard is not a valid agent type (valid types: explore, general, reviewer)"
    )
    assert len(workspace.store().list_sessions()) == 1  # no child session was made


def test_the_task_tool_is_offered_only_when_there_are_subagents(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="general is there"))
    assert workspace.run("run", "hi").returncode == 0
    assert "task" in offered(fake_llm.chat_requests()[-1])
    workspace.write_config({"agent": {"general": {"disable": True}, "explore": {"disable": True}}})
    fake_llm.push(Reply(text="no subagent"))
    assert workspace.run("run", "hi").returncode == 0
    assert "task" not in offered(fake_llm.chat_requests()[-1])
    # Subagents the permission rules close to the agent are none either.
    workspace.write_config({"agent": {"reviewer": REVIEWER}, "permission": {"task": {"*": "deny"}}})
    fake_llm.push(Reply(text="all closed"))
    assert workspace.run("run", "hi").returncode == 0
    assert "task" not in offered(fake_llm.chat_requests()[-1])


def test_a_subagent_that_loops_stops_at_its_steps_limit_in_one_line(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": {**REVIEWER, "steps": 2}}})
    (workspace.project / "a.txt").write_text("a\n")
    (workspace.project / "b.txt").write_text("b\n")
    fake_llm.push(
        Reply(tool_calls=[task("Read everything")]),
        Reply(tool_calls=[ToolCall("read", {"filePath": "a.txt"})]),
        # The child's last step: no tools are offered, it is asked to wrap up, and still calls one.
        Reply(tool_calls=[ToolCall("read", {"filePath": "b.txt"})]),
        Reply(text="the reviewer got stuck"),
    )
    proc = workspace.run("run", "read all")
    assert proc.returncode == 0, proc.stderr
    requests = fake_llm.chat_requests()
    assert requests[2].body.get("tools") is None  # the child's step limit, not the parent's
    parent, child = sessions(workspace)
    [call] = parts_of(workspace, parent.id)
    assert call.state.status == "error"
    assert call.state.error == (
        "subagent reviewer stopped without an answer: stopped after 2 steps (max steps): the model still "
        f"called tools (its session: {child.id})"
    )
    assert tool_results(requests[3]) == [call.state.error]


def test_a_subagent_that_overflows_is_one_line_and_the_parent_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    # Every request of the child's session (its steps, its summaries) is too large for the model.
    fake_llm.on(lambda r: "You are agentcli" not in system_text(r), ErrorResponse.context_length())
    fake_llm.push(Reply(tool_calls=[task("Read the world")]), Reply(text="the reviewer overflowed"))
    proc = workspace.run("run", "go")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "the reviewer overflowed"
    assert "Traceback" not in proc.stderr
    parent, child = sessions(workspace)
    [call] = parts_of(workspace, parent.id)
    assert call.state.error is not None and "\n" not in call.state.error
    assert call.state.error.startswith("subagent reviewer failed: context window exceeded")
    assert call.state.error.endswith(f"(its session: {child.id})")


def test_at_agent_message_goes_straight_to_that_subagent(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    fake_llm.push(Reply(text="looks good to me"))
    proc = workspace.run("run", "@reviewer check the README")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "looks good to me"
    [request] = fake_llm.chat_requests()  # the parent's model was not asked anything
    assert "You review code carefully." in system_text(request)
    assert request.body["messages"][-1]["content"] == "check the README"
    parent, child = sessions(workspace)
    [call] = parts_of(workspace, parent.id)
    assert call.state.input["subagent_type"] == "reviewer" and "looks good to me" in call.state.output

    fake_llm.push(Reply(text="noted"))
    assert workspace.run("run", "--continue", "thanks").returncode == 0
    follow_up = fake_llm.chat_requests()[-1].body["messages"]
    assert [m["role"] for m in follow_up[1:]] == ["user", "assistant", "tool", "user"]
    assert follow_up[1]["content"] == "@reviewer check the README"


def test_ctrl_c_cancels_the_child_and_the_parents_step(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    fake_llm.push(Reply(tool_calls=[task("Think hard")]), Hang(60))
    proc = zygote.popen(
        [*agentcli_argv(), "run", "go"],
        cwd=workspace.project,
        env=workspace.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    fake_llm.wait_for(2, timeout=60)  # the child's request is in flight
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    parent, child = sessions(workspace)
    [call] = parts_of(workspace, parent.id)
    assert call.state.status == "error" and call.state.interrupted
    child_steps = [
        m.info for m in workspace.store().messages(child.id) if isinstance(m.info, AssistantMessage)
    ]
    assert child_steps[-1].error is not None and child_steps[-1].error.name == "MessageAbortedError"
    parent_steps = [
        m.info for m in workspace.store().messages(parent.id) if isinstance(m.info, AssistantMessage)
    ]
    assert len(parent_steps) == 1 and len(fake_llm.chat_requests()) == 2  # nothing after the cancel


NESTING = {**REVIEWER, "permission": {"task": "allow"}}  # a subagent that may start tasks itself


def test_tasks_nest_no_deeper_than_the_bound_and_the_deepest_is_told_why(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": NESTING}, "tasks": {"max_depth": 2}})
    fake_llm.push(
        Reply(tool_calls=[task("level 1")]),  # the user's session starts a task (depth 1)
        Reply(tool_calls=[task("level 2")]),  # which starts one (depth 2)
        Reply(tool_calls=[task("level 3")]),  # which may not start a third
        Reply(text="did it here"),
        Reply(text="level 2 done"),
        Reply(text="level 1 done"),
    )
    proc = workspace.run("run", "go deep", "--yes")
    assert proc.returncode == 0, proc.stderr
    store = workspace.store()
    assert len(store.list_sessions()) == 3  # the user's, and two nested tasks
    refused = [
        p for s in store.list_sessions() for p in parts_of(workspace, s.id) if p.state.status == "error"
    ]
    assert len(refused) == 1
    assert "tasks nest at most 2 deep (config tasks.max_depth)" in refused[0].state.error


def test_one_turn_starts_no_more_tasks_than_the_bound(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}, "tasks": {"max_per_turn": 2}})
    fake_llm.push(
        Reply(tool_calls=[task("one")]),
        Reply(text="one done"),
        Reply(tool_calls=[task("two")]),
        Reply(text="two done"),
        Reply(tool_calls=[task("three")]),
        Reply(text="finished"),
    )
    proc = workspace.run("run", "many tasks", "--yes")
    assert proc.returncode == 0, proc.stderr
    assert len(workspace.store().list_sessions()) == 3  # the user's and two tasks
    [parent] = [s for s in workspace.store().list_sessions() if not s.parent_id]
    calls = parts_of(workspace, parent.id)
    assert [c.state.status for c in calls] == ["completed", "completed", "error"]
    assert "started 2 tasks, the most one turn may (config tasks.max_per_turn)" in calls[2].state.error
    # The next turn counts afresh.
    fake_llm.push(Reply(tool_calls=[task("four")]), Reply(text="four done"), Reply(text="again"))
    assert workspace.run("run", "--continue", "one more", "--yes").returncode == 0
    assert len(workspace.store().list_sessions()) == 4
