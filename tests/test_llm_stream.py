"""stream_chat against the scripted server: events, usage, abort, cut streams, failures."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from typing import Any

import pytest

from agentcli.llm.assembly import assemble
from agentcli.llm.errors import LLMError, retry_delay
from agentcli.llm.stream import (
    ChatRequest,
    Finish,
    ReasoningDelta,
    TextDelta,
    ToolCallDelta,
    Usage,
    stream_chat,
)
from tests.fakellm import ErrorResponse, FakeLLM, Hang, Reply, ToolCall, unused_port
from tests.fakellm import Usage as WireUsage
from tests.streaming import chat_request, drain, read_to_the_end, stream_worker

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


def _req(server: FakeLLM, **kw: Any) -> ChatRequest:
    return chat_request(server.base_url, **kw)


_run = drain  # all events until the end or the error


def _wait_closed(server: FakeLLM, n: int = 0) -> str:
    """The ``n``-th request's outcome once the server has finished with it (or 60 s passed)."""
    return server.settled(server.chat_requests()[n])


def test_text_reasoning_and_split_tool_calls(fake_llm: FakeLLM) -> None:
    fake_llm.push(
        Reply(
            text="Let me look at the files.",
            reasoning="The user wants a listing.",
            tool_calls=[
                ToolCall("bash", {"command": "ls -la"}, id="call_1"),
                ToolCall("read", {"filePath": "/tmp/a.py", "offset": 10}, id="call_2"),
            ],
            usage=WireUsage(1200, 80, cached_tokens=1000, reasoning_tokens=30),
            chunk_size=3,
        )
    )
    events, err = _run(_req(fake_llm, tools=TOOLS))
    assert err is None
    assert sum(isinstance(e, TextDelta) for e in events) > 1
    assert sum(isinstance(e, ToolCallDelta) for e in events) > 4  # fragments, not whole calls
    # usage then finish are always the last two events
    assert events[-2:] == [
        Usage(
            prompt_tokens=1200,
            completion_tokens=80,
            cache_read=1000,
            cache_write=0,
            reasoning_tokens=30,
            total_tokens=1280,
        ),
        Finish("tool_calls"),
    ]
    answer = assemble(events)
    assert answer.text == "Let me look at the files."
    assert answer.reasoning == "The user wants a listing."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in answer.tool_calls] == [
        ("call_1", "bash", {"command": "ls -la"}),
        ("call_2", "read", {"filePath": "/tmp/a.py", "offset": 10}),
    ]
    assert answer.finish == "tool_calls" and answer.usage == events[-2]
    sent = fake_llm.chat_requests()[0].body
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["tools"] == TOOLS
    # litellm's internal flags stay internal (a tool request must not need the optional mcp package)
    assert set(sent) == {"model", "messages", "stream", "stream_options", "tools"}


def test_events_arrive_in_order(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abcdef", reasoning="xyz", chunk_size=2))
    events, _ = _run(_req(fake_llm))
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["ReasoningDelta"] * 2 + ["TextDelta"] * 3 + ["Usage", "Finish"]
    assert [e.text for e in events if isinstance(e, ReasoningDelta)] == ["xy", "z"]


def test_no_tools_keys_without_tools(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="a"), Reply(text="b"))
    _run(_req(fake_llm))
    _run(_req(fake_llm, tools=[]))
    requests = fake_llm.chat_requests()
    assert len(requests) == 2  # both were sent: the loop below checks something
    for rec in requests:
        assert "tools" not in rec.body and "tool_choice" not in rec.body


def test_request_options_reach_the_server(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="a"))
    _run(
        _req(
            fake_llm,
            max_tokens=321,
            temperature=0.25,
            extra={"seed": 7, "extra_headers": {"x-agentcli": "yes"}},
        )
    )
    rec = fake_llm.chat_requests()[0]
    assert rec.body["max_tokens"] == 321 and rec.body["temperature"] == 0.25
    assert rec.body["seed"] == 7 and rec.headers["x-agentcli"] == "yes"
    assert rec.body["model"] == "test-model"
    assert rec.headers["authorization"] == "Bearer sk-test"


