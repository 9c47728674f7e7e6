"""`agentcli chat` in a real pseudo-terminal (pexpect): prompt, streamed answer, a permission
question answered, Ctrl-C during a turn, slash commands, exit."""

from __future__ import annotations

import threading
import time

import pexpect
import pytest

from agentcli.store.records import AssistantMessage
from tests import zygote_pty
from tests.fakellm import FakeLLM, Hang, Reply, ToolCall, Usage, is_summary_request
from tests.workspace import Workspace, agentcli_argv

PROMPT = "›"  # prompt_toolkit moves the cursor instead of printing the space


def spawn(ws: Workspace, *args: str, timeout: float = 30) -> pexpect.spawn:
    argv = agentcli_argv()
    env = {**ws.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = zygote_pty.spawn(
        argv[0],
        [*argv[1:], "chat", *args],
        cwd=str(ws.project),
        env=env,
        encoding="utf-8",
        timeout=timeout,
        dimensions=(40, 120),
    )
    child.expect(PROMPT)
    return child


def send_line(child: pexpect.spawn, text: str) -> None:
    child.send(text)
    child.send("\r")


def test_chat_streams_an_answer_and_exits(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hello from the scripted model!", usage=Usage(1500, 12)))
    child = spawn(workspace)
    send_line(child, "say hello")
    child.expect("Hello from the scripted model!")
    child.expect("1.5k")  # the gauge after the turn: used tokens
    child.expect(PROMPT)
    send_line(child, "/help")
    child.expect("/compact")
    child.expect(PROMPT)
    send_line(child, "/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    [session] = workspace.store().list_sessions()
    assert session.messages == 2


def test_chat_asks_permission_and_runs_the_command(workspace: Workspace, fake_llm: FakeLLM) -> None:
    marker = workspace.project / "created.txt"
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("bash", {"command": f"echo made > {marker.name}", "description": "make a file"})
            ]
        ),
        Reply(text="Created the file.", usage=Usage(900, 5)),
    )
    child = spawn(workspace)
    send_line(child, "create a file")
    child.expect("permission")
    child.expect("allow\\?")
    child.send("o")  # one key, no Enter
    child.expect("Created the file.")
    child.expect(PROMPT)
    assert marker.read_text().strip() == "made"
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_a_spinner_shows_while_an_allowed_command_runs_until_its_line(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    done = workspace.project / "done.flag"  # the command runs until the test has seen the spinner
    wait = f"until [ -e {done.name} ]; do sleep 0.05; done"
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": wait, "description": "wait a while"})]),
        Reply(text="Waited.", usage=Usage(900, 5)),
    )
    child = spawn(workspace)
    send_line(child, "wait a while")
    child.expect("allow\\?")
    child.send("o")
    # After the answer, while the command runs: a spinner frame beside the call, before the call's final line.
    first = child.expect([r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏](\x1b\[[0-9;]*m)* (\x1b\[[0-9;]*m)*bash", "● "])
    assert first == 0, "no spinner while the allowed command ran"
    done.touch()
    child.expect("● ")
    child.expect("Waited.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_chat_denied_permission_reaches_the_model(workspace: Workspace, fake_llm: FakeLLM) -> None:
    marker = workspace.project / "never.txt"
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": f"touch {marker.name}", "description": "touch"})]),
        Reply(text="Understood, I will not.", usage=Usage(900, 5)),
    )
    child = spawn(workspace)
    send_line(child, "touch it")
    child.expect("allow\\?")
    child.send("d")
    child.expect("Understood, I will not.")
    assert not marker.exists()
    results = [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert "rejected" in results[0]
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


def test_ctrl_c_cancels_the_turn_and_keeps_the_session(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(text="slow " * 400, delay=0.05, chunk_size=5), Reply(text="second answer", usage=Usage(800, 4))
    )
    child = spawn(workspace)
    send_line(child, "a long answer please")
    child.expect("slow")  # streaming now
    started = time.monotonic()
    child.sendintr()
    child.expect("cancelled")
    assert time.monotonic() - started < 5
    child.expect(PROMPT)
    send_line(child, "again")
    child.expect("second answer")
    child.expect(PROMPT)
    send_line(child, "/exit")
    child.expect(pexpect.EOF)

    store = workspace.store()
    [session] = store.list_sessions()
    assistants = [m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage)]
    assert assistants[0].info.error is not None and assistants[0].info.error.name == "MessageAbortedError"
    assert "slow" in assistants[0].text()  # the partial answer is kept
    assert assistants[-1].text() == "second answer"
    # The second request carried the cancelled partial answer as history.
    assert "slow" in str(fake_llm.chat_requests()[-1].body["messages"])


def test_ctrl_c_while_the_provider_hangs(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Hang(30))
    child = spawn(workspace)
    send_line(child, "hello?")
    fake_llm.wait_for(1)  # the request is at the provider, which says nothing
    started = time.monotonic()
    child.sendintr()
    child.expect("cancelled")
    assert time.monotonic() - started < 5
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize(
    ("command", "reply"),
    [
        ("/new", "new session"),
        ("/sessions", "no sessions yet"),
        ("/model fake/other", "model: fake/other"),
        ("/frobnicate", "unknown command"),
    ],
)
def test_slash_commands(workspace: Workspace, fake_llm: FakeLLM, command: str, reply: str) -> None:
    child = spawn(workspace)
    send_line(child, command)
    child.expect(reply)
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert fake_llm.chat_requests() == []


def test_slash_compact_then_continue_from_the_summary(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.seed_turns(
        fake_llm, [(f"question {i}", Reply(text=f"answer {i}", usage=Usage(2_000, 10))) for i in range(3)]
    )
    fake_llm.title = "Seeded session"
    fake_llm.push(Reply(text="## Objective\n- answer numbered questions", usage=Usage(6_000, 100)))
    child = spawn(workspace, "--continue")
    send_line(child, "/compact keep the numbers")
    child.expect("compacted")
    child.expect("→")
    child.expect(PROMPT)
    summary_request = fake_llm.chat_requests()[-1].body
    assert is_summary_request(summary_request) and "keep the numbers" in str(summary_request["messages"][-1])
    fake_llm.push(Reply(text="next answer", usage=Usage(900, 5)))
    send_line(child, "question 3")
    child.expect("next answer")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    messages = fake_llm.chat_requests()[-1].body["messages"]
    assert messages[1]["content"] == "What did we do so far?"
    assert "answer numbered questions" in messages[2]["content"]
    [session] = workspace.store().list_sessions()
    assert session.compactions == 1


def test_keys_typed_while_the_model_thinks_do_not_answer_the_permission_question(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    marker = workspace.project / "approved.txt"
    thinking = threading.Event()  # the answer streams on only once the early key is typed
    fake_llm.push(
        Reply(
            text="Thinking about it, one moment please.",
            hold=thinking,
            chunk_size=9,
            tool_calls=[
                ToolCall("bash", {"command": f"echo yes > {marker.name}", "description": "make a file"})
            ],
        ),
        Reply(text="Fine, I will not.", usage=Usage(900, 5)),
        Reply(text="Got your early note.", usage=Usage(950, 5)),
    )
    child = spawn(workspace)
    send_line(child, "make a file")
    child.expect("Thinking")
    send_line(child, "o")  # typed ahead, before the question exists (it is in the terminal's queue)
    thinking.set()
    child.expect("allow\\?")
    child.send("d")  # had the early "o" answered the question, the command would have run (see below)
    child.expect("Fine, I will not.")
    child.expect(PROMPT)
    child.send("\r")  # the next input was prefilled with what was taken away: send it
    child.expect("Got your early note.")
    child.expect(PROMPT)
    send_line(child, "/exit")
    child.expect(pexpect.EOF)
    assert not marker.exists()
    assert fake_llm.chat_requests()[-1].body["messages"][-1] == {"role": "user", "content": "o"}


def test_leaving_a_chat_says_how_to_resume_it(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="First answer."))
    child = spawn(workspace)
    send_line(child, "hello")
    child.expect("First answer.")
    child.expect(PROMPT)
    child.sendcontrol("d")
    child.expect("resume with: agentcli -c")
    child.expect(pexpect.EOF)
    [first] = workspace.store().list_sessions()
    # A newer session here: going back to the older one needs its id, and the line says so.
    workspace.store().create_session(str(workspace.project), title="newer")
    child = spawn(workspace, "-s", first.id)
    send_line(child, "/exit")
    child.expect(f"resume with: agentcli -s {first.id}")
    child.expect(pexpect.EOF)


def test_leaving_an_empty_chat_says_nothing_about_resuming(workspace: Workspace) -> None:
    child = spawn(workspace)
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    assert "resume with" not in (child.before or "")
