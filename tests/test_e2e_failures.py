"""Bad input and broken providers: one clear line, a non-zero exit code, and no data lost."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time

from agentcli.store.records import AssistantMessage
from tests.fakellm import ErrorResponse, FakeLLM, Hang, Reply, ToolCall, Usage, unused_port
from tests.workspace import Workspace, agentcli_argv, assert_one_line_error


def test_malformed_opencode_json(workspace: Workspace) -> None:
    (workspace.project / "opencode.json").write_text(
        '{"model": "fake/test-model",\n  "compaction": {"auto": tru}\n}'
    )
    proc = workspace.run("run", "hi")
    line = assert_one_line_error(proc)
    assert "opencode.json" in line and "invalid JSON" in line and ":2:" in line


def test_invalid_config_value_names_file_and_key(workspace: Workspace) -> None:
    (workspace.project / "opencode.json").write_text('{"compaction": {"reserved": -5}}')
    line = assert_one_line_error(workspace.run("run", "hi"))
    assert "opencode.json" in line and "compaction.reserved" in line


def test_unknown_model(workspace: Workspace, fake_llm: FakeLLM) -> None:
    line = assert_one_line_error(workspace.run("run", "--model", "nosuchprovider-model-xyz", "hi"))
    assert "unknown model" in line
    assert fake_llm.chat_requests() == []


def test_no_model_configured(workspace: Workspace) -> None:
    (workspace.project / "opencode.json").write_text("{}")
    line = assert_one_line_error(workspace.run("run", "hi"))
    assert "--model" in line


def test_provider_unreachable_says_where_at_once(workspace: Workspace) -> None:
    """A refused connection names the host and is not retried: no 30 s of backoff before saying so."""
    port = unused_port()
    proc = workspace.run(
        "run",
        "--model",
        "openai/test-model",
        "--api-base",
        f"http://127.0.0.1:{port}/v1",
        "hi",
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "retrying" not in proc.stderr, "a refused connection is reported at once, not retried"
    assert "Traceback" not in proc.stderr
    assert f"cannot connect to 127.0.0.1:{port}: connection refused" in proc.stderr
    assert "retrying" not in proc.stderr
    # The user's message is kept: the session can be continued once the provider is back.
    [session] = workspace.store().list_sessions()
    assert workspace.store().messages(session.id)[0].text() == "hi"


def test_unauthorized(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(ErrorResponse.unauthorized())
    proc = workspace.run("run", "hi")
    assert proc.returncode == 1
    assert "authentication" in proc.stderr.lower() and "Traceback" not in proc.stderr
    assert len(fake_llm.chat_requests()) == 1  # never retried


def test_rate_limited_then_success(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(
        ErrorResponse.rate_limited(retry_after=0.2), Reply(text="worked on retry", usage=Usage(100, 3))
    )
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "worked on retry" in proc.stdout and "retrying" in proc.stderr
    assert len(fake_llm.chat_requests()) == 2


def test_stream_cut_midway_keeps_the_partial_answer(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="The first half of an answer that never finishes", chunk_size=6, cut_after=4))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    store = workspace.store()
    [session] = store.list_sessions()
    [answer] = [m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage)]
    assert answer.text().startswith("The first")  # kept…
    assert answer.info.error is not None  # …and marked
    # The session goes on.
    fake_llm.push(Reply(text="second try", usage=Usage(10, 2)))
    assert workspace.run("run", "--continue", "again").returncode == 0


def test_bad_tool_arguments_reach_the_model_and_the_loop_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", '{"filePath": "a.txt", ')]),  # truncated JSON
        Reply(tool_calls=[ToolCall("nosuchtool", {"x": 1})]),
        Reply(tool_calls=[ToolCall("read", {"filePath": "missing.txt"})]),
        Reply(text="gave up politely", usage=Usage(10, 2)),
    )
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    results = [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert "Invalid arguments for read" in results[0]
    assert "nosuchtool" in results[1]
    assert "not found" in results[2].lower()


def test_binary_and_huge_files(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "blob.bin").write_bytes(bytes(range(256)) * 40)
    (workspace.project / "huge.txt").write_text("".join(f"line {i} {'x' * 60}\n" for i in range(100_000)))
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "blob.bin"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "cat huge.txt", "description": "dump"})]),
        Reply(text="done", usage=Usage(10, 2)),
    )
    proc = workspace.run("run", "--yes", "look")
    assert proc.returncode == 0, proc.stderr
    results = [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "tool"]
    assert "binary" in results[0].lower()
    assert len(results[1]) < 60 * 1024  # truncated at ingestion…
    assert (
        "line 99999" in results[1] or "Full output saved" in results[1] or "truncated" in results[1].lower()
    )


def test_sigkill_mid_stream_leaves_a_sound_database(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.extra_env["AGENTCLI_SESSION_LEASE_TTL"] = "5"  # the killed agent's lease lapses in 5 s, not 30
    fake_llm.push(Reply(text="word " * 400, chunk_size=5, delay=0.02))
    child = subprocess.Popen(
        [*agentcli_argv(), "run", "long please"],
        cwd=workspace.project,
        env=workspace.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # wait until the answer is streaming and partly stored
        time.sleep(0.2)
        if workspace.db.exists():
            try:
                with sqlite3.connect(workspace.db) as conn:
                    found = conn.execute(
                        "SELECT count(*) FROM part WHERE type = 'text' AND data LIKE '%word word%'"
                    ).fetchone()[0]
            except sqlite3.OperationalError:  # the file exists but its schema is still being created
                continue
            if found:
                break
    os.killpg(child.pid, signal.SIGKILL)
    child.wait(timeout=10)

    with sqlite3.connect(workspace.db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = workspace.store()
    [session] = store.list_sessions()
    partial = [m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage)][0]
    assert "word word" in partial.text()

    fake_llm.push(Reply(text="resumed fine", usage=Usage(10, 2)))
    proc = workspace.run("run", "--continue", "are you back?")
    assert proc.returncode == 0, proc.stderr
    assert "resumed fine" in proc.stdout
    assert "word word" in str(fake_llm.chat_requests()[-1].body["messages"])


def test_sessions_commands_on_a_missing_session(workspace: Workspace) -> None:
    line = assert_one_line_error(workspace.run("sessions", "show", "ses_doesnotexist"))
    assert "no session" in line


def test_chat_without_a_terminal_points_to_run(workspace: Workspace) -> None:
    line = assert_one_line_error(workspace.run("chat", input="hello\n"))
    assert "agentcli run" in line


def test_a_silent_provider_ends_the_turn_after_one_retry(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """A provider that accepts the request and then says nothing: the step ends after the configured
    first-byte limit (OpenCode's options.headerTimeout), with a line saying it timed out, and is retried
    once, not four times over the request's whole timeout."""
    config = workspace.write_config()
    config["provider"]["fake"]["options"]["headerTimeout"] = 1000
    (workspace.project / "opencode.json").write_text(json.dumps(config))
    fake_llm.push(Hang(60), Hang(60))
    # Two 60 s hangs waited out would pass the 60 s the run is given: a timeout here fails the test.
    proc = workspace.run("run", "hi", timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert f"timed out: no answer from 127.0.0.1:{fake_llm.port} in 1 s" in proc.stderr
    assert proc.stderr.count("retrying in") == 1
    assert len(fake_llm.chat_requests()) == 2
    assert "Traceback" not in proc.stderr
