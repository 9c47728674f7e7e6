"""Fail fast and say where: a provider silent before the first byte or between chunks ends the step
after its own limit (shorter than the request's timeout) and is retried at most once; a stream that
never stops is cut at the model's output limit. Small configured limits, no sleeps."""

from __future__ import annotations

import time
from typing import Any

import pytest

from agentcli.llm import lean
from agentcli.llm.assembly import assemble
from agentcli.llm.errors import LLMError, retry_delay
from agentcli.llm.lazy import get_litellm
from agentcli.llm.stream import ChatRequest, TextDelta, stream_chat
from tests.fakellm import FakeLLM, Hang, Reply
from tests.replay import ReplayServer, load
from tests.streaming import chat_request, drain

PATHS = ["lean", "litellm"]


def _req(server: FakeLLM, **kw: Any) -> ChatRequest:
    # the request's own (per read) timeout: far longer than the limits under test
    return chat_request(server.base_url, timeout=30, **kw)


def _warm(server: FakeLLM, path: str) -> None:
    """litellm's import is not the provider's silence: done before the clock starts. Importing litellm is
    not all of it: its first stream imports some 500 more modules while reading the first chunks (about
    1 s on an idle machine, more than a 2 s limit under load), so one short stream goes first."""
    if path == "litellm":
        get_litellm()
        server.push(Reply(text="warm up", chunk_size=3))
        list(stream_chat(_req(server)))


def _run(req: ChatRequest) -> tuple[list[Any], LLMError]:
    got, err = drain(req)
    assert err is not None, "the stream ended without an error"
    return got, err


@pytest.mark.parametrize("path", PATHS)
def test_a_provider_silent_before_the_first_byte_times_out_and_is_retried_once(
    fake_llm: FakeLLM, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lean.PATH_ENV, path)
    _warm(fake_llm, path)
    fake_llm.push(Hang(60))
    start = time.monotonic()
    _, err = _run(_req(fake_llm, first_byte_timeout=1.5))
    assert time.monotonic() - start < 10
    assert err.kind == "provider_down"
    assert f"timed out: no answer from 127.0.0.1:{fake_llm.port} in 1.5 s" in err.message
    assert retry_delay(err, 1) is not None and retry_delay(err, 2) is None  # at most one retry


@pytest.mark.parametrize("path", PATHS)
def test_a_stream_that_stalls_midway_ends_after_the_idle_limit(
    fake_llm: FakeLLM, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(lean.PATH_ENV, path)
    _warm(fake_llm, path)
    fake_llm.push(Reply(text="abcdefghijklmnop", chunk_size=4, cut_after=2, stall=60))
    start = time.monotonic()
    got, err = _run(_req(fake_llm, idle_timeout=1.5))
    assert time.monotonic() - start < 10
    text = "".join(e.text for e in got if isinstance(e, TextDelta))
    assert text and "abcdefghijklmnop".startswith(text)  # what came before the stall is kept
    assert err.kind == "provider_down"
    assert f"stream timed out: no data from 127.0.0.1:{fake_llm.port} for 1.5 s" in err.message


@pytest.mark.parametrize("path", PATHS)
def test_a_slow_steady_stream_is_not_cut(
    fake_llm: FakeLLM, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk resets the idle limit: a stream longer than it, but never silent that long, is whole."""
    monkeypatch.setenv(lean.PATH_ENV, path)
    _warm(fake_llm, path)
    fake_llm.push(Reply(text="slow but steady", chunk_size=3, delay=0.5))
    events = list(stream_chat(_req(fake_llm, idle_timeout=2)))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "slow but steady"


def test_keep_alive_comments_are_signs_of_life(monkeypatch: pytest.MonkeyPatch) -> None:
    """OpenRouter sends `: OPENROUTER PROCESSING` comments while the model has not started: a provider
    saying it is working is not silent, even past the first-byte limit (lean path: litellm's SDK
    swallows comments, so there only chunks count)."""
    monkeypatch.setenv(lean.PATH_ENV, "lean")
    rec = load("openrouter-minimax-error-after-length")  # 17 comments before the first chunk
    with ReplayServer(rec, delay=0.25) as server:
        req = ChatRequest(
            model="openai/test-model",
            messages=[{"role": "user", "content": "hi"}],
            api_base=server.base_url,
            api_key="k",
            first_byte_timeout=2,  # the comments alone take over 4 s
        )
        got = assemble(stream_chat(req))
    assert got.finish == "length" and got.reasoning == rec.expect["reasoning"]


@pytest.mark.parametrize("path", PATHS)
def test_an_endless_stream_is_cut_at_the_output_limit(
    fake_llm: FakeLLM, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A provider that ignores max_tokens and never stops is cut once the answer is well past it,
    instead of growing memory and the database without end."""
    monkeypatch.setenv(lean.PATH_ENV, path)
    fake_llm.push(Reply(text="again and again " * 20_000, chunk_size=64))
    got, err = _run(_req(fake_llm, max_tokens=1000))
    received = sum(len(e.text) for e in got if isinstance(e, TextDelta))
    assert 1000 * 4 < received <= 1000 * 4 * 2  # past the limit, by no more than the margin
    assert err.kind == "unknown" and not err.retryable
    assert "stream cut: the model kept writing past its output limit" in err.message
