"""Inputs larger than the model's window: a message that cannot fit is never sent (one line says how
much fits; the chat offers to send it as a file), a huge tool argument or result does not make the
next request huge, a summary request is never sent twice the same, and a large paste shows as one
line in the chat."""

from __future__ import annotations

import json
import os

import pexpect

from tests.fakellm import ErrorResponse, FakeLLM, Recorded, Reply, ToolCall, Usage
from tests.terminal import PROMPT, leave, spawn
from tests.workspace import Workspace, assert_one_line_error

WINDOW = 32_000  # the small local model of the reports
TOO_LONG = 150_000  # bytes of request body the scripted provider rejects as over its window


def _paste(lines: int) -> str:
    return "\n".join(f"log line {i}: " + "x" * 60 for i in range(lines))


def _paste_into(child: pexpect.spawn, text: str) -> None:
    """A bracketed paste, as a terminal delivers it (written in as many pieces as the pty takes)."""
    data = ("\x1b[200~" + text + "\x1b[201~").encode()
    while data:
        data = data[os.write(child.child_fd, data) :]


def _provider_with_a_window(fake_llm: FakeLLM) -> None:
    """Requests over the window are rejected as a provider does; the others answer."""

    def answer(request: Recorded) -> ErrorResponse | Reply:
        if len(json.dumps(request.body)) > TOO_LONG:
            message = f"This model's maximum context length is {WINDOW} tokens"
            return ErrorResponse(400, {"error": {"message": message, "code": "context_length_exceeded"}})
        return Reply(text="## Objective\n- read the logs", usage=Usage(6_000, 20))

    fake_llm.on(lambda r: not r.title, answer)


