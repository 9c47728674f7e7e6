"""Compaction as a user of the CLI meets it: the summary is its own `run --format json` event, a
failed summary is told in one line naming it and the turn goes on, and a process killed during
the summary leaves a session whose next run redoes it (never a bare marker)."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from typing import Any

import pytest

from agentcli.session.request.view import SUMMARY_MARKER_TEXT
from agentcli.store.artifacts import split_summary
from agentcli.store.records import AssistantMessage
from tests import zygote
from tests.fakellm import ErrorResponse, FakeLLM, Hang, Reply, ToolCall, Usage, is_summary_request
from tests.workspace import Workspace, agentcli_argv

OVER = Usage(42_500, 100)  # above the usable 42k of a 50k-context, 8k-output model
SMALL = Usage(1_000, 10)
SUMMARY = "## Objective\n- answer the questions"
QUESTION = "Which file defines parse_config, and why does it ignore YAML anchors?"


def _events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], str)]


def test_run_json_gives_the_summary_its_own_event(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(context=50_000, output=8_000)
    fake_llm.push(
        Reply(text="answer one", usage=OVER),
        Reply(text=SUMMARY, usage=SMALL),
        Reply(text="all done", usage=SMALL),
    )
    proc = workspace.run("run", "--format", "json", "first question")
    assert proc.returncode == 0, proc.stderr
    out = _events(proc.stdout)
    assert [e["text"] for e in out if e["type"] == "summary"] == [SUMMARY]
    assert [e["text"] for e in out if e["type"] == "text"] == ["answer one", "all done"]


def test_a_failed_summary_is_told_in_one_line_and_the_turn_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(context=50_000, output=8_000)
    refused = ErrorResponse(400, {"error": {"message": "invalid request: unsupported parameter"}})
    fake_llm.push(Reply(text="answer one", usage=OVER), refused, Reply(text="all done", usage=SMALL))
    proc = workspace.run("run", "first question")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "summary failed" in line]
    assert len(lines) == 1 and "HTTP 400" in lines[0] and "without a model" in lines[0]
    assert "error:" not in proc.stderr  # the provider's words only inside that line
    assert proc.stdout.strip().endswith("all done")
    # The next request went out with the model-less summary, not the full history it overflowed with.
    last = fake_llm.chat_requests()[-1].body
    assert any("made without a model" in (m.get("content") or "") for m in last["messages"])


def test_sigkill_during_the_summary_then_the_next_run_redoes_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(context=50_000, output=8_000)
    workspace.extra_env["AGENTCLI_SESSION_LEASE_TTL"] = "5"  # the killed agent's lease lapses in 5 s, not 30
    slow = Reply(text=SUMMARY + "\n- " + "a long summary line\n- " * 400, chunk_size=4, delay=0.05)
    fake_llm.push(Reply(text="answer one", usage=OVER), slow)
    proc = zygote.popen(
        [*agentcli_argv(), "run", "first question"],
        cwd=workspace.project,
        env=workspace.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        fake_llm.wait_for(2)  # the summary request is streaming
        time.sleep(1.0)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
    store = workspace.store()
    [session] = store.list_sessions()
    half = [m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage) and m.info.summary]
    assert half and not half[0].info.finish  # type: ignore[union-attr]  # killed mid-summary

    fake_llm.push(Reply(text=SUMMARY, usage=SMALL), Reply(text="in config.py", usage=SMALL))
    proc2 = workspace.run("run", "--continue", QUESTION)
    assert proc2.returncode == 0, proc2.stderr
    bodies = [r.body for r in fake_llm.chat_requests()]
    after = bodies[-1]
    assert QUESTION in _user_texts(after)
    assert SUMMARY_MARKER_TEXT in _user_texts(after)  # the marker, now with its summary right after it
    marker_at = _user_texts(after).index(SUMMARY_MARKER_TEXT)
    summary_content = [m for m in after["messages"] if m["role"] != "system"][marker_at + 1]["content"]
    assert split_summary(summary_content)[0] == SUMMARY  # the carryover block follows it
    summaries = [
        m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage) and m.info.summary
    ]
    assert len(summaries) == 1 and summaries[0].info.finish == "stop"  # type: ignore[union-attr]


def test_sigterm_during_the_summary_cancels_it_cleanly(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(context=50_000, output=8_000)
    slow = Reply(text=SUMMARY + "\n- " + "a long summary line\n- " * 400, chunk_size=4, delay=0.05)
    fake_llm.push(Reply(text="answer one", usage=OVER), slow)
    proc = zygote.popen(
        [*agentcli_argv(), "run", "first question"],
        cwd=workspace.project,
        env=workspace.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        fake_llm.wait_for(2)  # the summary request is streaming
        time.sleep(1.0)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    store = workspace.store()
    [session] = store.list_sessions()
    messages = store.messages(session.id)
    assert not [m for m in messages if isinstance(m.info, AssistantMessage) and m.info.summary]
    assert not [m for m in messages if m.compaction() is not None]  # no marker left to fire again
    assert [m.text() for m in messages if isinstance(m.info, AssistantMessage)] == ["answer one"]


def _with_provider_timeout(workspace: Workspace, timeout_ms: int) -> None:
    """The session's provider gives up on a silent stream after ``timeout_ms`` (its ``options.timeout``)."""
    config = workspace.write_config(context=50_000, output=8_000)
    config["provider"]["fake"]["options"]["timeout"] = timeout_ms
    (workspace.project / "opencode.json").write_text(json.dumps(config))


