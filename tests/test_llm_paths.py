"""The lean path (httpx + SSE) and litellm's path behave alike: the same scripted streams give the same
events, errors and requests; and each model goes to the path that can serve it."""

from __future__ import annotations

import os
from typing import Any

import pytest

from agentcli.llm import lean
from agentcli.llm.assembly import assemble
from agentcli.llm.errors import LLMError
from agentcli.llm.route import PLACEHOLDER_API_KEY
from agentcli.llm.stream import ChatRequest, stream_chat
from tests.fakellm import ErrorResponse, FakeLLM, Reply, Response, ToolCall
from tests.fakellm import Usage as WireUsage
from tests.streaming import drain

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "run a command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]

MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "list the files"},
    {
        "role": "assistant",
        "content": "Listing.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "bash", "arguments": '{"command": "ls"}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"},
    {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
]

SCRIPTS: dict[str, Response] = {
    "text": Reply(text="Hello there, how are you?", chunk_size=3),
    "reasoning_and_tools": Reply(
        text="Let me look.",
        reasoning="The user wants files.",
        tool_calls=[
            ToolCall("bash", {"command": "ls -la"}, id="call_a"),
            ToolCall("read", {"filePath": "x"}, id="call_b"),
        ],
        usage=WireUsage(1200, 80, cached_tokens=1000, reasoning_tokens=30),
        chunk_size=4,
    ),
    "cache_writes": Reply(text="ok", usage=WireUsage(5000, 10, cached_tokens=1000, cache_write_tokens=3000)),
    "finish_length": Reply(text="truncated", finish_reason="length"),
    "unicode": Reply(text="héllo 😀 日本語 — “quotes”\n```py\nx = 1\n```", chunk_size=1),
    "cut": Reply(text="abcdefghij", chunk_size=2, cut_after=3),
    "cut_clean": Reply(text="abcdefghij", chunk_size=2, cut_after=3, cut_clean=True),
    "context_length": ErrorResponse.context_length(),
    "unauthorized": ErrorResponse.unauthorized(),
    "rate_limited": ErrorResponse.rate_limited(retry_after=7),
    "server_error": ErrorResponse.server_error(),
    "too_large": ErrorResponse.too_large(),
    "overflow_422": ErrorResponse(422, {"error": {"message": "too long", "code": "context_length_exceeded"}}),
    "quota": ErrorResponse(
        429, {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}
    ),
    "not_found": ErrorResponse(404, {"error": {"message": "The model `nope` does not exist"}}),
    "bad_request": ErrorResponse(400, {"error": {"message": "Invalid schema for function 'bash'"}}),
}


