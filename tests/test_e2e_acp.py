"""`agentcli acp` end to end: the installed CLI spawned as a subprocess, spoken to as an editor would
through the agent-client-protocol package's client side, the scripted server as the model."""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import pytest
from acp import text_block
from acp.schema import ResourceContentBlock

from tests.acp_client import Editor, every_line_is_json_rpc, run, running_agent
from tests.fakellm import FakeLLM, Hang, Reply, ToolCall, Usage
from tests.workspace import Workspace

NOISY_PLUGIN = """\
import os
print("a plugin printing on stdout")
os.write(1, b"a plugin writing to fd 1\\n")
"""


def test_the_answer_and_reasoning_stream_as_chunks_and_stdout_carries_only_json_rpc(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # A plugin that prints at load: what would corrupt the protocol must land on stderr.
    (workspace.project / "noisy.py").write_text(NOISY_PLUGIN)
    workspace.write_config({"plugin": ["./noisy.py"]})
    fake_llm.push(
        # Paced: deltas that arrive together are joined before they are sent (the processor's coalescing).
        Reply(
            text="The answer, streamed in pieces.", reasoning="Thinking it over.", chunk_size=4, delay=0.05
        ),
    )
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            answer = await agent.say(sid, "what is the answer?")
            assert answer.stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        assert "a plugin printing on stdout" in agent.stderr()
        assert "a plugin writing to fd 1" in agent.stderr()
        assert "Traceback" not in agent.stderr()

    run(session())
    chunks = editor.of_kind("agent_message_chunk")
    assert len(chunks) > 1  # streamed, not sent whole at the end
    assert editor.text() == "The answer, streamed in pieces."
    assert editor.text("agent_thought_chunk") == "Thinking it over."
    usage = editor.of_kind("usage_update")[-1]
    assert usage.used > 0 and usage.size == 100_000  # the context figures against the window
    figures = [(u.used, u.size, u.cost.amount if u.cost else None) for u in editor.of_kind("usage_update")]
    assert all(a != b for a, b in zip(figures, figures[1:], strict=False)), figures  # no repeats
    names = {c.name for c in editor.of_kind("available_commands_update")[0].available_commands}
    assert {"compact", "undo", "redo", "context"} <= names
    # The session is agentcli's own: stored, with the question and the answer.
    [stored] = workspace.store().list_sessions()
    assert "The answer, streamed in pieces." in str(workspace.run("sessions", "show", stored.id).stdout)


def _edit_script(app_path: str) -> list[Reply]:
    return [
        Reply(tool_calls=[ToolCall("read", {"filePath": "app.py"})]),
        Reply(
            tool_calls=[
                ToolCall("edit", {"filePath": app_path, "oldString": "hello", "newString": "goodbye"})
            ]
        ),
        Reply(text="Done."),
    ]


def test_a_read_and_an_edit_allowed_in_the_client_go_through_its_buffers(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    app = workspace.project / "app.py"
    app.write_text('print("hello")\n')
    fake_llm.push(*_edit_script(str(app)))
    # The editor holds an unsaved change: the model must read that, and the edit applies to it.
    editor = Editor(answers=["once"], fs=True, buffers={str(app): 'print("hello")  # unsaved\n'})

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            assert (await agent.say(sid, "say goodbye")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)

    run(session())
    assert app.read_text() == 'print("goodbye")  # unsaved\n'
    assert editor.writes == [(str(app), 'print("goodbye")  # unsaved\n')]
    assert str(app) in editor.reads
    read_result = [m["content"] for m in fake_llm.chat_requests()[1].body["messages"] if m["role"] == "tool"]
    assert "# unsaved" in read_result[0]

    # Each call: announced (tool_call), then updated (tool_call_update) to its end, with its file.
    starts = editor.of_kind("tool_call")
    assert [s.kind for s in starts] == ["read", "edit"]
    edit_id = starts[1].tool_call_id
    edit_updates = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == edit_id]
    assert [u.status for u in edit_updates] == ["in_progress", "completed"]
    done = edit_updates[-1]
    assert done.locations[0].path == str(app)
    [diff] = [c for c in done.content if c.type == "diff"]
    # The whole text, so the client numbers the lines as the file's (not the changed snippet's).
    assert (diff.path, diff.old_text, diff.new_text) == (
        str(app),
        'print("hello")  # unsaved\n',
        'print("goodbye")  # unsaved\n',
    )
    assert done.locations[0].line == 1
    # The one question was the edit's, asked in the client about that very call.
    [asked] = editor.asked
    assert asked.tool_call.tool_call_id == edit_id
    # It carries the call as the tool_call updates do: a client needs nothing else to show it.
    shown = asked.tool_call
    assert shown.title == starts[1].title or shown.title.startswith("edit")
    assert shown.kind == "edit" and shown.locations[0].path == str(app)
    # The question's diff is the whole file as the editor holds it, numbered as the file's lines.
    assert [(c.old_text, c.new_text) for c in shown.content if c.type == "diff"] == [
        ('print("hello")  # unsaved\n', 'print("goodbye")  # unsaved\n')
    ]
    assert {o.kind for o in asked.options} == {"allow_once", "allow_always", "reject_once"}


def test_the_permission_question_for_an_edit_or_write_shows_the_whole_file_at_its_changed_line(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    app = workspace.project / "app.py"
    before = "".join(f"line {n}\n" for n in range(1, 11))
    app.write_text(before)
    edit = ToolCall("edit", {"filePath": str(app), "oldString": "line 7\n", "newString": "line seven\n"})
    new = workspace.project / "new.py"
    write = ToolCall("write", {"filePath": str(new), "content": "fresh\n"})
    read = ToolCall("read", {"filePath": "app.py"})
    fake_llm.push(
        Reply(tool_calls=[read]), Reply(tool_calls=[edit]), Reply(tool_calls=[write]), Reply(text="ok")
    )
    editor = Editor(answers=["once", "once"])

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            assert (await agent.say(sid, "change line 7")).stop_reason == "end_turn"

    run(session())
    asked_edit, asked_write = (a.tool_call for a in editor.asked)
    [diff] = [c for c in asked_edit.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == (before, before.replace("line 7\n", "line seven\n"))
    assert asked_edit.locations[0].line == 7  # where the change is, as the file numbers it
    [diff] = [c for c in asked_write.content if c.type == "diff"]
    assert (diff.path, diff.old_text, diff.new_text) == (str(new), None, "fresh\n")
    assert app.read_text().count("line seven") == 1 and new.read_text() == "fresh\n"


def test_an_edit_rejected_in_the_client_leaves_the_file_and_tells_the_model(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    app = workspace.project / "app.py"
    app.write_text('print("hello")\n')
    fake_llm.push(*_edit_script(str(app)))
    editor = Editor(answers=["deny"])  # no fs: the agent reads and writes the disk itself

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            assert (await agent.say(sid, "say goodbye")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)

    run(session())
    assert app.read_text() == 'print("hello")\n'
    assert len(editor.asked) == 1 and not editor.reads and not editor.writes
    failed = [u for u in editor.of_kind("tool_call_update") if u.status == "failed"]
    assert len(failed) == 1
    assert "rejected" in [c for c in failed[0].content if c.type == "content"][0].content.text
    tool_results = [m for m in fake_llm.chat_requests()[2].body["messages"] if m["role"] == "tool"]
    assert "rejected permission" in tool_results[-1]["content"]


def test_cancel_ends_the_turn_long_before_the_answer_would_and_the_session_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(
        Reply(text="word " * 1200, chunk_size=5, delay=0.05),  # about 60 s of streaming
        Reply(text="Back again."),
    )
    editor = Editor()
    streaming = asyncio.Event()
    editor.on_update = lambda u: streaming.set() if u.session_update == "agent_message_chunk" else None

    async def session() -> float:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            turn = asyncio.create_task(agent.say(sid, "talk for a while"))
            await asyncio.wait_for(streaming.wait(), 60)
            asked = time.monotonic()
            await agent.conn.cancel(session_id=sid)
            answer = await turn
            took = time.monotonic() - asked
            assert answer.stop_reason == "cancelled"
            again = await agent.say(sid, "are you there?")
            assert again.stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        return took

    took = run(session())
    # Cancelled, not streamed to the end (60 s): no wall-clock bound a loaded machine could miss
    # (scripts/bench_acp.py measures the latency: acp_cancel_s, target 2 s).
    assert took < 30, f"cancel took {took:.2f}s"
    assert editor.text().endswith("Back again.")
    # The cancelled answer is kept as far as it got; the next question followed it.
    last = fake_llm.chat_requests()[-1].body["messages"]
    assert last[-1]["content"] == "are you there?"
    assert last[-2]["role"] == "assistant" and last[-2]["content"].startswith("word")


def test_cancel_while_a_permission_question_waits_refuses_the_call(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    app = workspace.project / "app.py"
    app.write_text('print("hello")\n')
    fake_llm.push(*_edit_script(str(app)))

    async def session() -> str:
        editor = Editor(hold=asyncio.Event())
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            turn = asyncio.create_task(agent.say(sid, "say goodbye"))
            await asyncio.wait_for(editor.asking.wait(), 60)
            await agent.conn.cancel(session_id=sid)
            answer = await turn  # the agent stops waiting for the question: no answer needed first
            assert editor.hold is not None
            editor.hold.set()
        every_line_is_json_rpc(agent.stdout_lines)
        return str(answer.stop_reason)

    assert run(session()) == "cancelled"
    assert app.read_text() == 'print("hello")\n'
    assert fake_llm.pending() == 1  # the model was not asked to go on


def test_load_replays_the_stored_history_in_a_new_agent(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "notes.txt").write_text("remember the milk\n")
    fake_llm.push(
        Reply(text="Let me read it.", tool_calls=[ToolCall("read", {"filePath": "notes.txt"})]),
        Reply(text="It says to remember the milk."),
    )
    first = Editor()

    async def create() -> str:
        async with running_agent(workspace, first) as agent:
            sid = await agent.start(first, workspace.project)
            await agent.say(sid, "what do my notes say?")
            return sid

    sid = run(create())
    again = Editor()

    async def load() -> None:
        async with running_agent(workspace, again) as agent:
            await agent.conn.initialize(protocol_version=1)
            await agent.conn.load_session(cwd=str(workspace.project), session_id=sid, mcp_servers=[])
            replayed = len(again.updates)  # everything before the answer to session/load
            assert replayed > 0
            fake_llm.push(Reply(text="Still the milk."))
            assert (await agent.say(sid, "and now?")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)

    run(load())
    kinds = [u.session_update for _, u in again.updates]
    user = [u.content.text for u in again.of_kind("user_message_chunk")]
    assert user == ["what do my notes say?"]
    assert kinds.index("user_message_chunk") < kinds.index("tool_call")
    [call] = again.of_kind("tool_call")
    assert call.status == "completed" and call.kind == "read"
    assert call.locations[0].path == str(workspace.project / "notes.txt")
    assert "remember the milk" in call.content[0].content.text
    assert "It says to remember the milk." in again.text()
    assert again.text().endswith("Still the milk.")
    # The loaded session's history went to the model with the new question.
    messages = fake_llm.chat_requests()[-1].body["messages"]
    assert messages[1]["content"] == "what do my notes say?" and messages[-1]["content"] == "and now?"


def test_compact_undo_and_context_run_as_slash_commands(workspace: Workspace, fake_llm: FakeLLM) -> None:
    commands = workspace.project / ".opencode" / "command"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a file\n---\nReview $ARGUMENTS carefully.")
    workspace.write_config({"command": {"ship": {"template": "Ship it", "description": "Ship the release"}}})
    fake_llm.push(
        Reply(text="First answer. " * 20, usage=Usage(4000, 50)),
        Reply(text="## Summary\nWe talked.", usage=Usage(4100, 30)),  # the compaction's summary
        Reply(text="Reviewing."),
    )
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            await agent.say(sid, "first question")
            assert (await agent.say(sid, "/compact keep the decisions")).stop_reason == "end_turn"
            await agent.say(sid, "/compact undo")
            await agent.say(sid, "/context")
            await agent.say(sid, "/review app.py")
            await agent.say(sid, "/undo")
        every_line_is_json_rpc(agent.stdout_lines)

    run(session())
    names = {c.name for c in editor.of_kind("available_commands_update")[0].available_commands}
    assert {"compact", "undo", "context", "review", "ship"} <= names  # ship: the config's JSON command
    text = editor.text()
    assert "compacting (manual)" in text and "compacted:" in text
    summary_request = fake_llm.chat_requests()[1].body["messages"][-1]["content"]
    assert "keep the decisions" in summary_request
    assert "We talked." in editor.text("agent_thought_chunk")  # the summary is progress, not the answer
    assert "compaction undone: the full history is back" in text
    assert "usable" in text.lower()  # /context's table
    assert fake_llm.chat_requests()[-1].body["messages"][-1]["content"] == "Review app.py carefully."
    assert text.rstrip().endswith("no files changed")  # /undo hid the review turn
    assert "undone: “Review app.py carefully.”" in text


def test_bad_input_gets_json_rpc_errors_and_the_agent_keeps_serving(workspace: Workspace) -> None:
    from tests.acp_client import raw_exchange

    replies = run(
        raw_exchange(
            workspace,
            [
                b"this is not json\n",
                b"[1, 2, 3]\n",
                b'{"jsonrpc": "2.0", "id": 7, "method": 12}\n',
                b'{"jsonrpc": "2.0", "id": 8, "method": "no/such/method", "params": {}}\n',
                b'{"jsonrpc": "2.0", "id": 9, "method": "session/prompt",'
                b' "params": {"sessionId": "ses_nope", "prompt": []}}\n',
                b'{"jsonrpc": "2.0", "id": 10, "method": "session/new",'
                b' "params": {"cwd": "relative/dir", "mcpServers": []}}\n',
                b'{"jsonrpc": "2.0", "id": 11, "method": "initialize", "params": {"protocolVersion": 1}}\n',
            ],
        )
    )
    assert [r["error"]["code"] for r in replies[:6]] == [-32700, -32600, -32600, -32601, -32602, -32602]
    assert [r["id"] for r in replies] == [None, None, 7, 8, 9, 10, 11]
    assert "unknown session" in replies[4]["error"]["data"]["details"]
    assert "absolute" in replies[5]["error"]["data"]["details"]
    assert replies[6]["result"]["protocolVersion"] == 1  # still serving after all of it
    assert replies[6]["result"]["agentCapabilities"]["loadSession"] is True


@pytest.mark.parametrize("how", ["stdin closed", "SIGTERM"])
def test_a_client_gone_mid_turn_ends_it_keeps_the_session_and_frees_it(
    workspace: Workspace, fake_llm: FakeLLM, how: str
) -> None:
    fake_llm.push(Hang(60))
    editor = Editor()

    async def session() -> tuple[str, int | None]:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            turn = asyncio.create_task(agent.say(sid, "a question left hanging"))
            await asyncio.to_thread(fake_llm.wait_for, 1, 60)
            assert agent.process.stdin is not None
            if how == "SIGTERM":
                agent.process.terminate()  # the editor stops its agent
            else:
                agent.process.stdin.close()  # the editor quits
            code = await asyncio.wait_for(agent.process.wait(), 60)
            turn.cancel()
            return sid, code

    sid, code = run(session())
    assert code == 0
    # Kept, with the question; not held: another agent continues it at once.
    workspace.extra_env["AGENTCLI_SESSION_WAIT"] = "0"
    fake_llm.push(Reply(text="Here now."))
    proc = workspace.run("run", "--session", sid, "still there?")
    assert proc.returncode == 0, proc.stderr
    assert "Here now." in proc.stdout
    assert fake_llm.chat_requests()[-1].body["messages"][1]["content"] == "a question left hanging"


def test_linked_and_embedded_files_in_the_prompt_are_attached(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    notes = workspace.project / "notes.txt"
    notes.write_text("the secret word is swordfish\n")
    fake_llm.push(Reply(text="Swordfish."))
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            link = ResourceContentBlock(type="resource_link", name="notes.txt", uri=notes.as_uri())
            await agent.conn.prompt(
                session_id=sid, prompt=[text_block("what does "), link, text_block(" say?")]
            )

    run(session())
    sent = fake_llm.chat_requests()[0].body["messages"][-1]["content"]
    assert sent.startswith("what does @notes.txt say?")
    assert "swordfish" in sent


def test_a_line_nested_past_any_parser_is_a_parse_error_and_the_agent_keeps_serving(
    workspace: Workspace,
) -> None:
    from tests.acp_client import raw_exchange

    initialize = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}\n'
    replies = run(raw_exchange(workspace, [b"[" * 100_000 + b"\n", initialize]))
    assert replies[0]["error"]["code"] == -32700
    assert replies[1]["result"]["protocolVersion"] == 1


def test_a_line_over_the_limit_is_skipped_unread_and_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli.acp import transport

    monkeypatch.setattr(transport, "MAX_LINE_BYTES", 1000)

    async def exchange() -> tuple[Any, Any, bytes]:
        agent_reads, client_writes = os.pipe()
        client_reads, agent_writes = os.pipe()
        lines = transport.LineTransport(agent_reads, agent_writes)
        os.write(client_writes, b"x" * 5000 + b"\n" + b'{"jsonrpc": "2.0", "method": "ok"}\n')
        os.close(client_writes)
        message = await lines.receive()
        after = await lines.receive()
        return message, after, os.read(client_reads, 10_000)

    message, after, answered = asyncio.run(exchange())
    assert message == {"jsonrpc": "2.0", "method": "ok"}  # the line after it is read as usual
    assert after is None
    error = json.loads(answered)["error"]
    assert error["code"] == -32700 and "over" in error["data"]["details"]
