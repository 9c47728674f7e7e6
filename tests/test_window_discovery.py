"""A local server's context window: asked of the server in each one's own shape, read off each one's
overflow error, cached across runs; and the conservative default when nothing tells it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentcli.demo.local_servers import TRAINED, LocalServer
from agentcli.llm import window
from agentcli.llm.errors import ProviderHTTPError, classify
from agentcli.llm.route import Route
from agentcli.session.window import WindowFinder
from tests.fakellm import FakeLLM

WINDOW = 24_576
SHAPES = ["vllm", "llamacpp", "lmstudio", "ollama", "litellm"]
SOURCES = {
    "vllm": "vLLM",
    "llamacpp": "llama.cpp",
    "lmstudio": "LM Studio",
    "ollama": "Ollama",
    "litellm": "LiteLLM",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_server_is_asked_for_the_window_it_was_started_with_not_the_trained_size(shape: str) -> None:
    with FakeLLM() as server:
        server.local = LocalServer(shape, WINDOW)
        found = window.discover(server.base_url, "test-model")
    assert found is not None
    assert found.tokens == WINDOW != WINDOW * TRAINED
    assert SOURCES[shape] in found.source


def test_a_server_that_says_nothing_gives_no_window() -> None:
    with FakeLLM() as server:
        server.local = LocalServer("error-only", WINDOW)
        assert window.discover(server.base_url, "test-model") is None


def test_ollama_without_num_ctx_is_its_default_context_not_the_trained_one(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("OLLAMA_CONTEXT_LENGTH", raising=False)
    with FakeLLM() as server:
        local = LocalServer("ollama", WINDOW)
        local.post = lambda path, body: (
            200,
            {"parameters": "stop x", "model_info": {"llama.context_length": 1 << 17}},
        )  # type: ignore[method-assign]
        server.local = local
        assert window.discover(server.base_url, "test-model") == window.Window(
            4096, "Ollama (its default num_ctx)"
        )
        monkeypatch.setenv("OLLAMA_CONTEXT_LENGTH", "16384")
        assert window.discover(server.base_url, "test-model").tokens == 16384  # type: ignore[union-attr]


def test_the_answer_is_cached_across_runs_in_a_private_file(tmp_path: Path) -> None:
    with FakeLLM() as server:
        server.local = LocalServer("llamacpp", WINDOW)
        route = Route(litellm_model="openai/test-model", api_base=server.base_url, api_key=None)
        first = WindowFinder(tmp_path).find(route)
        asked = len(server.requests)
        again = WindowFinder(tmp_path).find(route)  # another run: the file, not the server
        assert len(server.requests) == asked > 0
    assert first.tokens == again.tokens == WINDOW
    assert stat.S_IMODE(os.stat(tmp_path / "model-windows.json").st_mode) == 0o600


def test_a_server_that_says_nothing_is_not_asked_again_on_the_next_run(tmp_path: Path) -> None:
    with FakeLLM() as server:
        route = Route(litellm_model="openai/test-model", api_base=server.base_url, api_key=None)
        assert WindowFinder(tmp_path).find(route).tokens == 0
        asked = len(server.requests)
        assert WindowFinder(tmp_path).find(route).tokens == 0
        assert len(server.requests) == asked


def test_discovery_asks_each_server_shape_at_most_once() -> None:
    """What keeps it within the issue's 50 ms (scripts/bench_window.py measures it: wall-clock bounds
    flake on a busy machine): one probe per server shape, the slowest case asking all six."""
    with FakeLLM() as server:
        server.local = LocalServer("litellm", WINDOW)  # the last probe: every other one is tried first
        before = len(server.requests)
        assert window.discover(server.base_url, "test-model") is not None
        paths = [r.path for r in server.requests[before:]]
    assert len(paths) == len(set(paths)) <= 6, paths


# -- the overflow error names the window ------------------------------------------------------


@pytest.mark.parametrize("shape", ["vllm", "llamacpp", "lmstudio", "litellm", "error-only"])
def test_each_servers_overflow_error_is_an_overflow_that_names_the_window(shape: str) -> None:
    status, body = LocalServer(shape, WINDOW).overflow({"messages": [{"content": "x" * 200_000}]})  # type: ignore[misc]
    err = classify(ProviderHTTPError(status, body))
    assert err.kind == "context_overflow"
    assert err.window == WINDOW


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # LM Studio, as users reported it (lmstudio-bug-tracker #546, #237; opencode #11141)
        (
            "Trying to keep the first 111490 tokens when context the overflows. However, the model is loaded "
            "with context length of only 32768 tokens, which is not enough.",
            32768,
        ),
        ("Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)", 7424),
        (
            "The number of tokens to keep from the initial prompt is greater than the context length "
            "(n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length",
            4096,
        ),
        # vLLM's newer words
        (
            "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum context length "
            "is 4096 tokens and your request has 2104 input tokens (2000 > 4096 - 2104).",
            4096,
        ),
    ],
)
def test_real_overflow_texts_are_overflows_naming_the_window(text: str, tokens: int) -> None:
    err = classify(ProviderHTTPError(400, {"error": text}))
    assert err.kind == "context_overflow"
    assert err.window == tokens