def _outcome(server: FakeLLM, req: ChatRequest, path: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv(lean.PATH_ENV, path)
    events, error = drain(req)
    sent = server.requests[-1]
    return {
        "events": events,
        "error": error and (error.kind, error.message, error.status, error.retryable, error.retry_after),
        "body": sent.body,
        "path": sent.path,
        "auth": sent.headers.get("authorization"),
        "custom": sent.headers.get("x-agentcli"),
    }


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_both_paths_give_the_same_events_errors_and_requests(
    fake_llm: FakeLLM, script: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    req = ChatRequest(
        model="openai/test-model",
        messages=MESSAGES,
        tools=TOOLS,
        api_base=fake_llm.base_url,
        api_key="sk-test",
        max_tokens=500,
        temperature=0.2,
        extra={"extra_headers": {"x-agentcli": "1"}},
    )
    fake_llm.push(SCRIPTS[script], SCRIPTS[script])
    assert lean.endpoint(req, {}) is not None  # the default path for this model is the lean one
    lean_out = _outcome(fake_llm, req, "lean", monkeypatch)
    litellm_out = _outcome(fake_llm, req, "litellm", monkeypatch)
    assert lean_out == litellm_out
    assert lean_out["events"] or lean_out["error"]


@pytest.mark.parametrize(
    "model",
    [
        "openai/gpt-4o",
        "openai/gpt-5",
        "openai/gpt-5-mini",
        "openrouter/openai/gpt-4o",
        "groq/llama-3.1-8b-instant",
        "deepseek/deepseek-chat",
        "hosted_vllm/qwen",
        "lm_studio/qwen",
    ],
)
def test_requests_per_provider_match_litellms(
    fake_llm: FakeLLM, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parameter mapping as litellm does it (gpt-5: max_completion_tokens, no temperature; OpenRouter's
    usage flag and headers), sent to the same URL."""
    req = ChatRequest(
        model=model,
        messages=MESSAGES[:2],
        api_base=fake_llm.base_url,
        api_key="k",
        max_tokens=100,
        temperature=0.5,
    )
    assert lean.endpoint(req, {}) is not None
    fake_llm.push(Reply(text="ok"), Reply(text="ok"))
    got = []
    for path in ("lean", "litellm"):
        out = _outcome(fake_llm, req, path, monkeypatch)
        headers = fake_llm.requests[-1].headers
        got.append(
            (out["body"], out["path"], out["events"], headers.get("http-referer"), headers.get("x-title"))
        )
    assert got[0] == got[1]


@pytest.mark.parametrize(
    ("model", "api_base", "lean_serves"),
    [
        ("openai/gpt-4o", None, True),
        ("gpt-4o", None, True),  # litellm's map files it under openai
        ("openai/test-model", "http://127.0.0.1:1/v1", True),
        ("openrouter/anthropic/claude-sonnet-4", None, True),
        ("groq/llama-3.1-8b-instant", None, True),
        ("deepseek/deepseek-chat", None, True),
        ("hosted_vllm/qwen", "http://127.0.0.1:1/v1", True),
        ("hosted_vllm/qwen", None, False),  # litellm reports the missing base URL
        ("anthropic/claude-sonnet-4-20250514", None, True),  # Anthropic's Messages API, lean too
        ("claude-sonnet-4-20250514", None, True),
        ("gemini/gemini-2.5-pro", None, False),
        ("bedrock/anthropic.claude-3-5-sonnet", None, False),
        ("vertex_ai/gemini-2.5-pro", None, False),
        ("openai/o3-mini", None, False),  # litellm rewrites o-series messages
        ("openai/gpt-5.1-codex", None, False),  # litellm's Responses API bridge
        # At a local server an id that looks like OpenAI's is that server's model: routed by its provider.
        ("openai/o3-mini", "http://127.0.0.1:1/v1", True),
        ("openai/o1-local-gguf", "http://127.0.0.1:1/v1", True),
        ("openai/qwen-codex", "http://127.0.0.1:1/v1", True),
        ("openai/o3-mini", "https://api.openai.com/v1", False),  # OpenAI's own, named: still litellm
        ("mistral/mistral-large-latest", None, False),
        ("ollama_chat/llama3.1", None, False),
        ("nosuchmodel-xyz", None, False),
    ],
)
def test_each_model_goes_to_the_path_that_serves_it(
    model: str, api_base: str | None, lean_serves: bool
) -> None:
    env = {k: v for k, v in os.environ.items() if k != lean.PATH_ENV}
    assert lean.serves(model, api_base, env) is lean_serves
    assert lean.serves(model, api_base, {**env, lean.PATH_ENV: "litellm"}) is False


def test_missing_key_fails_before_sending_on_both_paths(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider's own endpoint (here its base URL from the environment) needs the key."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    req = ChatRequest(model="openai/gpt-4o", messages=MESSAGES[:2])
    for path in ("lean", "litellm"):
        monkeypatch.setenv(lean.PATH_ENV, path)
        with pytest.raises(LLMError) as info:
            list(stream_chat(req))
        assert info.value.kind == "auth" and "OPENAI_API_KEY" in info.value.message
    assert fake_llm.requests == []


def test_provider_keys_and_bases_come_from_litellms_variables() -> None:
    env = {
        "GROQ_API_KEY": "gk",
        "OPENROUTER_API_KEY": "ok",
        "OR_APP_NAME": "agentcli",
        "DEEPSEEK_API_BASE": "http://127.0.0.1:9/v1",
    }
    groq = lean.endpoint(ChatRequest(model="groq/llama-3.1-8b-instant", messages=[]), env)
    assert groq is not None and groq.url == "https://api.groq.com/openai/v1/chat/completions"
    assert groq.headers["authorization"] == "Bearer gk"
    router = lean.endpoint(ChatRequest(model="openrouter/openai/gpt-4o", messages=[]), env)
    assert router is not None and router.url == "https://openrouter.ai/api/v1/chat/completions"
    assert router.headers["X-Title"] == "agentcli" and router.body["model"] == "openai/gpt-4o"
    deepseek = lean.endpoint(ChatRequest(model="deepseek/deepseek-chat", messages=[], api_key="dk"), env)
    assert deepseek is not None and deepseek.url == "http://127.0.0.1:9/v1/chat/completions"


def test_a_step_stores_the_same_tokens_and_cost_on_both_paths(
    tmp_path,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
) -> None:
    import threading

    from agentcli.bus import Bus
    from agentcli.llm.limits import cost
    from agentcli.session.processor import Processor, StepPolicy
    from agentcli.store import ids
    from agentcli.store.records import AssistantMessage, StepFinishPart, TextPart, UserMessage
    from agentcli.store.store import Store

    store = Store(tmp_path / "paths.db")
    model = "openai/gpt-4o"  # priced in litellm's map
    results = []
    for path in ("lean", "litellm"):
        monkeypatch.setenv(lean.PATH_ENV, path)
        fake_llm.push(Reply(text="Priced answer.", usage=WireUsage(12_000, 300, cached_tokens=4_000)))
        session = store.create_session(str(tmp_path), model)
        user = UserMessage(id=ids.ascending("msg"), session_id=session.id)
        store.put_message(user)
        msg = AssistantMessage(id=ids.ascending("msg"), session_id=session.id, parent_id=user.id)
        store.put_message(msg)
        policy = StepPolicy(
            cost=lambda u: cost(model, u.prompt_tokens, u.completion_tokens, u.cache_read, u.cache_write),
            is_overflow=lambda tokens: False,
        )
        req = ChatRequest(model=model, messages=MESSAGES[:2], api_base=fake_llm.base_url, api_key="k")
        assert Processor(store, Bus(), threading.Event()).process(msg, req, policy) == "continue"
        parts = [p for m in store.messages(session.id) for p in m.parts]
        [finish] = [p for p in parts if isinstance(p, StepFinishPart)]
        text = "".join(p.text for p in parts if isinstance(p, TextPart))
        results.append(
            (text, finish.tokens, finish.cost, msg.tokens, msg.cost, store.get_session(session.id).cost)
        )
    assert results[0] == results[1]
    assert results[0][0] == "Priced answer." and results[0][2] > 0 and results[0][1].cache.read == 4_000


@pytest.mark.parametrize(
    "model", ["openai/test-model", "deepseek/deepseek-chat", "groq/llama-3.1-8b-instant"]
)
def test_a_base_url_of_ones_own_needs_no_key(
    fake_llm: FakeLLM, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--api-base`` at a keyless local server (llama.cpp, vLLM, Ollama): the request goes, without an
    Authorization header, instead of being refused for a key the server never asked for."""
    for var in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY", "GROQ_API_KEY", lean.PATH_ENV):
        monkeypatch.delenv(var, raising=False)
    for api_key in (None, PLACEHOLDER_API_KEY):  # the CLI's placeholder for openai/ + a base URL
        fake_llm.push(Reply(text="hello"))
        req = ChatRequest(model=model, messages=MESSAGES[:2], api_base=fake_llm.base_url, api_key=api_key)
        assert assemble(stream_chat(req)).text == "hello"
        assert "authorization" not in fake_llm.requests[-1].headers


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_reasoning_content_goes_only_to_providers_that_take_it(
    fake_llm: FakeLLM, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Groq and Mistral reject an unknown message field, DeepSeek's thinking mode requires it on every
    assistant message (the least it accepts where none was kept: a space)."""
    monkeypatch.setenv(lean.PATH_ENV, path)
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "from another model"},
        {"role": "user", "content": "list the files"},
        {**MESSAGES[2], "reasoning_content": "ls is the command"},
        MESSAGES[3],
    ]
    sent = {}
    for model in ("groq/llama-3.1-8b-instant", "deepseek/deepseek-reasoner"):
        fake_llm.push(Reply(text="ok"))
        req = ChatRequest(model=model, messages=history, api_base=fake_llm.base_url, api_key="k")
        list(stream_chat(req))
        sent[model] = [m.get("reasoning_content") for m in fake_llm.requests[-1].body["messages"]]
    assert sent["groq/llama-3.1-8b-instant"] == [None] * 5
    assert sent["deepseek/deepseek-reasoner"] == [None, " ", None, "ls is the command", None]
    assert history[3]["reasoning_content"] == "ls is the command"  # the caller's list is not changed
