"""Anthropic's Messages API on the lean path, in process, against the scripted server's Anthropic side:
which models go there, the request it sends, and the stream read into our events and errors."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from agentcli.demo.anthropic_wire import AnthropicReply
from agentcli.llm import anthropic, lean
from agentcli.llm.assembly import assemble
from agentcli.llm.errors import LLMError
from agentcli.llm.events import (
    ChatRequest,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    ToolCallDelta,
)
from agentcli.llm.stream import stream_chat
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall, Usage

MODEL = "anthropic/claude-sonnet-4-5"
HELLO = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def _lean(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(lean.PATH_ENV, "lean")  # the default choice, even when the suite runs forced
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"):
        monkeypatch.delenv(name, raising=False)  # never a real provider


def _req(server: FakeLLM, **kw: Any) -> ChatRequest:
    fields: dict[str, Any] = {
        "model": MODEL,
        "messages": HELLO,
        "api_base": f"http://127.0.0.1:{server.port}",
    }
    return ChatRequest(**{**fields, "api_key": "sk-ant-test", **kw})


def _error(req: ChatRequest) -> LLMError:
    with pytest.raises(LLMError) as info:
        list(stream_chat(req))
    return info.value


def test_a_streamed_answer_arrives_as_text_usage_and_finish(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hello there, how are you?", chunk_size=4, usage=Usage(30, 7)))
    events = list(stream_chat(_req(fake_llm)))
    out = assemble(events)
    assert out.text == "Hello there, how are you?" and out.finish == "stop"
    assert (out.usage.prompt_tokens, out.usage.completion_tokens, out.usage.total_tokens) == (30, 7, 37)
    assert len(events) > 3  # streamed as it came, not in one piece
    [sent] = fake_llm.chat_requests()
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == "sk-ant-test" and sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == [
        {"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}
    ]
    assert sent.body["stream"] is True and sent.body["max_tokens"] == 64000  # the model's output limit


def test_thinking_comes_with_its_signature_and_redacted_thinking_is_kept(fake_llm: FakeLLM) -> None:
    fake_llm.push(
        AnthropicReply(
            Reply(text="Done.", reasoning="Think it through.", chunk_size=5),
            signature="EqQBsig==",
            redacted=["ENC"],
        )
    )
    events = list(stream_chat(_req(fake_llm)))
    kinds = [type(e) for e in events if type(e) in (ReasoningDelta, ReasoningSignature, RedactedReasoning)]
    # Redacted first, then the thinking text, then its seal ending the block.
    assert kinds[0] is RedactedReasoning and kinds[-1] is ReasoningSignature
    out = assemble(events)
    assert out.reasoning == "Think it through." and out.text == "Done."
    assert out.signatures == ["EqQBsig=="] and out.redacted == ["ENC"]


def test_signed_thinking_goes_back_first_and_exactly_as_it_came(fake_llm: FakeLLM) -> None:
    history = [
        *HELLO,
        {
            "role": "assistant",
            "content": None,
            "thinking_blocks": [
                {"type": "redacted_thinking", "data": "ENC"},
                {"type": "thinking", "thinking": "Look first.", "signature": "EqQBsig=="},
                {"type": "thinking", "thinking": "unsigned: another model's", "signature": ""},
            ],
            "tool_calls": [
                {"id": "toolu_1", "type": "function", "function": {"name": "glob", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py"},
    ]
    thinking = {"type": "enabled", "budget_tokens": 2048}
    fake_llm.push(Reply(text="ok"))
    list(stream_chat(_req(fake_llm, messages=history, max_tokens=None, extra={"thinking": thinking})))
    body = fake_llm.chat_requests()[0].body
    assert body["messages"][1]["content"] == [
        {"type": "redacted_thinking", "data": "ENC"},
        {"type": "thinking", "thinking": "Look first.", "signature": "EqQBsig=="},
        {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "glob",
            "input": {},
            "cache_control": {"type": "ephemeral"},
        },
    ]
    assert body["thinking"] == thinking and body["max_tokens"] == 2048 + 4096  # litellm's rule
    assert body["tools"][0]["name"] == "dummy_tool"  # tool blocks in the history want tools declared


def test_a_tool_call_streams_its_input_as_json_pieces(fake_llm: FakeLLM) -> None:
    call = ToolCall("bash", {"command": "ls -la", "description": "List"}, id="toolu_9")
    fake_llm.push(Reply(text="Looking.", tool_calls=[call, ToolCall("todoread", "")], chunk_size=6))
    events = list(stream_chat(_req(fake_llm)))
    pieces = [e for e in events if isinstance(e, ToolCallDelta) and e.index == 0 and e.arguments]
    assert len(pieces) > 3
    out = assemble(events)
    assert out.finish == "tool_calls"
    assert [(c.id, c.name, c.arguments) for c in out.tool_calls] == [
        ("toolu_9", "bash", call.arguments_json()),
        (out.tool_calls[1].id, "todoread", "{}"),  # a call without input: {}
    ]


def test_usage_counts_cache_reads_and_writes_inside_the_prompt(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="ok", usage=Usage(12_000, 40, cached_tokens=9_000, cache_write_tokens=2_500)))
    usage = assemble(stream_chat(_req(fake_llm))).usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.cache_read, usage.cache_write) == (12_000, 9_000, 2_500)
    assert usage.completion_tokens == 40 and usage.total_tokens == 12_040
    # On the wire, Anthropic's input_tokens leaves the cached part out.
    assert fake_llm.settled(fake_llm.requests[-1]) == "complete"


@pytest.mark.parametrize(
    ("error", "kind", "status"),
    [
        ({"type": "overloaded_error", "message": "Overloaded"}, "provider_down", 529),
        ({"type": "rate_limit_error", "message": "Output rate limit exceeded"}, "rate_limit", 429),
        ({"type": "api_error", "message": "Internal server error"}, "provider_down", 500),
    ],
)
def test_an_error_event_mid_stream_keeps_the_providers_message_and_type(
    fake_llm: FakeLLM, error: dict[str, str], kind: str, status: int
) -> None:
    fake_llm.push(AnthropicReply(Reply(text="A partial answer", chunk_size=2), error=error, error_after=6))
    err = _error(_req(fake_llm))
    assert (err.kind, err.status, err.retryable) == (kind, status, True)
    assert error["message"] in err.message and error["type"] in err.message
    assert "ended unexpectedly" not in err.message


def test_prompt_is_too_long_is_a_context_overflow(fake_llm: FakeLLM) -> None:
    message = "prompt is too long: 212345 tokens > 200000 maximum"
    fake_llm.push(
        ErrorResponse(400, {"type": "error", "error": {"type": "invalid_request_error", "message": message}})
    )
    err = _error(_req(fake_llm))
    assert (err.kind, err.status, err.retryable) == ("context_overflow", 400, False)
    assert message in err.message


def test_http_errors_are_classified_with_the_providers_words(fake_llm: FakeLLM) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    fake_llm.push(
        ErrorResponse(529, body),
        ErrorResponse(
            429,
            {"type": "error", "error": {"type": "rate_limit_error", "message": "Slow down"}},
            {"retry-after": "7"},
        ),
    )
    err = _error(_req(fake_llm))
    assert (err.kind, err.status, err.retryable, err.message) == (
        "provider_down",
        529,
        True,
        "provider unavailable (HTTP 529): Overloaded",
    )
    err = _error(_req(fake_llm))
    assert (err.kind, err.retry_after, err.message) == (
        "rate_limit",
        7.0,
        "rate limited (HTTP 429): Slow down",
    )


def test_a_stream_cut_before_its_stop_reason_is_a_cut_stream(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abcdefghijkl", chunk_size=2, cut_after=5))
    err = _error(_req(fake_llm))
    assert (err.kind, err.message, err.retryable) == ("provider_down", "stream ended unexpectedly", True)


@pytest.mark.parametrize(
    ("model", "served"),
    [
        ("anthropic/claude-sonnet-4-5", True),
        ("anthropic/claude-sonnet-4-20250514", True),  # unlisted in the map, still Anthropic's
        ("claude-sonnet-4-5", True),  # litellm's map files it under anthropic
        ("claude-sonnet-4-20250514", True),  # litellm's routing rule for bare Claude ids
        ("bedrock/anthropic.claude-3-5-sonnet", False),
        ("vertex_ai/claude-sonnet-4-5", False),
        ("openrouter/anthropic/claude-sonnet-4", True),  # served, but as OpenAI chat completions
        ("anthropic/claude/odd", False),
    ],
)
def test_anthropic_models_take_the_lean_path_unless_litellm_is_forced(model: str, served: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k != lean.PATH_ENV}
    assert lean.serves(model, None, env) is served
    assert lean.serves(model, None, {**env, lean.PATH_ENV: "litellm"}) is False
    req = ChatRequest(model=model, messages=HELLO)
    is_messages = model.startswith(("anthropic/claude-sonnet", "claude-"))
    assert (lean.messages_endpoint(req, {"ANTHROPIC_API_KEY": "k"}) is not None) is is_messages
    assert lean.messages_endpoint(req, {lean.PATH_ENV: "litellm"}) is None


@pytest.mark.parametrize(
    "extra",
    [
        {"reasoning_effort": "high"},  # litellm maps effort per model
        {"response_format": {"type": "json_object"}},  # not translated here
        {"thinking": {"type": "adaptive"}},  # litellm turns it into a budget on older models
    ],
)
def test_what_only_litellm_translates_goes_to_litellm(extra: dict[str, Any]) -> None:
    req = ChatRequest(model=MODEL, messages=HELLO, extra=extra)
    assert anthropic.endpoint(req, {"ANTHROPIC_API_KEY": "k"}) is None
    adaptive = ChatRequest(
        model="anthropic/claude-opus-4-7", messages=HELLO, extra={"thinking": {"type": "enabled"}}
    )
    assert anthropic.endpoint(adaptive, {"ANTHROPIC_API_KEY": "k"}) is None  # litellm rewrites it as adaptive


@pytest.mark.parametrize(
    ("api_base", "env", "url"),
    [
        (None, {}, "https://api.anthropic.com/v1/messages"),
        (None, {"ANTHROPIC_BASE_URL": "https://proxy.example"}, "https://proxy.example/v1/messages"),
        ("http://127.0.0.1:9", {}, "http://127.0.0.1:9/v1/messages"),
        ("http://127.0.0.1:9/", {}, "http://127.0.0.1:9/v1/messages"),
        # OpenCode's (and the Anthropic SDK's) form of a base URL; litellm would ask for /v1/v1/messages.
        ("http://127.0.0.1:9/v1", {}, "http://127.0.0.1:9/v1/messages"),
        ("http://127.0.0.1:9/v1/messages", {}, "http://127.0.0.1:9/v1/messages"),
    ],
)
def test_the_url_follows_the_configured_base(api_base: str | None, env: dict[str, str], url: str) -> None:
    req = ChatRequest(model=MODEL, messages=HELLO, api_base=api_base, api_key="k")
    target = anthropic.endpoint(req, env)
    assert target is not None and target.url == url


def test_a_missing_key_fails_before_sending_but_a_local_proxy_needs_none(fake_llm: FakeLLM) -> None:
    err = _error(ChatRequest(model=MODEL, messages=HELLO, api_base=None, api_key=None))
    assert err.kind == "auth" and "ANTHROPIC_API_KEY" in err.message
    fake_llm.push(Reply(text="keyless"))
    assert assemble(stream_chat(_req(fake_llm, api_key=None))).text == "keyless"
    headers = fake_llm.chat_requests()[-1].headers
    assert "x-api-key" not in headers and "authorization" not in headers


def test_tool_names_anthropic_rejects_are_renamed_and_mapped_back(fake_llm: FakeLLM) -> None:
    tools = [
        {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}
        for name in ("mcp.read", "mcp_read")
    ]
    fake_llm.push(Reply(tool_calls=[ToolCall("mcp_read_2", {})]))
    out = assemble(stream_chat(_req(fake_llm, tools=tools)))
    sent = [t["name"] for t in fake_llm.chat_requests()[-1].body["tools"]]
    assert sent == ["mcp_read_2", "mcp_read"]  # the valid name keeps its own; the other is renamed
    assert [c.name for c in out.tool_calls] == ["mcp.read"]


def test_the_anthropic_lean_path_never_imports_litellm(fake_llm: FakeLLM) -> None:
    import subprocess

    code = (
        "import sys\n"
        "from agentcli.llm.assembly import assemble\n"
        "from agentcli.llm.stream import ChatRequest, stream_chat\n"
        f"req = ChatRequest(model={MODEL!r}, messages=[{{'role': 'user', 'content': 'hi'}}],"
        f" api_base='http://127.0.0.1:{fake_llm.port}', api_key='k')\n"
        "print(assemble(stream_chat(req)).text, 'litellm' in sys.modules)\n"
    )
    fake_llm.push(Reply(text="hi"))
    env = {**os.environ, lean.PATH_ENV: "lean"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["hi", "False"]
