"""Which requests the lean path serves, and the exact HTTP request it sends for them.

The lean path speaks OpenAI's chat-completions protocol with httpx alone, for the providers where
litellm itself does nothing but that: the same URL, headers and body litellm would send (checked by
tests/test_llm_paths.py against litellm's own requests), and Anthropic's Messages API (``anthropic``).
Everything else — providers with their own wire format (Bedrock, Vertex, Gemini, …), providers whose
parameters litellm rewrites, and OpenAI models litellm sends elsewhere (o-series, the Responses API) —
goes through litellm.

``AGENTCLI_LLM_PATH=litellm`` sends every request through litellm (for comparison, and as an escape
hatch should a provider need what only litellm does); any other value (``lean``) is the default choice.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentcli.llm import anthropic, modelmap, replay
from agentcli.llm.events import ChatRequest
from agentcli.llm.route import PLACEHOLDER_API_KEY

PATH_ENV = "AGENTCLI_LLM_PATH"


@dataclass(frozen=True)
class Provider:
    """Where litellm sends an OpenAI-compatible provider's requests (``litellm/main.py`` and the
    provider's ``transformation.py``): its base URL and the environment variables it reads."""

    default_base: str | None
    base_env: tuple[str, ...]
    key_env: tuple[str, ...]
    default_key: str | None = None  # local servers: litellm sends a placeholder
    headers: tuple[tuple[str, str, str], ...] = ()  # (header, env var, default) litellm adds
    body: tuple[tuple[str, Any], ...] = ()  # fields litellm adds to the body


PROVIDERS: dict[str, Provider] = {
    "openai": Provider(
        "https://api.openai.com/v1", ("OPENAI_BASE_URL", "OPENAI_API_BASE"), ("OPENAI_API_KEY",)
    ),
    "openrouter": Provider(
        "https://openrouter.ai/api/v1",
        ("OPENROUTER_API_BASE",),
        ("OPENROUTER_API_KEY", "OR_API_KEY"),
        headers=(
            ("HTTP-Referer", "OR_SITE_URL", "https://litellm.ai"),
            ("X-Title", "OR_APP_NAME", "liteLLM"),
        ),
        body=(("usage", {"include": True}),),
    ),
    "groq": Provider("https://api.groq.com/openai/v1", ("GROQ_API_BASE",), ("GROQ_API_KEY",)),
    "deepseek": Provider("https://api.deepseek.com/beta", ("DEEPSEEK_API_BASE",), ("DEEPSEEK_API_KEY",)),
    "hosted_vllm": Provider(None, ("HOSTED_VLLM_API_BASE",), ("HOSTED_VLLM_API_KEY",), "fake-api-key"),
    "lm_studio": Provider(None, ("LM_STUDIO_API_BASE",), ("LM_STUDIO_API_KEY",), "fake-api-key"),
}

# OpenAI reasoning models litellm rewrites messages for (o-series: system → developer, …).
_OPENAI_O_SERIES = re.compile(r"^o\d")
# gpt-5: litellm renames max_tokens and drops a temperature other than 1 (drop_params).
_OPENAI_GPT5 = re.compile(r"^gpt-5")


@dataclass(frozen=True)
class Endpoint:
    url: str
    headers: dict[str, str]
    body: dict[str, Any] = field(default_factory=dict)
    timeout: float = 600
    missing_key: str | None = None  # the variable to set when no API key was found


def forced_litellm(env: Mapping[str, str] = os.environ) -> bool:
    return env.get(PATH_ENV, "").strip().lower() == "litellm"


def serves(model: str, api_base: str | None = None, env: Mapping[str, str] = os.environ) -> bool:
    """Whether the lean path serves this litellm model string (so litellm need not be imported)."""
    if forced_litellm(env):
        return False
    return _provider_of(model, api_base, env) is not None or anthropic.model_id(model) is not None


def messages_endpoint(
    req: ChatRequest, env: Mapping[str, str] = os.environ
) -> anthropic.MessagesEndpoint | None:
    """The Anthropic Messages request for ``req`` on the lean path, or None (not Anthropic's, or
    something only litellm translates)."""
    return None if forced_litellm(env) else anthropic.endpoint(req, env)


def endpoint(req: ChatRequest, env: Mapping[str, str] = os.environ) -> Endpoint | None:
    """The HTTP request for ``req`` on the lean path, or None: litellm serves it."""
    found = _provider_of(req.model, req.api_base, env)
    if found is None:
        return None
    name, provider, model_id = found
    base = req.api_base or _first_env(provider.base_env, env) or provider.default_base
    assert base is not None  # _provider_of checked it
    key = req.api_key or _first_env(provider.key_env, env) or provider.default_key
    headers = {"content-type": "application/json", "accept": "text/event-stream"}
    for header, var, default in provider.headers:
        headers[header] = env.get(var) or default
    if key and key != PLACEHOLDER_API_KEY:
        headers["authorization"] = f"Bearer {key}"
    extra = dict(req.extra)
    headers.update({str(k): str(v) for k, v in (extra.pop("extra_headers", None) or {}).items()})
    body: dict[str, Any] = {"model": model_id, "messages": replay.outgoing(req.model, req.messages)}
    if req.tools:
        body["tools"] = req.tools
    if req.max_tokens is not None:
        body["max_completion_tokens" if _is_gpt5(name, model_id) else "max_tokens"] = req.max_tokens
    if req.temperature is not None and not (_is_gpt5(name, model_id) and req.temperature != 1):
        body["temperature"] = req.temperature
    body.update(extra)
    body.update(provider.body)
    body.update(stream=True, stream_options={"include_usage": True})
    return Endpoint(
        url=base.rstrip("/") + "/chat/completions",
        headers=headers,
        body=body,
        timeout=req.timeout,
        # A base URL given for this request is a server of the user's own (a local vLLM, llama.cpp,
        # Ollama): it may need no key at all, so the request goes without Authorization.
        missing_key=None if key or req.api_base else provider.key_env[0],
    )


def _provider_of(
    model: str, api_base: str | None, env: Mapping[str, str]
) -> tuple[str, Provider, str] | None:
    if forced_litellm(env):
        return None
    prefix, _, model_id = model.partition("/")
    if not model_id:  # a bare name: the provider litellm's map files it under
        info = modelmap.entry(model)
        prefix, model_id = (str(info.get("litellm_provider") or ""), model) if info else ("", "")
    provider = PROVIDERS.get(prefix)
    if provider is None or not model_id:
        return None
    if not (api_base or _first_env(provider.base_env, env) or provider.default_base):
        return None  # litellm reports the missing base URL its own way
    if prefix == "openai" and not _elsewhere(api_base):
        # OpenAI's own models that litellm rewrites requests for; at another server (a local one) an id
        # that looks like one is that server's model, routed by its provider, never by its look.
        if _OPENAI_O_SERIES.match(model_id) or "codex" in model_id:
            return None
        info = modelmap.entry(model_id) or {}
        if info.get("use_openai_responses_path") or info.get("mode") not in (None, "chat"):
            return None
    return prefix, provider, model_id


def _elsewhere(api_base: str | None) -> bool:
    """A base URL that is not OpenAI's own API."""
    return bool(api_base) and "api.openai.com" not in (api_base or "")


def _is_gpt5(provider: str, model_id: str) -> bool:
    return provider == "openai" and bool(_OPENAI_GPT5.match(model_id))


def _first_env(names: tuple[str, ...], env: Mapping[str, str]) -> str | None:
    return next((env[n] for n in names if env.get(n)), None)