def test_a_summary_that_stalls_past_the_timeout_is_told_in_one_line_and_the_turn_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _with_provider_timeout(workspace, 3_000)
    stalled = Reply(
        text=SUMMARY + "\n- and then the provider goes quiet", chunk_size=6, cut_after=4, stall=120
    )
    fake_llm.push(Reply(text="answer one", usage=OVER), stalled, Reply(text="all done", usage=SMALL))
    proc = workspace.run("run", "first question", timeout=60)  # the stall is 120 s: only the timeout ends it
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "summary failed" in line]
    assert len(lines) == 1 and "timed out" in lines[0] and "without a model" in lines[0], proc.stderr
    assert "error:" not in proc.stderr
    assert proc.stdout.strip().endswith("all done")
    last = fake_llm.chat_requests()[-1].body
    assert any("made without a model" in (m.get("content") or "") for m in last["messages"])
    assert "the provider goes quiet" not in json.dumps(last)


STALLED_SUMMARIES = {
    "silent": [Hang(120)],  # not a byte, not even headers
    "mid-stream": [
        Reply(text=SUMMARY + "\n- and then the provider goes quiet", chunk_size=6, cut_after=4, stall=120)
    ],
}


@pytest.mark.parametrize("kind", list(STALLED_SUMMARIES))
def test_a_summary_request_that_times_out_is_one_compaction_failed_event_and_no_summary(
    workspace: Workspace, fake_llm: FakeLLM, kind: str
) -> None:
    _with_provider_timeout(workspace, 3_000)
    workspace.extra_env["AGENTCLI_MAX_RETRIES"] = (
        "0"  # a timeout is retried like any provider failure: not here
    )
    fake_llm.push(
        Reply(text="answer one", usage=OVER), *STALLED_SUMMARIES[kind], Reply(text="all done", usage=SMALL)
    )
    proc = workspace.run("run", "--format", "json", "first question", timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = _events(proc.stdout)
    [failed] = [e for e in out if e["type"] == "compaction_failed"]
    assert failed["message"].startswith("the summary failed (") and "timed out" in failed["message"]
    [compacted] = [e for e in out if e["type"] == "compacted"]
    assert compacted["fallback"] is True
    assert [e["text"] for e in out if e["type"] == "text"] == ["answer one", "all done"]
    assert not [e for e in out if e["type"] in ("summary", "error")]  # the stalled fragment is no summary


def _build_log(lines: int) -> str:
    return "".join(f"gcc -O2 -c src/file{i}.c: warning: unused variable 'x'\n" for i in range(lines))


# A 12k-context model whose first step reads a file, asked the session's first question; the tail kept
# verbatim is as small as the settings allow. "preflight": the file is 50 KB, so the next request's
# estimate exceeds the context and agentcli compacts before sending it (the provider reports small
# usage: the usage check has nothing to go on). "usage": a small file, but the provider reports a step
# above the usable 10k, so the usage check compacts after the step.
MID_TURN = {
    "preflight": (_build_log(3_000), SMALL),
    "usage": (_build_log(20), Usage(10_500, 10)),
}


@pytest.mark.parametrize("trigger", list(MID_TURN))
def test_a_question_compacted_mid_turn_reaches_the_model_verbatim(
    workspace: Workspace, fake_llm: FakeLLM, trigger: str
) -> None:
    log, usage = MID_TURN[trigger]
    workspace.write_config(
        {"compaction": {"tail_turns": 0, "preserve_recent_tokens": 10}}, context=12_000, output=2_000
    )
    (workspace.project / "build.log").write_text(log)
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "build.log"})], usage=usage),
        Reply(text=SUMMARY, usage=SMALL),
        Reply(text="in config.py", usage=SMALL),
    )
    proc = workspace.run("run", QUESTION)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("in config.py")
    first, summary, after = (r.body for r in fake_llm.chat_requests())
    assert _user_texts(first) == [QUESTION]
    assert is_summary_request(summary) and "gcc -O2" in json.dumps(summary["messages"])
    # The next request: the summary, then the question word for word (not only inside the summary).
    assert _user_texts(after) == [SUMMARY_MARKER_TEXT, QUESTION]
    assert "gcc -O2" not in json.dumps(after)  # the read's output is in the summary, not sent again
    if trigger == "preflight":
        assert "compacting (overflow)" in proc.stderr  # before a request was sent with the 50 KB output


def test_a_question_compacted_mid_turn_whose_summary_fails_reaches_the_model_verbatim(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(
        {"compaction": {"tail_turns": 0, "preserve_recent_tokens": 10}}, context=12_000, output=2_000
    )
    (workspace.project / "build.log").write_text(_build_log(3_000))
    refused = ErrorResponse(400, {"error": {"message": "invalid request: unsupported parameter"}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "build.log"})], usage=SMALL),
        refused,
        Reply(text="in config.py", usage=SMALL),
    )
    proc = workspace.run("run", QUESTION)
    assert proc.returncode == 0, proc.stderr
    assert len([line for line in proc.stderr.splitlines() if "summary failed" in line]) == 1, proc.stderr
    after = fake_llm.chat_requests()[-1].body
    assert QUESTION in _user_texts(after)
    assert _user_texts(after).count(QUESTION) == 1  # asked once, not twice
    assert "gcc -O2" not in json.dumps(after)  # the read's output was cleared, not sent again
