"""The end of a long turn: at the step limit the model gets a last step without tools and is asked to
wrap up; the same tool call three times in a row stops `run` and asks the user in `chat`."""

from __future__ import annotations

from pathlib import Path

import pexpect

from agentcli.session import events
from agentcli.session.toolrunner import DOOM_LOOP_TEXT
from agentcli.store.records import ToolPart
from tests.builders import Harness
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.test_e2e_chat import PROMPT, send_line, spawn
from tests.workspace import Workspace


def _tool_parts(ws: Workspace) -> list[ToolPart]:
    store = ws.store()
    [session] = store.list_sessions()
    return [p for m in store.messages(session.id) for p in m.parts if isinstance(p, ToolPart)]


def test_at_the_step_limit_the_model_wraps_up_without_tools(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"agent": {"build": {"steps": 2}}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo step one", "description": "first step"})]),
        Reply(text="Step limit reached. Done: ran step one. Left: step two.", usage=Usage(300, 12)),
    )
    proc = workspace.run("run", "--yes", "do a long task")
    assert proc.returncode == 0, proc.stderr
    assert "Left: step two." in proc.stdout
    assert "step limit reached (2 steps)" in proc.stderr
    first, last = fake_llm.chat_requests()
    assert first.body.get("tools")
    assert "tools" not in last.body  # the last step offers no tools…
    wrap_up = last.body["messages"][-1]
    assert wrap_up["role"] == "user" and "MAXIMUM STEPS REACHED" in wrap_up["content"]  # …and asks to wrap up
    assert any(m["role"] == "tool" and "step one" in m["content"] for m in last.body["messages"])
    # The request to wrap up is not stored as something the user said.
    store = workspace.store()
    [session] = store.list_sessions()
    assert "MAXIMUM STEPS" not in str([m.model_dump() for m in store.messages(session.id)])


def test_a_tool_call_on_the_last_step_is_refused_and_run_fails(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"build": {"steps": 1}}})
    fake_llm.push(Reply(tool_calls=[ToolCall("bash", {"command": "touch made.txt", "description": "touch"})]))
    proc = workspace.run("run", "--yes", "make a file")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "stopped after 1 steps (max steps)" in proc.stderr
    assert not (workspace.project / "made.txt").exists()
    [part] = _tool_parts(workspace)
    assert part.state.status == "error" and "step limit" in (part.state.error or "")
    assert len(fake_llm.chat_requests()) == 1


def _same_call(log: str) -> Reply:
    return Reply(tool_calls=[ToolCall("bash", {"command": f"echo again >> {log}", "description": "append"})])


def test_three_identical_calls_stop_run_with_a_clear_message(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        _same_call("log.txt"),
        _same_call("log.txt"),
        _same_call("log.txt"),
        Reply(text="never asked for", usage=Usage(10, 2)),
    )
    proc = workspace.run("run", "--yes", "loop")
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "called bash 3 times in a row with the same arguments" in proc.stderr
    assert (workspace.project / "log.txt").read_text().splitlines() == [
        "again",
        "again",
    ]  # the third never ran
    assert len(fake_llm.chat_requests()) == 3
    third = _tool_parts(workspace)[-1]
    assert third.state.status == "error" and third.state.error == DOOM_LOOP_TEXT


def _chat_asked_about_a_third_call(ws: Workspace, llm: FakeLLM, final: str) -> pexpect.spawn:
    ws.write_config({"permission": {"bash": "allow"}})
    llm.push(
        _same_call("log.txt"),
        _same_call("log.txt"),
        _same_call("log.txt"),
        Reply(text=final, usage=Usage(400, 6)),
    )
    child = spawn(ws)
    send_line(child, "append three times")
    child.expect("3 times in a row")
    child.expect("allow\\?")
    return child


def _leave(child: pexpect.spawn) -> None:
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_chat_asks_before_a_third_identical_call_and_allowing_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    child = _chat_asked_about_a_third_call(workspace, fake_llm, "Finished after three appends.")
    child.send("o")  # one key answers
    child.expect("Finished after three appends.")
    _leave(child)
    assert (workspace.project / "log.txt").read_text().splitlines() == ["again"] * 3


def test_chat_denying_a_third_identical_call_stops_the_turn(workspace: Workspace, fake_llm: FakeLLM) -> None:
    child = _chat_asked_about_a_third_call(workspace, fake_llm, "after the stop")
    child.send("d")  # one key answers
    child.expect("stopped: the model called bash 3 times")
    _leave(child)
    assert (workspace.project / "log.txt").read_text().splitlines() == ["again"] * 2
    assert len(fake_llm.chat_requests()) == 3


def test_only_identical_calls_in_a_row_count(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)  # no tools: every call is an "unknown tool" error, still a call

    def call(arg: str) -> Reply:
        return Reply(tool_calls=[ToolCall("probe", {"arg": arg})])

    fake_llm.push(call("a"), call("a"), call("b"), call("a"), call("a"), Reply(text="varied enough"))
    h.loop.prompt(h.sid, "vary")
    assert h.assistants()[-1].text() == "varied enough"
    assert not [e for e in h.of(events.ErrorOccurred) if e.kind == "doom_loop"]

    # Arguments that differ only in key order are the same arguments.
    fake_llm.push(
        Reply(tool_calls=[ToolCall("probe", {"x": 1, "y": 2})]),
        Reply(tool_calls=[ToolCall("probe", {"y": 2, "x": 1})]),
        Reply(tool_calls=[ToolCall("probe", {"x": 1, "y": 2})]),
    )
    h.loop.prompt(h.sid, "repeat")
    assert [e.kind for e in h.of(events.ErrorOccurred)].count("doom_loop") == 1
