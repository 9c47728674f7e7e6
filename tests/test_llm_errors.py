"""Error classification (OpenCode §6 / §10.8) with the failures produced by a real server."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.llm.errors import LLMError, classify, is_overflow_message, retry_delay
from agentcli.llm.stream import ChatRequest, stream_chat
from tests.fakellm import ErrorResponse, FakeLLM


def _fail(server: FakeLLM, response: ErrorResponse) -> LLMError:
    server.push(response)
    req = ChatRequest(
        model="openai/test-model",
        messages=[{"role": "user", "content": "hi"}],
        api_base=server.base_url,
        api_key="sk-test",
    )
    with pytest.raises(LLMError) as info:
        list(stream_chat(req))
    return info.value


def _err(status: int, message: str | None = None, **error: Any) -> ErrorResponse:
    body: dict[str, Any] | str = {"error": {"message": message, **error}} if message is not None else ""
    return ErrorResponse(status, body)


@pytest.mark.parametrize(
    ("response", "kind", "status", "retryable"),
    [
        (ErrorResponse.context_length(), "context_overflow", 400, False),
        (ErrorResponse.unauthorized(), "auth", 401, False),
        (_err(403, "Project does not have access"), "auth", 403, False),
        (ErrorResponse.rate_limited(3), "rate_limit", 429, True),
        (ErrorResponse.server_error(), "provider_down", 500, True),
        (_err(503, "overloaded"), "provider_down", 503, True),
        (_err(529, "Overloaded"), "provider_down", 529, True),
        (ErrorResponse.too_large(), "context_overflow", 413, False),
        (_err(404, "The model `gpt-9` does not exist"), "not_found", 404, False),
        (_err(400, "Invalid value for 'tool_choice'"), "bad_request", 400, False),
    ],
)
def test_each_kind_from_the_wire(
    fake_llm: FakeLLM, response: ErrorResponse, kind: str, status: int, retryable: bool
) -> None:
    err = _fail(fake_llm, response)
    assert (err.kind, err.status, err.retryable) == (kind, status, retryable)
    assert f"(HTTP {status})" in err.message and "\n" not in err.message
    assert "litellm." not in err.message and "OpenAIException" not in err.message


def test_messages_quote_the_provider(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, ErrorResponse.unauthorized())
    assert err.message == "authentication failed (HTTP 401): Incorrect API key provided: sk-test."
    err = _fail(fake_llm, ErrorResponse.context_length())
    assert err.message.startswith("context window exceeded (HTTP 400): This model's maximum context length")


def test_retry_after_is_read_from_the_response(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, ErrorResponse.rate_limited(7))
    assert err.retry_after == 7.0
    assert retry_delay(err, 1) == 7.0
    ms = ErrorResponse(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "1500"})
    assert _fail(fake_llm, ms).retry_after == 1.5


def test_response_body_is_kept_for_overflow(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, ErrorResponse.context_length())
    assert err.response_body is not None and '"context_length_exceeded"' in err.response_body


# -- §10.8 E1–E7 through the server -----------------------------------------------------------


def test_e1_body_code_context_length_exceeded(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, ErrorResponse(400, {"type": "error", "error": {"code": "context_length_exceeded"}}))
    assert err.kind == "context_overflow" and not err.retryable


def test_e2_insufficient_quota_is_not_retried(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, _err(429, "You exceeded your current quota", code="insufficient_quota"))
    assert err.kind == "rate_limit" and not err.retryable
    assert "quota exceeded" in err.message
    assert retry_delay(err, 1) is None


def test_e3_server_error_code_is_retryable(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, _err(500, "boom", code="server_error", type="server_error"))
    assert err.kind == "provider_down" and err.retryable


@pytest.mark.parametrize(
    "message",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",
        "Your input exceeds the context window of this model",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
        "Please reduce the length of the messages or completion",
    ],
)
def test_e4_overflow_messages_on_400(fake_llm: FakeLLM, message: str) -> None:
    assert _fail(fake_llm, _err(400, message)).kind == "context_overflow"


@pytest.mark.parametrize("status", [400, 413])
def test_e4_bare_400_and_413_without_body(fake_llm: FakeLLM, status: int) -> None:
    err = _fail(fake_llm, ErrorResponse(status, ""))
    assert err.kind == "context_overflow" and err.status == status


def test_e5_422_with_overflow_code(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, _err(422, "nope", code="context_length_exceeded"))
    assert err.kind == "context_overflow" and err.status == 422
    assert len(fake_llm.chat_requests()) == 1  # sent once: never retried


def test_e6_bare_429_is_not_overflow(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, ErrorResponse(429, ""))
    assert err.kind == "rate_limit" and err.retryable


def test_e6_429_never_overflow_even_with_overflow_words(fake_llm: FakeLLM) -> None:
    err = _fail(fake_llm, _err(429, "Request too large: context_length_exceeded for this tier"))
    assert err.kind == "rate_limit"


def test_e7_unknown_exception() -> None:
    err = classify(ValueError("123"))
    assert err.kind == "unknown" and err.message.endswith("123") and not err.retryable


def test_classify_plain_python_failures() -> None:
    assert classify(ConnectionResetError("reset by peer")).kind == "provider_down"
    assert classify(TimeoutError()).kind == "provider_down"
    same = LLMError("auth", "x")
    assert classify(same) is same


# -- the pattern list ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 213462 tokens > 200000 maximum",
        "Input is too long for requested model.",
        "Your input exceeds the context window of this model",
        "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
        "This model's maximum prompt length is 131072 but the request contains 140000 tokens",
        "Please reduce the length of the messages or completion.",
        "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000",
        "prompt token count of 130000 exceeds the limit of 128000",
        "the request exceeds the available context size, try increasing it",
        "Trying to keep the first 9000 tokens when context the overflows. greater than the context length",
        "invalid params, context window exceeds limit (2013)",
        "Invalid request: Your request exceeded model token limit: 131072",
        "context_length_exceeded",
        "Context length exceeded",
        "413 Request Entity Too Large",
        "This model's context length is only 4096 tokens",
        "input length (5000) exceeds the model's context length (4096)",
        "prompt too long; exceeded max context length by 100 tokens",
        "Prompt contains 40000 tokens, too large for model with 32768 maximum context length",
        "model_context_window_exceeded",
        "400 status code (no body)",
        "413 (no body)",
    ],
)
def test_overflow_patterns(text: str) -> None:
    assert is_overflow_message(text)


@pytest.mark.parametrize(
    "text",
    [
        "429 status code (no body)",
        "Rate limit reached",
        "Invalid API key",
        "model not found",
        "500 (no body)",
    ],
)
def test_not_overflow(text: str) -> None:
    assert not is_overflow_message(text)


# -- retry_delay --------------------------------------------------------------------------------


def test_backoff_doubles_and_caps() -> None:
    err = LLMError("provider_down", "x")
    assert [retry_delay(err, n) for n in (1, 2, 3, 4, 5, 6, 10)] == [2, 4, 8, 16, 30, 30, 30]


@pytest.mark.parametrize("kind", ["context_overflow", "auth", "bad_request", "not_found", "aborted"])
def test_never_retried(kind: Any) -> None:
    assert retry_delay(LLMError(kind, "x"), 1) is None
    # not even when marked retryable and sent with a retry-after
    assert retry_delay(LLMError(kind, "x", retryable=True, retry_after=1), 1) is None


def test_unknown_is_not_retried_by_default() -> None:
    assert retry_delay(LLMError("unknown", "x"), 1) is None


def test_retry_after_honoured_within_reason() -> None:
    assert retry_delay(LLMError("rate_limit", "x", retry_after=0.5), 3) == 0.5
    assert retry_delay(LLMError("rate_limit", "x", retry_after=3600), 1) is None  # show it, don't hang
