"""The scripted server speaks OpenAI's wire format, and litellm reads it the way agentcli relies on.

The first half checks the raw wire with httpx; the second half records how litellm (as installed)
surfaces each thing — these are the facts agentcli/llm/ is built on.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakellm import NO_SCRIPT_MESSAGE, ErrorResponse, FakeLLM, Hang, Reply, ToolCall, Usage, unused_port

ROOT = Path(__file__).resolve().parents[1]


def _sse(server: FakeLLM, body: dict[str, Any]) -> list[Any]:
    """POST a streaming request; return the decoded data events ([DONE] as the string)."""
    events: list[Any] = []
    with httpx.stream("POST", server.base_url + "/chat/completions", json=body, timeout=10) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"] == "text/event-stream"
        for line in resp.iter_lines():
            if line.startswith("data: "):
                data = line[len("data: ") :]
                events.append(data if data == "[DONE]" else json.loads(data))
    return events


def _chat(**extra: Any) -> dict[str, Any]:
    return {"model": "test-model", "messages": [{"role": "user", "content": "hi"}], **extra}


# -- the raw wire ------------------------------------------------------------------------------


def test_stream_has_openai_shape(fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(
            text="Hello there, world",
            reasoning="thinking hard",
            tool_calls=[ToolCall("bash", {"command": "ls -la /tmp"}, id="call_x")],
            usage=Usage(100, 20, cached_tokens=60, reasoning_tokens=5),
            chunk_size=4,
        )
    )
    events = _sse(fake_llm, _chat(stream=True, stream_options={"include_usage": True}))
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert "".join(d.get("content") or "" for d in deltas) == "Hello there, world"
    assert sum(1 for d in deltas if d.get("content")) > 1
    assert "".join(d.get("reasoning_content", "") for d in deltas) == "thinking hard"
    calls = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert calls[0] == {
        "index": 0,
        "id": "call_x",
        "type": "function",
        "function": {"name": "bash", "arguments": ""},
    }
    assert len(calls) > 2 and all("id" not in c for c in calls[1:])
    assert json.loads("".join(c["function"]["arguments"] for c in calls)) == {"command": "ls -la /tmp"}
    finish = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    assert finish[-1] == "tool_calls" and set(finish[:-1]) == {None}
    usage = chunks[-1]
    assert usage["choices"] == []
    assert usage["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 60},
        "completion_tokens_details": {"reasoning_tokens": 5},
    }


def test_usage_chunk_only_when_asked(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="hi"))
    events = _sse(fake_llm, _chat(stream=True))
    assert all(e == "[DONE]" or e["choices"] for e in events)
    assert events[-2]["choices"][0]["finish_reason"] == "stop"


def test_non_streaming_answer(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="plain", tool_calls=[ToolCall("read", '{"filePath": "a"}')]))
    resp = httpx.post(fake_llm.base_url + "/chat/completions", json=_chat(stream=False), timeout=10)
    body = resp.json()
    assert body["object"] == "chat.completion"
    msg = body["choices"][0]["message"]
    assert msg["content"] == "plain"
    assert msg["tool_calls"][0]["function"] == {"name": "read", "arguments": '{"filePath": "a"}'}
    assert body["choices"][0]["finish_reason"] == "tool_calls"
    assert (
        body["usage"]["total_tokens"] == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
    )


def test_errors_queue_and_recording(fake_llm: FakeLLM) -> None:
    fake_llm.push(ErrorResponse.rate_limited(3), ErrorResponse.context_length())
    url = fake_llm.base_url + "/chat/completions"
    first = httpx.post(url, json=_chat(), headers={"Authorization": "Bearer sk-1"}, timeout=10)
    assert first.status_code == 429 and first.headers["retry-after"] == "3"
    second = httpx.post(url, json=_chat(), timeout=10)
    assert second.status_code == 400
    assert second.json()["error"]["code"] == "context_length_exceeded"
    empty = httpx.post(url, json=_chat(), timeout=10)
    assert empty.status_code == 500 and NO_SCRIPT_MESSAGE in empty.text
    recs = fake_llm.chat_requests()
    assert [fake_llm.settled(r) for r in recs] == ["error", "error", "unscripted"]
    assert recs[0].headers["authorization"] == "Bearer sk-1"
    assert recs[0].body["messages"] == [{"role": "user", "content": "hi"}]


def test_title_requests_do_not_consume_the_queue(fake_llm: FakeLLM) -> None:
    fake_llm.title = "Fixing the parser"
    fake_llm.push(Reply(text="the real answer"))
    title_body = {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": "You are a title generator."},
            {"role": "user", "content": "x"},
        ],
        "stream": False,
    }
    url = fake_llm.base_url + "/chat/completions"
    title = httpx.post(url, json=title_body, timeout=10).json()
    assert title["choices"][0]["message"]["content"] == "Fixing the parser"
    assert fake_llm.pending() == 1
    real = httpx.post(url, json=_chat(), timeout=10).json()
    assert real["choices"][0]["message"]["content"] == "the real answer"
    assert len(fake_llm.requests) == 2 and len(fake_llm.chat_requests()) == 1
    # once the rule is removed, title requests take from the queue like any other
    fake_llm.off(fake_llm.title_rule)
    assert httpx.post(url, json=title_body, timeout=10).status_code == 500


def test_custom_rule(fake_llm: FakeLLM) -> None:
    rule = fake_llm.on(lambda r: r.body.get("model") == "other", Reply(text="from rule"))
    url = fake_llm.base_url + "/chat/completions"
    for _ in range(2):
        got = httpx.post(url, json={**_chat(), "model": "other"}, timeout=10).json()
        assert got["choices"][0]["message"]["content"] == "from rule"
    fake_llm.off(rule)
    assert httpx.post(url, json={**_chat(), "model": "other"}, timeout=10).status_code == 500


def test_cut_stream_drops_connection(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abcdefghijklmnop", chunk_size=2, cut_after=3))
    with pytest.raises(httpx.RemoteProtocolError):
        _sse(fake_llm, _chat(stream=True))
    assert fake_llm.settled(fake_llm.chat_requests()[0]) == "cut"


def test_hang_then_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.push(Hang(30))
    start = time.monotonic()
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(fake_llm.base_url + "/chat/completions", json=_chat(), timeout=0.5)
    assert time.monotonic() - start < 5


def test_wait_for_and_models(fake_llm: FakeLLM) -> None:
    with pytest.raises(TimeoutError):
        fake_llm.wait_for(1, timeout=0.1)
    models = httpx.get(fake_llm.base_url + "/models", timeout=10).json()
    assert [m["id"] for m in models["data"]] == ["test-model"]
    fake_llm.push(Reply(text="x"))
    httpx.post(fake_llm.base_url.removesuffix("/v1") + "/chat/completions", json=_chat(), timeout=10)
    assert len(fake_llm.wait_for(1, timeout=1)) == 1


def test_standalone_serves_a_json_script(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "title": "T",
                "responses": [
                    {"text": "one", "usage": {"prompt_tokens": 7, "completion_tokens": 3}},
                    {"type": "error", "preset": "unauthorized"},
                    {"type": "reply", "tool_calls": [{"name": "bash", "arguments": {"command": "pwd"}}]},
                ],
            }
        )
    )
    record = tmp_path / "requests.jsonl"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakellm",
            "--port",
            "0",
            "--script",
            str(script),
            "--record",
            str(record),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().strip()
        assert base.startswith("http://127.0.0.1:") and base.endswith("/v1")
        url = base + "/chat/completions"
        first = httpx.post(url, json=_chat(), timeout=10).json()
        assert first["choices"][0]["message"]["content"] == "one"
        assert first["usage"]["prompt_tokens"] == 7
        assert httpx.post(url, json=_chat(), timeout=10).status_code == 401
        third = httpx.post(url, json=_chat(), timeout=10).json()
        assert (
            third["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == '{"command": "pwd"}'
        )
        lines = [json.loads(line) for line in record.read_text().splitlines()]
        assert len(lines) == 3 and lines[0]["body"]["messages"][0]["content"] == "hi"
    finally:
        proc.terminate()
        proc.wait(10)


# -- what litellm (as installed) makes of it: the facts agentcli/llm/ relies on ----------------


def _litellm() -> Any:
    from agentcli.llm.lazy import get_litellm

    return get_litellm()


def _completion(server: FakeLLM, **extra: Any) -> Any:
    kwargs: dict[str, Any] = {
        "model": "openai/test-model",
        "api_base": server.base_url,
        "api_key": "sk-test",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "num_retries": 0,
        **extra,
    }
    return _litellm().completion(**kwargs)


def test_litellm_passes_deltas_through(fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(
            text="Hello world",
            reasoning="hmm, let me think",
            tool_calls=[
                ToolCall("bash", {"command": "ls"}, id="call_a"),
                ToolCall("read", {"filePath": "x"}),
            ],
            usage=Usage(100, 20, cached_tokens=60, reasoning_tokens=5, cache_write_tokens=7),
            chunk_size=4,
        )
    )
    chunks = list(_completion(fake_llm))
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert "".join(d.content or "" for d in deltas) == "Hello world"
    assert "".join(getattr(d, "reasoning_content", None) or "" for d in deltas) == "hmm, let me think"
    calls = [tc for d in deltas for tc in d.tool_calls or []]
    # fragments are passed through one by one, not merged: id and name only on the first of each call
    assert (calls[0].index, calls[0].id, calls[0].function.name, calls[0].function.arguments) == (
        0,
        "call_a",
        "bash",
        "",
    )
    assert all(tc.id is None and tc.function.name is None for tc in calls[1:] if tc.index == 0)
    assert len([tc for tc in calls if tc.index == 1]) > 2
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "tool_calls"
    ]
    # usage arrives once, on the last chunk, with the details we need
    with_usage = [c for c in chunks if getattr(c, "usage", None)]
    assert len(with_usage) == 1 and with_usage[0] is chunks[-1]
    usage = with_usage[0].usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (100, 20, 120)
    assert usage.prompt_tokens_details.cached_tokens == 60
    assert usage.completion_tokens_details.reasoning_tokens == 5
    assert usage.cache_creation_input_tokens == 7


def test_litellm_makes_up_a_finish_reason_when_the_stream_just_ends(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abcdefgh", chunk_size=2, cut_after=3, cut_clean=True))
    stream = _completion(fake_llm)
    chunks = list(stream)
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "stop"
    ]
    # ...but remembers that the provider sent none: stream.py relies on this attribute
    assert stream.received_finish_reason is None


def _raised(server: FakeLLM, **extra: Any) -> BaseException:
    with pytest.raises(Exception) as info:
        list(_completion(server, **extra))
    return info.value


@pytest.mark.parametrize(
    ("response", "cls", "status"),
    [
        (ErrorResponse.context_length(), "ContextWindowExceededError", 400),
        (ErrorResponse.unauthorized(), "AuthenticationError", 401),
        (ErrorResponse.rate_limited(3), "RateLimitError", 429),
        (ErrorResponse.server_error(), "InternalServerError", 500),
        (ErrorResponse.too_large(), "APIError", 413),  # not recognised as overflow by litellm
        (ErrorResponse(503, {"error": {"message": "overloaded"}}), "ServiceUnavailableError", 503),
        (ErrorResponse(404, {"error": {"message": "no such model"}}), "NotFoundError", 404),
    ],
)
def test_litellm_exception_per_status(
    fake_llm: FakeLLM, response: ErrorResponse, cls: str, status: int
) -> None:
    fake_llm.push(response)
    exc = _raised(fake_llm)
    assert type(exc).__name__ == cls
    assert exc.status_code == status  # type: ignore[attr-defined]
    assert len(fake_llm.chat_requests()) == 1  # num_retries=0: no retry inside litellm


def test_litellm_global_drop_params_resends_a_422_and_can_return_none(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Why agentcli passes drop_params per call and never sets litellm.drop_params: set globally,
    # litellm re-sends a request that got HTTP 422 (with max_retries lost), and when the second answer
    # is a 422 too, completion() returns None instead of raising.
    overflow = ErrorResponse(422, {"error": {"message": "too long", "code": "context_length_exceeded"}})
    fake_llm.push(overflow)
    exc = _raised(fake_llm, drop_params=True)
    assert type(exc).__name__ == "BadRequestError" and exc.status_code == 422  # type: ignore[attr-defined]
    assert len(fake_llm.chat_requests()) == 1
    monkeypatch.setattr(_litellm(), "drop_params", True)
    fake_llm.push(overflow, overflow)
    assert _completion(fake_llm) is None
    assert len(fake_llm.chat_requests()) == 3


def test_litellm_refuses_unsupported_params_unless_dropping(fake_llm: FakeLLM) -> None:
    exc = _raised(fake_llm, model="openai/o1", temperature=0.5)
    assert type(exc).__name__ == "UnsupportedParamsError"
    assert fake_llm.chat_requests() == []  # refused before sending
    fake_llm.push(Reply(text="ok"))
    list(_completion(fake_llm, model="openai/o1", temperature=0.5, drop_params=True))
    assert "temperature" not in fake_llm.chat_requests()[0].body


def test_litellm_keeps_retry_after_in_its_own_header_copy(fake_llm: FakeLLM) -> None:
    fake_llm.push(ErrorResponse.rate_limited(3))
    exc = _raised(fake_llm)
    assert exc.litellm_response_headers["retry-after"] == "3"  # type: ignore[attr-defined]
    assert exc.response.headers.get("retry-after") is None  # type: ignore[attr-defined]


def test_litellm_cut_and_refused_and_timeout(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abcdefgh", chunk_size=2, cut_after=3))
    assert type(_raised(fake_llm)).__name__ == "MidStreamFallbackError"
    fake_llm.push(Hang(5))
    assert type(_raised(fake_llm, timeout=0.5)).__name__ == "Timeout"
    refused = _raised(fake_llm, api_base=f"http://127.0.0.1:{unused_port()}/v1")
    assert type(refused).__name__ == "InternalServerError" and refused.status_code == 500  # type: ignore[attr-defined]


def test_litellm_retries_by_itself_unless_told_not_to(fake_llm: FakeLLM) -> None:
    fake_llm.push(*[ErrorResponse.server_error()] * 3)
    with pytest.raises(Exception) as info:  # noqa: B017 - the class is checked below
        _litellm().completion(  # no num_retries: the OpenAI client's own default applies
            model="openai/test-model",
            api_base=fake_llm.base_url,
            api_key="sk-test",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
    assert type(info.value).__name__ == "InternalServerError"
    assert len(fake_llm.chat_requests()) == 3  # two retries inside the OpenAI client
