"""`agentcli run` with an Anthropic model, end to end on the lean path: the CLI in a subprocess, the
scripted server speaking Anthropic's Messages API (``POST /v1/messages``), reached through --api-base
or an OpenCode ``anthropic`` provider's baseURL."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcli.demo.anthropic_wire import AnthropicReply
from agentcli.store.records import AssistantMessage, ReasoningPart
from tests import zygote
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace, agentcli_argv

MODEL = "anthropic/claude-sonnet-4-5"
THINKING = {"type": "enabled", "budgetTokens": 4000}


@pytest.fixture(autouse=True)
def _lean(workspace: Workspace) -> None:
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"  # the default choice, even when the suite runs forced


def _anthropic_config(workspace: Workspace, fake_llm: FakeLLM, **model: Any) -> None:
    """OpenCode's anthropic provider, its baseURL in OpenCode's form (…/v1) aimed at the server."""
    workspace.write_config(
        {
            "model": MODEL,
            "provider": {
                "anthropic": {
                    "options": {"baseURL": fake_llm.base_url, "apiKey": "sk-ant-test"},
                    "models": {
                        "claude-sonnet-4-5": {"limit": {"context": 200_000, "output": 8_000}, **model}
                    },
                }
            },
        }
    )


def _messages_requests(fake_llm: FakeLLM) -> list[dict[str, Any]]:
    return [r.body for r in fake_llm.chat_requests()]


def test_run_with_an_anthropic_model_and_api_base_streams_without_litellm(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    fake_llm.push(Reply(text="Hi from Claude.", chunk_size=3, usage=Usage(900, 6, cached_tokens=800)))
    proc = zygote.run(
        [
            *agentcli_argv(),
            "run",
            "--model",
            MODEL,
            "--api-base",
            f"http://127.0.0.1:{fake_llm.port}",
            "say hi",
        ],
        cwd=workspace.project,
        env={**workspace.env, "PYTHONPROFILEIMPORTTIME": "1"},
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Hi from Claude." in proc.stdout
    modules = {
        line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }
    assert "agentcli.llm.anthropic_path" in modules  # the probe works: the turn ran on this path
    assert not any(m == "litellm" or m.startswith("litellm.") for m in modules)
    [sent] = fake_llm.chat_requests()
    assert sent.path == "/v1/messages" and sent.body["model"] == "claude-sonnet-4-5"
    assert sent.body["messages"][-1]["content"][-1]["text"] == "say hi"
    assert "x-api-key" not in sent.headers  # a local server with no key configured gets none
    [session] = workspace.store().list_sessions()
    assert session.title == "Scripted title"  # the title request went the same way
    last = workspace.store().messages(session.id)[-1].info
    assert isinstance(last, AssistantMessage) and last.tokens.cache.read == 800


def test_thinking_is_sent_and_its_signature_goes_back_exactly(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _anthropic_config(workspace, fake_llm, options={"thinking": THINKING})
    fake_llm.push(
        AnthropicReply(
            Reply(
                text="Let me look.",
                reasoning="Glob for Python files.",
                tool_calls=[ToolCall("glob", {"pattern": "*.py"})],
            ),
            signature="EqQBCkgIARABGAIiQL+sig==",
            redacted=["EmwKAhgBEgy3va3pzix/LafPsn4a"],
        ),
        Reply(text="There are no Python files."),
    )
    proc = workspace.run("run", "--yes", "which python files are here?")
    assert proc.returncode == 0, proc.stderr
    assert "no Python files" in proc.stdout
    first, second = _messages_requests(fake_llm)
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 4000}
    assert "temperature" not in first  # Anthropic takes none but 1 while thinking
    assert fake_llm.chat_requests()[0].headers["x-api-key"] == "sk-ant-test"
    assistant = second["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][:3] == [
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
        {"type": "thinking", "thinking": "Glob for Python files.", "signature": "EqQBCkgIARABGAIiQL+sig=="},
        {"type": "text", "text": "Let me look."},
    ]
    assert assistant["content"][3]["type"] == "tool_use" and assistant["content"][3]["name"] == "glob"
    assert second["messages"][2]["content"][0]["type"] == "tool_result"
    # Both kept on the session's reasoning parts, as OpenCode keeps them.
    store = workspace.store()
    [session] = store.list_sessions()
    kept = [p.metadata for m in store.messages(session.id) for p in m.parts if isinstance(p, ReasoningPart)]
    assert kept == [
        {"anthropic": {"redactedData": "EmwKAhgBEgy3va3pzix/LafPsn4a"}},
        {"anthropic": {"signature": "EqQBCkgIARABGAIiQL+sig=="}},
    ]


def test_the_tool_input_streamed_in_pieces_runs_the_tool(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _anthropic_config(workspace, fake_llm)
    (workspace.project / "notes.txt").write_text("alpha\nbeta\n")
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "notes.txt"}, id="toolu_01")], chunk_size=3),
        Reply(text="It says alpha and beta."),
    )
    proc = workspace.run("run", "--yes", "read notes.txt")
    assert proc.returncode == 0, proc.stderr
    second = _messages_requests(fake_llm)[1]
    [result] = [b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["tool_use_id"] == "toolu_01" and "alpha" in result["content"]


def test_an_error_event_mid_stream_is_shown_in_the_providers_words(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _anthropic_config(workspace, fake_llm)
    error = {"type": "overloaded_error", "message": "Overloaded"}
    fake_llm.push(AnthropicReply(Reply(text="Partly answered", chunk_size=2), error=error, error_after=8))
    proc = workspace.run("run", "hello")
    assert proc.returncode == 1
    assert "Overloaded (overloaded_error)" in proc.stderr and "Traceback" not in proc.stderr
    assert "ended unexpectedly" not in proc.stderr
    store = workspace.store()
    [session] = store.list_sessions()
    last = store.messages(session.id)[-1].info
    assert isinstance(last, AssistantMessage) and last.error is not None
    assert "Overloaded (overloaded_error)" in json.dumps(last.error.model_dump())


def test_prompt_too_long_compacts_and_the_question_is_replayed(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _anthropic_config(workspace, fake_llm)
    workspace.seed_turns(
        fake_llm,
        [
            ("first question", Reply(text="answer one", usage=Usage(2_000, 10))),
            ("second question", Reply(text="answer two", usage=Usage(2_100, 10))),
        ],
    )
    too_long = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 201000 tokens > 200000 maximum",
        },
    }
    fake_llm.push(
        ErrorResponse(400, too_long), Reply(text="the summary"), Reply(text="third answer after compaction")
    )
    proc = workspace.run("run", "--continue", "third question")
    assert proc.returncode == 0, proc.stderr
    assert "third answer after compaction" in proc.stdout
    requests = fake_llm.chat_requests()
    assert all(r.path == "/v1/messages" for r in requests)
    assert "third question" in json.dumps(requests[-1].body["messages"][-1])
    store = workspace.store()
    [session] = store.list_sessions()
    marker = next(m for m in store.messages(session.id) if m.compaction())
    assert marker.compaction().overflow  # type: ignore[union-attr]
