"""The parts of litellm agentcli relies on beyond ``completion()``. Each was read from litellm's source,
not its documented API, so a release may move it without notice; this file fails loudly, naming what
moved, before a user meets the consequence (a setting silently ignored, usage made up, a tokenizer
download at run time, an error classified as "unknown"). pyproject.toml bounds litellm to releases
this file has passed on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from agentcli.llm import lean, modelmap
from agentcli.llm.lazy import get_litellm
from agentcli.llm.litellm_path import completion_kwargs, provider_usage
from agentcli.llm.stream import ChatRequest
from tests.fakellm import FakeLLM, Reply
from tests.fakellm import Usage as WireUsage

# Module settings lazy.get_litellm assigns: a renamed one would be set and never read (litellm dropped
# ``telemetry`` this way: agentcli no longer sets it).
SETTINGS = [
    "suppress_debug_info",
    "set_verbose",
    "drop_params",
    "turn_off_message_logging",
    "callbacks",
    "disable_streaming_logging",
    "success_callback",
    "failure_callback",
    "disable_hf_tokenizer_download",
]

# Exception classes errors.classify recognises by name (it never imports litellm).
EXCEPTIONS = [
    "ContextWindowExceededError",
    "AuthenticationError",
    "PermissionDeniedError",
    "RateLimitError",
    "NotFoundError",
    "ServiceUnavailableError",
    "InternalServerError",
    "APIConnectionError",
    "MidStreamFallbackError",
    "BadRequestError",
    "UnprocessableEntityError",
    "ContentPolicyViolationError",
    "Timeout",
]

FUNCTIONS = ["completion", "get_model_info", "token_counter", "cost_per_token", "get_llm_provider"]


@pytest.fixture(scope="module")
def litellm() -> Any:
    return get_litellm()


def test_the_settings_agentcli_assigns_are_litellm_settings() -> None:
    # Asked of a fresh litellm (in this process get_litellm has assigned them all, known or not).
    probe = f"import litellm; print([n for n in {SETTINGS!r} if not hasattr(litellm, n)])"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", f"litellm no longer defines: {out.stdout.strip()}"


@pytest.mark.parametrize("name", EXCEPTIONS)
def test_the_exception_classes_classify_knows_exist(litellm: Any, name: str) -> None:
    cls = getattr(litellm, name, None) or getattr(litellm.exceptions, name, None)
    assert isinstance(cls, type) and issubclass(cls, Exception), f"litellm.{name} moved"


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_functions_agentcli_calls_exist(litellm: Any, name: str) -> None:
    assert callable(getattr(litellm, name, None)), f"litellm.{name} moved"


def test_an_unroutable_model_still_says_llm_provider_not_provided(litellm: Any) -> None:
    with pytest.raises(Exception) as info:
        litellm.get_llm_provider("nosuchmodel-xyz")
    assert "LLM Provider NOT provided" in str(info.value)  # errors._NO_PROVIDER


def test_the_bundled_model_map_is_where_modelmap_reads_it(litellm: Any) -> None:
    path = modelmap.map_path()
    assert path is not None and path.name == modelmap.MAP_FILE, "litellm's bundled JSON map moved"
    assert json.loads(path.read_text())["gpt-4o"]["max_input_tokens"] > 0


def test_no_tokenizer_is_fetched_from_hugging_face(litellm: Any) -> None:
    """With disable_hf_tokenizer_download, a model litellm would count with a Hugging Face tokenizer
    (groq's llama) is counted with the tiktoken encoding it ships: no network at run time."""
    from litellm.utils import select_tokenizer

    assert select_tokenizer("groq/llama-3.1-8b-instant")["type"] == "openai_tokenizer"


def test_the_stream_wrapper_keeps_what_litellm_path_reads(
    litellm: Any, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """litellm_path reads the stream wrapper's ``chunks`` (the provider's own usage),
    ``received_finish_reason`` / ``intermittent_finish_reason`` (a finish litellm made up) and
    ``completion_stream`` (to close the HTTP stream); and passes ``_skip_mcp_handler``."""
    monkeypatch.setenv(lean.PATH_ENV, "litellm")
    fake_llm.push(Reply(text="hello", usage=WireUsage(120, 7)))
    req = ChatRequest(
        model="openai/test-model",
        messages=[{"role": "user", "content": "hi"}],
        api_base=fake_llm.base_url,
        api_key="k",
    )
    kwargs = completion_kwargs(req)
    assert kwargs["_skip_mcp_handler"] is True
    response = litellm.completion(**kwargs)
    list(response)
    assert isinstance(getattr(response, "chunks", None), list), "CustomStreamWrapper.chunks moved"
    usage = provider_usage(response)
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (120, 7)
    assert hasattr(response, "received_finish_reason"), "CustomStreamWrapper.received_finish_reason moved"
    assert hasattr(response, "intermittent_finish_reason")
    assert hasattr(response, "completion_stream"), "CustomStreamWrapper.completion_stream moved"
