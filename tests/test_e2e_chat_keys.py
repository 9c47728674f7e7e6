"""The chat's keys (OpenCode's and Claude Code's): one key answers a permission question, Ctrl-C,
Esc or Ctrl-D there cancels the whole turn, another key gets a hint, Esc interrupts a streaming
answer; and the markup tool outputs carry for the model is never shown."""

from __future__ import annotations

import io
import time

import pexpect

from agentcli.store.records import AssistantMessage
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace


def _bash(command: str) -> Reply:
    return Reply(tool_calls=[ToolCall("bash", {"command": command, "description": "run it"})])


def test_one_key_answers_a_permission_question(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(_bash("echo made > made.txt"), Reply(text="Made it.", usage=Usage(900, 5)))
    child = spawn(workspace)
    child.send("make a file\r")
    child.expect(r"allow\?")
    child.send("o")  # no Enter
    child.expect("Made it.")
    child.expect(PROMPT)
    assert leave(child) == 0
    assert (workspace.project / "made.txt").read_text() == "made\n"


def test_ctrl_c_at_a_permission_question_cancels_the_turn(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(_bash("touch never.txt"), Reply(text="Went on without it.", usage=Usage(900, 5)))
    child = spawn(workspace)
    child.send("touch a file\r")
    child.expect(r"allow\?")
    child.sendintr()
    child.expect("cancelled")
    child.expect(PROMPT)
    assert leave(child) == 0
    assert not (workspace.project / "never.txt").exists()
    assert len(fake_llm.chat_requests()) == 1  # the model was not asked to go on
    assert fake_llm.pending() == 1


def test_esc_at_a_permission_question_cancels_the_turn(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(_bash("touch never.txt"), Reply(text="Went on without it.", usage=Usage(900, 5)))
    child = spawn(workspace)
    child.send("touch a file\r")
    child.expect(r"allow\?")
    child.send("\x1b")
    child.expect("cancelled")
    child.expect(PROMPT)
    assert leave(child) == 0
    assert not (workspace.project / "never.txt").exists()
    assert len(fake_llm.chat_requests()) == 1


def test_ctrl_d_at_a_permission_question_cancels_the_turn(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(_bash("touch never.txt"), Reply(text="Went on without it.", usage=Usage(900, 5)))
    child = spawn(workspace)
    child.send("touch a file\r")
    child.expect(r"allow\?")
    child.sendcontrol("d")
    child.expect("cancelled")
    child.expect(PROMPT)
    assert leave(child) == 0
    assert not (workspace.project / "never.txt").exists()
    assert len(fake_llm.chat_requests()) == 1  # the model was not asked to go on
    assert fake_llm.pending() == 1


def test_a_key_that_answers_nothing_gets_a_hint_and_the_question_stays(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(_bash("echo made > made.txt"), Reply(text="Made it.", usage=Usage(900, 5)))
    child = spawn(workspace)
    child.send("make a file\r")
    child.expect(r"allow\?")
    child.send("x")
    child.expect("press o to allow once \\(or Enter\\), a always, d to deny")
    child.expect(r"allow\?")  # asked again
    child.send("o")
    child.expect("Made it.")
    child.expect(PROMPT)
    assert leave(child) == 0
    assert (workspace.project / "made.txt").read_text() == "made\n"


def test_esc_interrupts_a_streaming_answer(workspace: Workspace, fake_llm: FakeLLM) -> None:
    # 3 000 chunks 50 ms apart: two and a half minutes if nothing stops it.
    fake_llm.push(
        Reply(text="slow " * 3_000, delay=0.05, chunk_size=5),
        Reply(text="second answer", usage=Usage(800, 4)),
    )
    child = spawn(workspace)
    child.send("a long answer please\r")
    child.expect("slow")
    child.send("\x1b")
    child.expect("cancelled", timeout=20)
    child.expect(PROMPT)
    say(child, "again", "second answer")
    assert leave(child) == 0
    store = workspace.store()
    [session] = store.list_sessions()
    first = next(m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage))
    assert first.info.error is not None and first.info.error.name == "MessageAbortedError"
    assert "slow" in first.text()  # the part that streamed is kept


def test_markup_meant_for_the_model_is_never_shown(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "notes.txt").write_text("first note\n")
    fake_llm.push(
        _bash("echo boom; exit 3"),
        Reply(tool_calls=[ToolCall("read", {"filePath": "notes.txt"})]),
        Reply(text="Both done.", usage=Usage(900, 5)),
    )
    child = spawn(workspace, "--yes")
    screen = io.StringIO()
    child.logfile_read = screen
    say(child, "run and read", "exit 3", "Both done.")
    assert leave(child) == 0
    assert "boom" in screen.getvalue()
    sent = fake_llm.chat_requests()[-1].body["messages"]
    tool_results = [m["content"] for m in sent if m["role"] == "tool"]
    assert "<bash_metadata>" in tool_results[0]  # the model gets the note as OpenCode sends it
    assert "<bash_metadata>" not in screen.getvalue()

    [session] = workspace.store().list_sessions()
    shown = workspace.run("sessions", "show", session.id).stdout
    assert "boom" in shown and "first note" in shown
    for markup in ("<bash_metadata>", "<path>", "<content>"):
        assert markup not in shown


STUCK_PLUGIN = """
import time
from pathlib import Path
from agentcli.plugins import hookimpl
from agentcli.plugins.api import PluginTool

def stall(args, ctx):
    Path(__file__).with_name("entered").write_text("yes")
    time.sleep(600)  # ignores the turn's abort: Ctrl-C cannot wind the turn down
    return "too late"

@hookimpl
def tool(input, output):
    output["tools"]["stall"] = PluginTool("stall", "Wait.", {"type": "object", "properties": {}}, stall)
"""


def test_a_second_ctrl_c_leaves_a_turn_that_will_not_wind_down_and_the_session_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    (workspace.project / "stuck.py").write_text(STUCK_PLUGIN)
    workspace.write_config({"plugin": ["stuck.py"]})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("stall", {})]),
        Reply(text="Here again.", usage=Usage(900, 5)),
    )
    # No waiting for a busy session: the turn left behind must not hold this one.
    child = spawn(workspace, "--trust", env={"AGENTCLI_SESSION_WAIT": "0"})
    child.send("wait for it\r")
    deadline = time.monotonic() + 60
    while not (workspace.project / "entered").exists():  # the plugin's tool holds the turn
        assert time.monotonic() < deadline, "the plugin never ran"
        child.expect([pexpect.TIMEOUT, pexpect.EOF], timeout=0.05)  # reading the screen meanwhile
    child.sendintr()
    child.expect("the turn is still winding down; Ctrl-C again to leave it now")
    child.sendintr()
    child.expect("cancelled")
    child.expect(PROMPT)
    say(child, "are you there?", "Here again.")
    assert leave(child) == 0
    assert fake_llm.chat_requests()[-1].body["messages"][-1] == {"role": "user", "content": "are you there?"}
