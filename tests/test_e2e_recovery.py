"""A killed agentcli leaves no half-open records: the next turn closes them as interrupted, the model
is told the call was interrupted, and `sessions show` never shows a dead call as running."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time

import pytest

from agentcli.session.request.history import INTERRUPTED_TEXT
from agentcli.store.records import AssistantMessage, ToolPart
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace, agentcli_argv


@pytest.fixture(autouse=True)
def short_lease(workspace: Workspace) -> None:
    """A killed agent's session lease lapses after 5 s instead of 30, so the run that continues its
    session does not sit out the default wait."""
    workspace.extra_env["AGENTCLI_SESSION_LEASE_TTL"] = "5"


def _wait_until(condition, timeout: float = 60) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.1)


def _open_tool_parts(ws: Workspace) -> list[ToolPart]:
    store = ws.store()
    try:
        return [
            p
            for s in store.list_sessions()
            for m in store.messages(s.id)
            for p in m.parts
            if isinstance(p, ToolPart) and p.state.status in ("pending", "running")
        ]
    finally:
        store.close()


def _kill_during_a_running_command(ws: Workspace, llm: FakeLLM) -> int:
    """`agentcli run` whose bash call is running (a long sleep), then SIGKILL. Returns the sleep's pid."""
    pid_file = ws.project / "sleep.pid"
    llm.push(
        Reply(
            tool_calls=[
                ToolCall(
                    "bash",
                    {"command": "echo $$ > sleep.pid; exec sleep 600", "description": "wait a long time"},
                )
            ]
        )
    )
    child = subprocess.Popen(
        [*agentcli_argv(), "run", "--yes", "wait for it"],
        cwd=ws.project,
        env=ws.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_until(lambda: pid_file.exists() and pid_file.read_text().strip().isdigit())
        _wait_until(lambda: bool(_open_tool_parts(ws)))
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
    return int(pid_file.read_text())


def test_sigkill_during_a_running_tool_then_continue_closes_the_call_as_interrupted(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    sleeper = _kill_during_a_running_command(workspace, fake_llm)
    try:
        [session] = workspace.store().list_sessions()
        [running] = _open_tool_parts(workspace)
        assert running.state.status == "running"

        # Before any new run: the transcript does not pretend the dead call is still running.
        shown = workspace.run("sessions", "show", session.id)
        assert shown.returncode == 0, shown.stderr
        assert "step unfinished" in shown.stdout and "exec sleep 600: no result recorded" in shown.stdout

        fake_llm.push(Reply(text="The wait was interrupted; shall I retry?", usage=Usage(50, 9)))
        proc = workspace.run("run", "--continue", "what happened?")
        assert proc.returncode == 0, proc.stderr
        assert "shall I retry" in proc.stdout
        assert "closed 1 tool call" in proc.stderr

        # The model was told the call was interrupted, as a result of that very call.
        messages = fake_llm.chat_requests()[-1].body["messages"]
        [call] = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        [result] = [m for m in messages if m["role"] == "tool"]
        assert result["tool_call_id"] == call["id"] and result["content"] == INTERRUPTED_TEXT
        assert messages[-1] == {"role": "user", "content": "what happened?"}

        # Nothing is left open in the database.
        assert _open_tool_parts(workspace) == []
        store = workspace.store()
        [killed] = [
            m
            for m in store.messages(session.id)
            if isinstance(m.info, AssistantMessage) and any(isinstance(p, ToolPart) for p in m.parts)
        ]
        assert killed.info.error is not None and killed.info.error.name == "MessageAbortedError"
        assert killed.info.completed is not None
        [part] = [p for p in killed.parts if isinstance(p, ToolPart)]
        assert part.state.status == "error" and part.state.error == INTERRUPTED_TEXT
        assert part.state.time.end is not None

        shown = workspace.run("sessions", "show", session.id)
        assert "unfinished" not in shown.stdout
        assert "bash" in shown.stdout and INTERRUPTED_TEXT in shown.stdout and "interrupted" in shown.stdout
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sleeper, signal.SIGKILL)


def test_sigkill_while_streaming_leaves_the_partial_answer_closed_as_interrupted(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="word " * 400, chunk_size=5, delay=0.02))
    child = subprocess.Popen(
        [*agentcli_argv(), "run", "long please"],
        cwd=workspace.project,
        env=workspace.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )

    def partial_stored() -> bool:
        # Plain SQL: opening a Store while the child creates the database would race its schema setup.
        if not workspace.db.exists():
            return False
        try:
            with sqlite3.connect(workspace.db) as conn:
                return bool(
                    conn.execute(
                        "SELECT count(*) FROM part WHERE type = 'text' AND data LIKE '%word word%'"
                    ).fetchone()[0]
                )
        except sqlite3.OperationalError:  # no tables yet
            return False

    try:
        _wait_until(partial_stored)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait(timeout=30)

    fake_llm.push(Reply(text="back again", usage=Usage(20, 2)))
    proc = workspace.run("run", "--continue", "go on")
    assert proc.returncode == 0, proc.stderr
    assert "word word" in str(fake_llm.chat_requests()[-1].body["messages"])  # the partial answer is kept
    store = workspace.store()
    [session] = store.list_sessions()
    first = next(m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage))
    assert first.info.error is not None and first.info.error.name == "MessageAbortedError"


def test_a_provider_overflow_error_shows_in_the_transcript(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="first answer", usage=Usage(100, 3)))
    assert workspace.run("run", "hi").returncode == 0
    fake_llm.push(
        ErrorResponse.context_length(), Reply(text="the summary"), Reply(text="after the compaction")
    )
    proc = workspace.run("run", "--continue", "and now?")
    assert proc.returncode == 0, proc.stderr
    [session] = workspace.store().list_sessions()
    shown = workspace.run("sessions", "show", session.id).stdout
    # The step the provider refused is shown with the provider's error, not as an empty answer.
    assert "ContextOverflowError (HTTP 400)" in shown and "maximum context length" in shown
