"""The same scripted Anthropic streams through the lean path and through litellm
(``AGENTCLI_LLM_PATH=litellm``): the same request on the wire, the same plain events (text, reasoning
and its signatures, tool calls, usage, finish) and the same error classes. Where litellm is wrong, the
test says so and asserts ours.

litellm gets the messages with the cache breakpoints already set (``cache.mark``): the lean path sets
them itself, and this shows they are exactly what litellm would send for them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentcli.demo.anthropic_wire import AnthropicReply
from agentcli.llm import cache, lean
from agentcli.llm.assembly import assemble
from agentcli.llm.errors import LLMError
from agentcli.llm.events import ChatRequest
from agentcli.llm.stream import stream_chat
from agentcli.llm.tokens import estimate
from agentcli.tools import all_tools
from tests.fakellm import ErrorResponse, FakeLLM, Reply, Response, ToolCall, Usage

MODEL = "anthropic/claude-sonnet-4-5"
TOOLS = [tool.schema() for tool in all_tools([])]  # agentcli's own tools, as sent on every step
CALL = {"id": "toolu_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "system", "content": "Environment: linux."},
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": "Listing.",
        "thinking_blocks": [{"type": "thinking", "thinking": "Use ls.", "signature": "EqQBsig=="}],
        "tool_calls": [CALL],
    },
    {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py\nb.py"},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "and this?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
            {
                "type": "file",
                "file": {"file_data": "data:application/pdf;base64,JVBERi0=", "filename": "a.pdf"},
            },
        ],
    },
]
# Requests in the shapes agentcli sends (and a few it may): each compared on the wire.
REQUESTS: dict[str, dict[str, Any]] = {
    "full_history": {"messages": MESSAGES, "tools": TOOLS, "max_tokens": 500, "temperature": 0.2},
    "no_max_tokens_listed": {"messages": MESSAGES[2:3]},  # the map's output limit
    "no_max_tokens_unlisted": {"model": "anthropic/claude-sonnet-4-20250514", "messages": MESSAGES[2:3]},
    "bare_claude_id": {"model": "claude-sonnet-4-5", "messages": MESSAGES[2:3], "max_tokens": 20},
    "thinking": {
        "messages": MESSAGES,
        "tools": TOOLS,
        "max_tokens": 20_000,
        "extra": {"thinking": {"type": "enabled", "budget_tokens": 4000}},
    },
    "thinking_no_max_tokens": {
        "messages": MESSAGES[2:3],
        "extra": {"thinking": {"type": "enabled", "budget_tokens": 3000}},
    },
    "tool_history_without_tools": {"messages": MESSAGES[:5] + [{"role": "user", "content": "go on"}]},
    "consecutive_and_empty": {
        "messages": [
            {"role": "user", "content": "a"},
            {"role": "user", "content": ""},
            {"role": "assistant", "content": "one "},
            {"role": "assistant", "content": "two  "},
        ]
    },
    "late_system_message": {
        "messages": [*MESSAGES[:5], {"role": "system", "content": "Reminder: be brief."}, MESSAGES[5]],
        "tools": TOOLS,
    },
    "tool_result_parts": {
        "messages": [
            *MESSAGES[2:4],
            {"role": "tool", "tool_call_id": "toolu_1", "content": [{"type": "text", "text": "part"}]},
        ],
        "tools": TOOLS[:1],
    },
    "sampling_and_stop": {"messages": MESSAGES[2:3], "extra": {"top_p": 0.9, "top_k": 5, "stop": ["END"]}},
    "no_sampling_model": {
        "model": "anthropic/claude-opus-4-7",
        "messages": MESSAGES[2:3],
        "temperature": 0.3,
    },
    "odd_tool_names": {
        "messages": MESSAGES[2:3],
        "tools": [
            {
                "type": "function",
                "function": {"name": n, "description": "d", "parameters": {"type": "object"}},
            }
            for n in ("mcp.read", "mcp_read", "a/b")
        ],
    },
    "headers": {
        "messages": MESSAGES[2:3],
        "extra": {
            "extra_headers": {
                "x-agentcli": "1",
                "anthropic-beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07",
            }
        },
    },
}
STREAMS: dict[str, Response] = {
    "text": Reply(text="Hello there, how are you?", chunk_size=3),
    "unicode": Reply(text="héllo 😀 日本語 — “quotes”\n```py\nx = 1\n```", chunk_size=1),
    "thinking_and_tools": AnthropicReply(
        Reply(
            text="Let me look.",
            reasoning="The user wants the files listed.",
            tool_calls=[
                ToolCall("bash", {"command": "ls -la"}, id="toolu_a"),
                ToolCall("read", {"filePath": "x.py"}, id="toolu_b"),
            ],
            usage=Usage(1200, 80, cached_tokens=1000, cache_write_tokens=150),
            chunk_size=4,
        ),
        signature="EqQBsig==",
        redacted=["ENCRYPTED"],
    ),
    "call_without_input": Reply(tool_calls=[ToolCall("todoread", "", id="toolu_c")]),
    "cache_writes": Reply(text="ok", usage=Usage(5000, 10, cached_tokens=1000, cache_write_tokens=3000)),
    "max_tokens": Reply(text="truncated", finish_reason="length"),
    "refusal": Reply(text="I can't", finish_reason="content_filter"),
    "cut": Reply(text="abcdefghij", chunk_size=2, cut_after=6),
}


@pytest.fixture(autouse=True)
def _no_real_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"):
        monkeypatch.delenv(name, raising=False)


def _req(server: FakeLLM, **fields: Any) -> ChatRequest:
    base = {"model": MODEL, "api_base": f"http://127.0.0.1:{server.port}", "api_key": "sk-ant-test"}
    return ChatRequest(**{**base, **fields})


def _outcome(server: FakeLLM, req: ChatRequest, path: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv(lean.PATH_ENV, path)
    if path == "litellm":
        req = dataclasses.replace(req, messages=cache.mark(req.messages))
    events: list[Any] = []
    error: LLMError | None = None
    try:
        events.extend(stream_chat(req))
    except LLMError as err:
        error = err
    sent = server.requests[-1]
    return {
        "answer": assemble(events),
        "error": error,
        "body": sent.body,
        "path": sent.path,
        "headers": {k: sent.headers.get(k) for k in ("x-api-key", "anthropic-version", "x-agentcli")},
        # litellm joins the betas from a set: the same names, in any order.
        "betas": set((sent.headers.get("anthropic-beta") or "").split(",")) - {""},
    }


def _both(
    server: FakeLLM, req: ChatRequest, response: Response, mp: pytest.MonkeyPatch
) -> list[dict[str, Any]]:
    server.push(response, response)
    return [_outcome(server, req, path, mp) for path in ("lean", "litellm")]


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_the_request_on_the_wire_is_litellms(
    fake_llm: FakeLLM, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    req = _req(fake_llm, **REQUESTS[name])
    assert lean.messages_endpoint(req, {"ANTHROPIC_API_KEY": "k"}) is not None  # the lean path serves it
    ours, theirs = _both(fake_llm, req, Reply(text="ok"), monkeypatch)
    assert ours["body"] == theirs["body"]
    assert (ours["path"], ours["headers"], ours["betas"]) == (
        theirs["path"],
        theirs["headers"],
        theirs["betas"],
    )
    assert ours["answer"] == theirs["answer"]


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_the_same_stream_gives_the_same_events(
    fake_llm: FakeLLM, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    req = _req(fake_llm, messages=MESSAGES, tools=TOOLS, max_tokens=500)
    ours, theirs = _both(fake_llm, req, STREAMS[name], monkeypatch)
    mine_answer, their_answer = ours["answer"], theirs["answer"]
    if mine_answer.reasoning and mine_answer.usage and their_answer.usage:
        # Anthropic does not say how many output tokens were thinking: both paths estimate it (litellm
        # with its tokenizer, we as chars/4, never downloading one), so only that figure may differ.
        assert mine_answer.usage.reasoning_tokens == estimate(mine_answer.reasoning)
        their_answer.usage = dataclasses.replace(
            their_answer.usage, reasoning_tokens=estimate(mine_answer.reasoning)
        )
    assert mine_answer == their_answer  # text, reasoning, signatures, tool calls, usage, finish
    mine, other = ours["error"], theirs["error"]
    assert (mine and (mine.kind, mine.message)) == (other and (other.kind, other.message))
    assert ours["answer"].text or ours["answer"].tool_calls or mine


ANTHROPIC_ERRORS = {
    "prompt_too_long": (
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
        {},
    ),
    "unauthorized": (401, "authentication_error", "invalid x-api-key", {}),
    "rate_limited": (
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your rate limit",
        {"retry-after": "7"},
    ),
    "overloaded": (529, "overloaded_error", "Overloaded", {}),
    "server_error": (500, "api_error", "Internal server error", {}),
    "not_found": (404, "not_found_error", "model: claude-nope", {}),
}


@pytest.mark.parametrize("name", sorted(ANTHROPIC_ERRORS))
def test_http_errors_are_classified_alike_and_ours_keep_the_providers_words(
    fake_llm: FakeLLM, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    status, kind, message, headers = ANTHROPIC_ERRORS[name]
    body = {"type": "error", "error": {"type": kind, "message": message}}
    ours, theirs = (
        o["error"]
        for o in _both(
            fake_llm,
            _req(fake_llm, messages=MESSAGES[2:3]),
            ErrorResponse(status, body, headers),
            monkeypatch,
        )
    )
    assert ours is not None and theirs is not None
    assert (ours.kind, ours.retryable, ours.retry_after) == (
        theirs.kind,
        theirs.retryable,
        theirs.retry_after,
    )
    assert ours.message.endswith(f"(HTTP {status}): {message}")
    # litellm's bug: its message is the body's bytes repr ("b'{\"type\": \"error\", …}'"), and it calls
    # a 529 a 500. The words are in there, but not as the user should read them.
    assert message in theirs.message


@pytest.mark.parametrize(
    ("error", "kind", "status"),
    [
        ({"type": "overloaded_error", "message": "Overloaded"}, "provider_down", 529),
        ({"type": "rate_limit_error", "message": "Output rate limit exceeded"}, "rate_limit", 429),
    ],
)
def test_an_error_event_mid_stream_keeps_its_words_and_status_where_litellm_loses_the_status(
    fake_llm: FakeLLM, error: dict[str, str], kind: str, status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = AnthropicReply(Reply(text="A partial answer", chunk_size=2), error=error, error_after=6)
    ours, theirs = (
        o["error"] for o in _both(fake_llm, _req(fake_llm, messages=MESSAGES[2:3]), reply, monkeypatch)
    )
    assert ours is not None and theirs is not None
    assert (ours.kind, ours.status) == (kind, status)
    assert f"{error['message']} ({error['type']})" in ours.message
    # litellm's bug: it raises the event as a status-500 error, so a rate limit becomes "provider down";
    # the words survive (stream._failure tells its error from a cut connection).
    assert theirs.status == 500 and error["message"] in theirs.message


def test_a_request_too_large_is_an_overflow_where_litellm_calls_it_a_bad_request(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {
        "type": "error",
        "error": {"type": "request_too_large", "message": "Request exceeds the maximum size"},
    }
    req = _req(fake_llm, messages=MESSAGES[2:3])
    ours, theirs = (o["error"] for o in _both(fake_llm, req, ErrorResponse(413, body), monkeypatch))
    assert ours is not None and theirs is not None
    # OpenCode's rule: HTTP 413 is an overflow (compact and go on); litellm reports the 413 as a 400.
    assert (ours.kind, ours.status) == ("context_overflow", 413)
    assert theirs.kind == "bad_request"


def test_where_litellms_request_is_wrong_ours_is_not(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Thinking with a temperature: litellm sends both, and Anthropic answers 400 to any temperature but 1.
    thinking = {"type": "enabled", "budget_tokens": 2000}
    req = _req(
        fake_llm, messages=MESSAGES[2:3], temperature=0.3, max_tokens=8000, extra={"thinking": thinking}
    )
    ours, theirs = _both(fake_llm, req, Reply(text="ok"), monkeypatch)
    assert "temperature" not in ours["body"] and theirs["body"]["temperature"] == 0.3
    assert {k: v for k, v in theirs["body"].items() if k != "temperature"} == ours["body"]
    # A base URL in OpenCode's form (ending in /v1): litellm asks for /v1/v1/messages.
    req = _req(fake_llm, messages=MESSAGES[2:3], api_base=f"http://127.0.0.1:{fake_llm.port}/v1")
    ours, theirs = _both(fake_llm, req, Reply(text="ok"), monkeypatch)
    assert (ours["path"], theirs["path"]) == ("/v1/messages", "/v1/v1/messages")