def test_unsupported_params_are_dropped_not_refused(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Through litellm, which knows o1 (at a custom base URL the lean path takes the id as the
    # server's own name: tests/test_llm_paths.py).
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "litellm")
    fake_llm.push(Reply(text="ok"))
    req = _req(fake_llm, temperature=0.5)
    req.model = "openai/o1"  # o-series models take no temperature; litellm would refuse the call
    events, err = _run(req)
    assert err is None and assemble(events).text == "ok"
    assert "temperature" not in fake_llm.chat_requests()[0].body


def test_anthropic_style_cache_writes(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="ok", usage=WireUsage(5000, 10, cached_tokens=1000, cache_write_tokens=3000)))
    events, _ = _run(_req(fake_llm))
    usage = assemble(events).usage
    assert usage is not None
    assert (usage.prompt_tokens, usage.cache_read, usage.cache_write) == (5000, 1000, 3000)


def test_cut_stream_yields_what_arrived_then_fails(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="abcdefghij", chunk_size=2, cut_after=3))  # role chunk + "ab" + "cd"
    events, err = _run(_req(fake_llm))
    assert [e.text for e in events] == ["ab", "cd"]
    assert err is not None and err.kind == "provider_down" and err.message == "stream ended unexpectedly"
    assert err.retryable


def test_stream_ended_cleanly_without_finish_is_still_a_cut(fake_llm: FakeLLM) -> None:
    # litellm would make up finish_reason "stop" here; we must not take a truncated answer as complete
    fake_llm.push(Reply(text="abcdefghij", chunk_size=2, cut_after=3, cut_clean=True))
    events, err = _run(_req(fake_llm))
    assert [e.text for e in events] == ["ab", "cd"]
    assert err is not None and err.message == "stream ended unexpectedly"


def test_abort_mid_stream_stops_promptly_and_closes(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="x" * 600, chunk_size=1, delay=0.1))  # 60 s to stream whole
    abort = threading.Event()
    got: list[Any] = []
    start = time.monotonic()
    with pytest.raises(LLMError) as info:
        for event in stream_chat(_req(fake_llm), abort):
            got.append(event)
            if len(got) == 2:
                abort.set()
    assert info.value.kind == "aborted" and not info.value.retryable
    assert len(got) == 2
    assert time.monotonic() - start < 30  # the whole reply would take 60 s
    assert _wait_closed(fake_llm) == "client_closed"  # the server saw the client leave mid-reply


def test_abort_while_provider_is_silent(fake_llm: FakeLLM) -> None:
    fake_llm.push(Hang(30))
    abort = threading.Event()
    threading.Timer(0.3, abort.set).start()
    start = time.monotonic()
    events, err = _run(_req(fake_llm), abort)
    assert err is not None and err.kind == "aborted" and events == []
    assert time.monotonic() - start < 10  # the provider would stay silent for 30 s


def test_abort_before_start_sends_nothing(fake_llm: FakeLLM) -> None:
    abort = threading.Event()
    abort.set()
    _, err = _run(_req(fake_llm), abort)
    assert err is not None and err.kind == "aborted"
    time.sleep(0.2)
    assert fake_llm.requests == []


def test_consumer_leaving_early_closes_the_response(fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="y" * 40, chunk_size=1, delay=0.05))
    stream = stream_chat(_req(fake_llm))
    assert isinstance(next(stream), TextDelta)
    stream.close()
    assert _wait_closed(fake_llm) == "client_closed"