def test_run_refuses_a_message_larger_than_the_window(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(context=WINDOW, output=4_000)
    proc = workspace.run("run", "explain", input=_paste(10_000))
    line = assert_one_line_error(proc)
    assert "more than fake/test-model takes in one message" in line and "KB of text" in line
    assert fake_llm.chat_requests() == []
    assert workspace.store().list_sessions() == []  # no empty session left behind


def test_the_chat_sends_a_too_large_message_as_a_file(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(context=WINDOW, output=4_000)
    text = "please explain this log\n" + _paste(8_000)
    fake_llm.push(Reply(text="Read the file.", usage=Usage(900, 5)))
    child = spawn(workspace)
    _paste_into(child, text)
    child.send("\r")
    child.expect("more than fake/test-model takes in one message")
    child.expect(r"\[f\]ile")
    child.send("f")
    child.expect("Read the file.")
    child.expect(PROMPT)
    assert leave(child) == 0
    [request] = fake_llm.chat_requests()
    sent = request.body["messages"][-1]["content"]
    assert sent.startswith("please explain this log") and len(sent) < 10_000
    path = sent.rsplit("saved in the file ", 1)[1].split(":", 1)[0]
    with open(path, encoding="utf-8") as fh:
        assert fh.read() == text  # the whole message, for the model to page through


def test_a_summary_request_is_never_sent_twice_the_same(workspace: Workspace, fake_llm: FakeLLM) -> None:
    # A session that grew on a larger window holds a 200 KB message; the model is now a 32k one.
    big = _paste(3_000)
    workspace.seed_turns(fake_llm, [(big, Reply(text="noted", usage=Usage(50_000, 5)))])
    workspace.write_config(context=WINDOW, output=4_000)
    _provider_with_a_window(fake_llm)
    proc = workspace.run("run", "-c", "what did the log say?")
    assert proc.returncode == 0, proc.stderr
    summaries = [r.body for r in fake_llm.chat_requests() if "tools" not in r.body]
    assert summaries, "no summary was asked for"
    texts = [json.dumps(body["messages"]) for body in summaries]
    assert len(set(texts)) == len(texts), "a summary request was sent twice"
    assert all(len(t) <= TOO_LONG for t in texts), "a summary request certain to be too long was sent"


def test_a_large_paste_shows_as_one_line_and_is_sent_whole(workspace: Workspace, fake_llm: FakeLLM) -> None:
    text = _paste(300)
    fake_llm.push(Reply(text="Got all of it.", usage=Usage(900, 5)))
    child = spawn(workspace)
    _paste_into(child, text)
    child.expect(r"\[pasted 300 lines\]")
    child.send("\r")
    child.expect("Got all of it.")
    child.expect(PROMPT)
    assert "log line 299" not in child.before  # not echoed line by line
    assert leave(child) == 0
    assert fake_llm.chat_requests()[-1].body["messages"][-1]["content"] == text


def test_up_in_a_later_chat_recalls_the_paste_itself(workspace: Workspace, fake_llm: FakeLLM) -> None:
    text = "look at this:\n" + _paste(40)
    fake_llm.push(
        Reply(text="First look.", usage=Usage(900, 5)), Reply(text="Second look.", usage=Usage(900, 5))
    )
    child = spawn(workspace)
    child.send("look at this:")
    _paste_into(child, "\n" + _paste(40))
    child.send("\r")
    child.expect("First look.")
    child.expect(PROMPT)
    assert leave(child) == 0

    child = spawn(workspace)  # another chat: its pastes are not this one's
    child.send("\x1b[A")  # Up
    child.expect(r"\[pasted 41 lines\]")  # shown collapsed again
    child.send("\r")
    child.expect("Second look.")
    child.expect(PROMPT)
    assert leave(child) == 0
    first, second = (r.body["messages"][-1]["content"] for r in fake_llm.chat_requests())
    assert first == text and second == text  # the paste itself, not the words "[pasted 41 lines]"


def test_a_huge_write_argument_does_not_make_the_next_request_huge(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # 135 KB (~34k tokens): as large as an answer within a 32k output limit may grow before agentcli
    # cuts the stream (a stream well past the model's output limit is cut, see test_llm_timeouts).
    content = "data row\n" * 15_000
    workspace.write_config(context=200_000, output=32_000)
    fake_llm.push(
        Reply(
            tool_calls=[ToolCall("write", {"filePath": "big.txt", "content": content})],
            usage=Usage(1_000, 2_000),  # as a provider would count it (the scripted server counts bytes)
            chunk_size=64 * 1024,  # streamed in large pieces: the test is about the next request
        ),
        Reply(text="Wrote it.", usage=Usage(900, 5)),
    )
    proc = workspace.run("run", "--yes", "write the data")
    assert proc.returncode == 0, proc.stderr
    assert (workspace.project / "big.txt").read_text() == content
    after = fake_llm.chat_requests()[-1]
    assert len(json.dumps(after.body)) < 100_000
    call = next(m for m in after.body["messages"] if m.get("tool_calls"))
    assert "not repeated here" in call["tool_calls"][0]["function"]["arguments"]


def test_a_tool_result_that_would_overflow_the_next_request_is_cut_first(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # usable: 28k tokens; the replies scripted are the turn's (no summary written ahead at 71 %)
    workspace.write_config({"compaction": {"background": False}}, context=WINDOW, output=4_000)
    workspace.seed_turns(fake_llm, [(_paste(1_000), Reply(text="noted", usage=Usage(20_000, 5)))])
    line = "a line of the notes: long enough that 650 of them make 45 KB of text\n"
    (workspace.project / "notes.txt").write_text(line * 650)  # 45 KB: one page of read
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "notes.txt"})], usage=Usage(20_100, 10)),
        Reply(text="Read.", usage=Usage(27_000, 5)),
    )
    proc = workspace.run("run", "-c", "--yes", "read the notes")
    assert proc.returncode == 0, proc.stderr
    after = fake_llm.chat_requests()[-1]
    result = next(m["content"] for m in after.body["messages"] if m["role"] == "tool")
    assert "truncated" in result and "saved to" in result  # the model can page through the rest
    # Cut to the room the window had left (28k usable - 20k used, ~4 characters a token), not 45 KB.
    assert len(result) < (28_000 - 20_005) * 4 + 1_000
