"""Model routing: OpenCode "provider/model" names and litellm strings → what litellm is called with."""

from __future__ import annotations

import pytest

from agentcli.llm.route import PLACEHOLDER_API_KEY, limits_override, resolve

LOCAL = {
    "local": {
        "npm": "@ai-sdk/openai-compatible",
        "options": {"baseURL": "http://127.0.0.1:8080/v1", "headers": {"X-Team": "core"}},
        "models": {
            "qwen": {"id": "Qwen/Qwen2.5-Coder", "limit": {"context": 32768, "output": 4096}},
            "plain": {},
        },
    }
}


def test_openai_compatible_provider() -> None:
    route = resolve("local/qwen", LOCAL, env={"TEAM": "core"})
    assert (
        route.litellm_model == "openai/Qwen/Qwen2.5-Coder"
    )  # the model entry's `id` is what the API expects
    assert route.api_base == "http://127.0.0.1:8080/v1"
    assert route.api_key == PLACEHOLDER_API_KEY  # local servers need no key, the OpenAI client needs one
    assert route.headers == {"X-Team": "core"}
    assert (route.provider_id, route.model_id, route.display) == ("local", "qwen", "local/qwen")
    assert route.limits == (32768, 0, 4096)
    assert limits_override(route) == (32768, 0, 4096)


def test_model_without_entry_or_limits() -> None:
    route = resolve("local/other", LOCAL, env={})
    assert route.litellm_model == "openai/other"
    assert route.limits is None and limits_override(route) is None
    assert limits_override(resolve("local/plain", LOCAL, env={})) is None


def test_values_are_used_as_the_config_gives_them_and_the_env_list_is_read() -> None:
    """The config is substituted once, where it is read: a ``{env:K}`` reaching routing is text a
    ``{file:}`` brought in, and is never expanded a second time into the key it names."""
    providers = {
        "p": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL": "http://h/v1", "apiKey": "{env:K}"}}
    }
    assert resolve("p/m", providers, env={"K": "secret"}).api_key == "{env:K}"
    listed = {"p": {"env": ["A_KEY", "B_KEY"], "options": {"baseURL": "http://h/v1"}}}
    assert resolve("p/m", listed, env={"B_KEY": "b"}).api_key == "b"


def test_unknown_npm_with_base_url_is_openai_compatible() -> None:
    providers = {"vllm": {"npm": "some-custom-sdk", "options": {"baseURL": "http://gpu:8000/v1"}}}
    route = resolve("vllm/llama", providers, env={})
    assert (route.litellm_model, route.api_base, route.api_key) == (
        "openai/llama",
        "http://gpu:8000/v1",
        PLACEHOLDER_API_KEY,
    )


def test_configured_known_provider_passes_base_url_and_key() -> None:
    providers = {"anthropic": {"options": {"baseURL": "https://proxy.example/v1", "apiKey": "k"}}}
    route = resolve("anthropic/claude-sonnet-4", providers, env={"AK": "k"})
    assert (route.litellm_model, route.api_base, route.api_key) == (
        "anthropic/claude-sonnet-4",
        "https://proxy.example/v1",
        "k",
    )


def test_custom_id_with_known_npm_package() -> None:
    providers = {"work-claude": {"npm": "@ai-sdk/anthropic", "options": {"apiKey": "x"}}}
    assert resolve("work-claude/claude-x", providers, env={}).litellm_model == "anthropic/claude-x"


def test_configured_provider_that_cannot_be_reached() -> None:
    with pytest.raises(ValueError, match=r"^provider 'mystery' needs options\.baseURL"):
        resolve("mystery/m", {"mystery": {"npm": "unknown-sdk"}}, env={})


def test_configured_ollama_provider_uses_ollama_chat() -> None:
    providers = {"ollama": {"options": {"baseURL": "http://box:11434"}}}
    route = resolve("ollama/llama3", providers, env={})
    assert (route.litellm_model, route.api_base) == ("ollama_chat/llama3", "http://box:11434")


@pytest.mark.parametrize(
    ("model", "litellm_model"),
    [
        ("google/gemini-2.5-pro", "gemini/gemini-2.5-pro"),
        ("google-vertex/gemini-2.5-pro", "vertex_ai/gemini-2.5-pro"),
        ("amazon-bedrock/anthropic.claude-3", "bedrock/anthropic.claude-3"),
        ("togetherai/meta/llama", "together_ai/meta/llama"),
        ("fireworks-ai/llama", "fireworks_ai/llama"),
        ("lmstudio/qwen", "lm_studio/qwen"),
        ("github-copilot/gpt-4.1", "github_copilot/gpt-4.1"),
        ("anthropic/claude-sonnet-4", "anthropic/claude-sonnet-4"),
        ("openrouter/anthropic/claude-3.5", "openrouter/anthropic/claude-3.5"),
        # Already litellm strings: unchanged.
        ("gpt-4o", "gpt-4o"),
        ("ollama/llama3", "ollama/llama3"),
        ("openai/foo", "openai/foo"),
        ("hosted_vllm/some/model", "hosted_vllm/some/model"),
        ("unknown-prefix/model", "unknown-prefix/model"),
    ],
)
def test_unconfigured_names(model: str, litellm_model: str) -> None:
    route = resolve(model, {}, env={})
    assert route.litellm_model == litellm_model
    assert route.api_base is None and route.api_key is None
    assert route.display == model


def test_api_base_overrides_configured_base() -> None:
    route = resolve("local/qwen", LOCAL, api_base="http://other:9/v1", env={})
    assert route.api_base == "http://other:9/v1"
    assert route.litellm_model == "openai/Qwen/Qwen2.5-Coder"


def test_api_base_with_a_bare_name_speaks_openai() -> None:
    route = resolve("qwen", {}, api_base="http://127.0.0.1:8000/v1", env={})
    assert (route.litellm_model, route.api_base, route.api_key) == (
        "openai/qwen",
        "http://127.0.0.1:8000/v1",
        PLACEHOLDER_API_KEY,
    )
    assert route.display == "qwen"


def test_api_base_with_a_litellm_provider_keeps_it() -> None:
    route = resolve("ollama/llama3", {}, api_base="http://box:11434", env={})
    assert (route.litellm_model, route.api_base, route.api_key) == ("ollama/llama3", "http://box:11434", None)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("", "no model given: pass --model provider/model or set `model` in opencode.json"),
        ("   ", "no model given: pass --model provider/model or set `model` in opencode.json"),
        ("local/", "invalid model 'local/': expected provider/model or a litellm model name"),
        ("/qwen", "invalid model '/qwen': expected provider/model or a litellm model name"),
        ("a//b", "invalid model 'a//b': expected provider/model or a litellm model name"),
        ("gpt 4o", "invalid model 'gpt 4o': expected provider/model or a litellm model name"),
    ],
)
def test_garbage_names(model: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        resolve(model, LOCAL, env={})
    assert str(info.value) == message


def test_route_module_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agentcli.llm.route; print(sorted(m for m in sys.modules"
        " if m.split('.')[0] in ('litellm', 'pydantic', 'sqlmodel')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