def test_timeout_when_provider_hangs(fake_llm: FakeLLM) -> None:
    fake_llm.push(Hang(30))
    start = time.monotonic()
    _, err = _run(_req(fake_llm, timeout=0.5))
    assert err is not None and err.kind == "provider_down" and err.retryable
    assert "timed out" in err.message and err.status is None
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_connection_refused_names_the_host_and_is_not_retried(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", path)
    port = unused_port()
    req = ChatRequest(
        model="openai/test-model",
        messages=[{"role": "user", "content": "hi"}],
        api_base=f"http://127.0.0.1:{port}/v1",
        api_key="k",
    )
    _, err = _run(req)
    assert err is not None and err.kind == "provider_down" and err.status is None
    assert f"cannot connect to 127.0.0.1:{port}: connection refused" in err.message
    assert retry_delay(err, 1) is None  # waiting will not start the server


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_an_unknown_host_says_so_and_is_not_retried(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", path)
    req = ChatRequest(
        model="openai/test-model",
        messages=[{"role": "user", "content": "hi"}],
        api_base="http://no-such-host.invalid/v1",  # .invalid never resolves (RFC 2606)
        api_key="k",
    )
    _, err = _run(req)
    assert err is not None and err.kind == "provider_down" and retry_delay(err, 1) is None
    assert "no-such-host.invalid" in err.message and "does not resolve" in err.message


def test_no_retry_inside_litellm(fake_llm: FakeLLM) -> None:
    fake_llm.push(ErrorResponse.server_error(), Reply(text="would be a retry"))
    _, err = _run(_req(fake_llm))
    assert err is not None and err.kind == "provider_down" and err.status == 500
    assert len(fake_llm.chat_requests()) == 1 and fake_llm.pending() == 1


def test_unknown_model_names_the_model() -> None:
    _, err = _run(ChatRequest(model="nosuchmodel-xyz", messages=[{"role": "user", "content": "hi"}]))
    assert err is not None and err.kind == "bad_request" and not err.retryable
    assert "nosuchmodel-xyz" in err.message and "provider/model" in err.message
    assert "\n" not in err.message


def test_title_rule_does_not_disturb_streaming(fake_llm: FakeLLM) -> None:
    fake_llm.title = "Listing files"
    title = ChatRequest(
        model="openai/test-model",
        messages=[
            {"role": "system", "content": "You are a title generator."},
            {"role": "user", "content": "ls"},
        ],
        api_base=fake_llm.base_url,
        api_key="k",
    )
    fake_llm.push(Reply(text="real"))
    assert assemble(stream_chat(title)).text == "Listing files"
    assert assemble(stream_chat(_req(fake_llm))).text == "real"


def test_coalesce_joins_deltas_that_arrived_while_the_consumer_was_busy(fake_llm: FakeLLM) -> None:
    text = "".join(f"word{i} " for i in range(60))
    hold = threading.Event()
    reply = Reply(
        text=text,
        reasoning="think " * 20,
        tool_calls=[ToolCall("bash", {"command": "ls -la " + "x" * 60}, id="call_1")],
        chunk_size=3,
    )
    fake_llm.push(reply)
    fake_llm.push(replace(reply, hold=hold))  # after its first piece the server waits for ``hold``
    one_by_one, err = _run(_req(fake_llm, tools=TOOLS))
    assert err is None
    before = set(threading.enumerate())
    events = stream_chat(_req(fake_llm, tools=TOOLS), coalesce=True)
    first = next(events)
    hold.set()
    read_to_the_end(stream_worker(before))  # the rest has arrived while we were busy
    joined = [first, *events]
    # A run per kind and per tool call: the first piece, then the rest of the reasoning, the text, the call.
    kinds = [type(e).__name__ for e in joined]
    assert kinds == ["ReasoningDelta"] * 2 + ["TextDelta", "ToolCallDelta", "Usage", "Finish"]
    assert len(one_by_one) > 100  # which were a delta per chunk
    assert assemble(joined) == assemble(one_by_one)  # the same answer, in fewer pieces
    assert joined[-2:] == one_by_one[-2:]  # usage, then finish


def test_text_that_arrived_while_the_consumer_was_busy_comes_as_one_delta(fake_llm: FakeLLM) -> None:
    hold = threading.Event()
    fake_llm.push(Reply(text="word " * 400, chunk_size=4, hold=hold))
    before = set(threading.enumerate())
    events = stream_chat(_req(fake_llm), coalesce=True)
    assert next(events) == TextDelta("word")  # all there is: the server holds the rest back
    hold.set()
    # Sent one chunk per write, so read in as many pieces as the machine's timing makes; all read now.
    read_to_the_end(stream_worker(before))
    rest = list(events)
    assert [type(e).__name__ for e in rest] == ["TextDelta", "Usage", "Finish"]  # 499 chunks, one delta
    assert assemble([TextDelta("word"), *rest]).text == "word " * 400


def test_a_batch_past_the_output_limit_is_delivered_up_to_the_limit_then_cut(fake_llm: FakeLLM) -> None:
    hold = threading.Event()
    fake_llm.push(Reply(text="again and again " * 1_000, chunk_size=64, hold=hold))
    before = set(threading.enumerate())
    events = stream_chat(_req(fake_llm, max_tokens=1000), coalesce=True)  # 6,000 characters at most
    received = [next(events)]
    hold.set()
    read_to_the_end(stream_worker(before))  # all 250 chunks wait in one batch, far past the limit
    with pytest.raises(LLMError, match="past its output limit"):
        received.extend(events)
    # The batch is delivered as one delta, up to the chunk that passes the limit (64 characters each).
    assert [type(e) for e in received] == [TextDelta, TextDelta]
    text = sum(len(e.text) for e in received if isinstance(e, TextDelta))
    assert 6000 - 64 < text <= 6000
