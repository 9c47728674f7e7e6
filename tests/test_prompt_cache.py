"""Prompt caching on whichever path serves the model: Claude requests carry OpenCode's breakpoints
(the first two system blocks, the last two messages, never more than four) on the lean path and
through litellm, directly, through OpenRouter and through Bedrock — asserted on the requests the
scripted server receives. Other models get none."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest

from agentcli.llm import cache
from agentcli.llm.errors import LLMError
from agentcli.llm.events import ChatRequest
from agentcli.llm.lean import PATH_ENV
from agentcli.llm.stream import stream_chat
from tests.fakellm import FakeLLM, Recorded, Reply

EPHEMERAL = {"type": "ephemeral"}
TOOLS = [
    {
        "type": "function",
        "function": {"name": "read", "description": "Read a file", "parameters": {"type": "object"}},
    }
]


def _history(turns: int) -> list[dict[str, Any]]:
    """Three system blocks (one more than the rule marks), then ``turns`` tool steps, then a question."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "system", "content": "Instructions from: AGENTS.md\nBe brief."},
        {"role": "system", "content": "A plugin's block."},
    ]
    for n in range(turns):
        messages += [
            {"role": "user", "content": f"question {n}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{n}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"c{n}", "content": f"contents {n}"},
        ]
    return [*messages, {"role": "user", "content": "and now?"}]


def _send(server: FakeLLM, model: str, messages: list[dict[str, Any]], path: str, mp: Any) -> Recorded:
    mp.setenv(PATH_ENV, path)
    server.push(Reply(text="ok"))
    req = ChatRequest(model=model, messages=messages, tools=TOOLS, api_base=server.base_url, api_key="k")
    # A provider the scripted server does not speak (Bedrock) fails: the request is what counts.
    with contextlib.suppress(LLMError):
        list(stream_chat(req))
    return server.requests[-1]


def _without_null_content(body: dict[str, Any]) -> dict[str, Any]:
    messages = [{k: v for k, v in m.items() if (k, v) != ("content", None)} for m in body["messages"]]
    return {**body, "messages": messages}


def _marks(body: Any) -> int:
    return json.dumps(body).count('"cache_control"') + json.dumps(body).count('"cachePoint"')


@pytest.fixture(autouse=True)
def _no_real_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "GROQ_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("path", ["lean", "litellm"])
@pytest.mark.parametrize("turns", [0, 1, 6])
def test_anthropic_requests_mark_the_system_prompt_and_the_newest_messages_on_both_paths(
    fake_llm: FakeLLM, path: str, turns: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _send(fake_llm, "anthropic/claude-sonnet-4-5", _history(turns), path, monkeypatch).body
    assert _marks(body) == 4 if turns else _marks(body) == 3  # a lone question: 2 system + 1 message
    assert [b.get("cache_control") for b in body["system"]] == [EPHEMERAL, EPHEMERAL, None]
    last = body["messages"][-1]["content"]
    assert last[-1]["cache_control"] == EPHEMERAL  # the question
    if turns:  # the newest tool result, merged into the same user turn, is the other one
        assert last[-2]["type"] == "tool_result" and last[-2]["cache_control"] == EPHEMERAL


def test_openrouter_claude_gets_the_same_breakpoints_on_both_paths(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = "openrouter/anthropic/claude-sonnet-4.5"
    ours, theirs = (_send(fake_llm, model, _history(3), p, monkeypatch).body for p in ("lean", "litellm"))
    # The lean path writes them where litellm does: on content blocks. (litellm leaves out an
    # assistant's null content, the lean path sends it: not a caching matter.)
    assert _without_null_content(ours) == _without_null_content(theirs)
    messages = ours["messages"]
    assert _marks(ours) == 4
    assert [m["content"][-1].get("cache_control") for m in messages[:2]] == [EPHEMERAL, EPHEMERAL]
    assert messages[2]["content"] == "A plugin's block."
    assert messages[-2]["role"] == "tool" and messages[-2]["content"][-1]["cache_control"] == EPHEMERAL
    assert messages[-1]["content"][-1] == {"type": "text", "text": "and now?", "cache_control": EPHEMERAL}


def test_bedrock_claude_gets_four_cache_points_through_litellm(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {"AWS_ACCESS_KEY_ID": "AKIATEST", "AWS_SECRET_ACCESS_KEY": "x"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AWS_REGION_NAME", "us-east-1")
    sent = _send(
        fake_llm, "bedrock/anthropic.claude-3-5-sonnet-20241022-v2:0", _history(4), "lean", monkeypatch
    )
    assert sent.path.endswith("/converse-stream")  # litellm serves Bedrock whatever the path setting
    body = sent.body
    points = [i for i, b in enumerate(body["system"]) if "cachePoint" in b]
    assert points == [1, 3] and len(body["system"]) == 5  # after the first two of three blocks
    marked = [i for i, m in enumerate(body["messages"]) if any("cachePoint" in b for b in m["content"])]
    assert marked == [len(body["messages"]) - 1]  # the last tool result and the question share a turn
    assert [b for b in body["messages"][-1]["content"] if "cachePoint" in b] == [
        {"cachePoint": {"type": "default"}}
    ] * 2
    assert _marks(body) == 4


@pytest.mark.parametrize(
    "model",
    ["openai/gpt-4o", "groq/llama-3.3-70b-versatile", "openrouter/openai/gpt-4o", "deepseek/deepseek-chat"],
)
def test_models_other_than_claude_get_no_breakpoints(
    fake_llm: FakeLLM, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _send(fake_llm, model, _history(2), "lean", monkeypatch).body
    assert _marks(body) == 0  # Groq answers 400 to an unknown cache_control field


def test_which_models_take_breakpoints() -> None:
    takes = [
        "anthropic/claude-sonnet-4-5",
        "anthropic/some-future-model",
        "claude-sonnet-4-5",
        "bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        # Vertex needs Google's SDK to send anything, so this one is checked here only: litellm
        # sends Claude on Vertex through its Anthropic transformation, which keeps the marks.
        "vertex_ai/claude-sonnet-4-5@20250929",
        "openrouter/anthropic/claude-sonnet-4.5",
        "openai/claude-sonnet-4-5",  # an OpenAI-compatible gateway in front of Claude (OpenCode marks it)
    ]
    takes_not = ["openai/gpt-4o", "gpt-4o", "groq/llama3-70b", "gemini/gemini-2.5-pro", "bedrock/amazon.nova"]
    assert [m for m in takes if not cache.takes_breakpoints(m)] == []
    assert [m for m in takes_not if cache.takes_breakpoints(m)] == []
    req = ChatRequest(model="openai/gpt-4o", messages=_history(1))
    assert cache.prepare(req) is req
