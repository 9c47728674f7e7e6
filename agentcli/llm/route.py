"""Turn a model name (OpenCode's "provider/model" or a litellm string) into what litellm needs.

Pure and dependency-free: it takes the config's provider section as plain dicts, imports nothing of
agentcli and never imports litellm, so it is safe on every startup path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

# OpenCode provider ids → litellm prefixes.
OPENCODE_PROVIDERS: dict[str, str] = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "gemini",
    "google-vertex": "vertex_ai",
    "google-vertex-anthropic": "vertex_ai",
    "amazon-bedrock": "bedrock",
    "azure": "azure",
    "openrouter": "openrouter",
    "groq": "groq",
    "mistral": "mistral",
    "deepseek": "deepseek",
    "xai": "xai",
    "togetherai": "together_ai",
    "fireworks-ai": "fireworks_ai",
    "ollama": "ollama_chat",
    "lmstudio": "lm_studio",
    "github-copilot": "github_copilot",
    "cerebras": "cerebras",
    "perplexity": "perplexity",
    "cohere": "cohere",
    "deepinfra": "deepinfra",
    "huggingface": "huggingface",
}

# AI-SDK packages named in a provider's `npm` → litellm prefixes (for custom provider ids).
NPM_PREFIXES: dict[str, str] = {
    "@ai-sdk/anthropic": "anthropic",
    "@ai-sdk/openai": "openai",
    "@ai-sdk/google": "gemini",
    "@ai-sdk/google-vertex": "vertex_ai",
    "@ai-sdk/amazon-bedrock": "bedrock",
    "@ai-sdk/azure": "azure",
    "@openrouter/ai-sdk-provider": "openrouter",
    "@ai-sdk/groq": "groq",
    "@ai-sdk/mistral": "mistral",
    "@ai-sdk/deepseek": "deepseek",
    "@ai-sdk/xai": "xai",
    "@ai-sdk/togetherai": "together_ai",
    "@ai-sdk/fireworks": "fireworks_ai",
    "@ai-sdk/cerebras": "cerebras",
    "@ai-sdk/perplexity": "perplexity",
    "@ai-sdk/cohere": "cohere",
    "@ai-sdk/deepinfra": "deepinfra",
}

OPENAI_COMPATIBLE_NPM = "@ai-sdk/openai-compatible"

# Prefixes litellm routes by itself. An unconfigured "ollama/llama3" is already a litellm string, so
# it passes unchanged; a bare name plus --api-base is sent as an OpenAI-compatible model instead.
LITELLM_PREFIXES: frozenset[str] = frozenset(OPENCODE_PROVIDERS.values()) | {
    "ollama",
    "hosted_vllm",
    "azure_ai",
    "vertex_ai_beta",
    "text-completion-openai",
    "litellm_proxy",
    "openai_like",
    "custom_openai",
    "watsonx",
    "sagemaker",
    "databricks",
    "nvidia_nim",
    "cloudflare",
    "replicate",
    "ai21",
    "anyscale",
    "bedrock_converse",
}

# Local OpenAI-compatible servers ignore the key, but the OpenAI client refuses to start without one;
# a placeholder also keeps the user's real OPENAI_API_KEY from being sent to an arbitrary base URL.
PLACEHOLDER_API_KEY = "sk-agentcli-no-key"

_VALID_MODEL = re.compile(r"^[^\s/]+(/[^\s/]+)*$")


@dataclass(frozen=True)
class Route:
    litellm_model: str
    api_base: str | None
    api_key: str | None
    headers: dict[str, str] = field(default_factory=dict)
    provider_id: str = ""
    model_id: str = ""
    display: str = ""  # "provider/model" as the user knows it
    limits: tuple[int, int, int] | None = None  # (context, input, output) from config when set
    params: dict[str, Any] = field(default_factory=dict)  # request parameters from the model's options
    cache_key: bool | None = None  # the provider's options.setCacheKey: prompt_cache_key on or off


def _limits(model_entry: Mapping[str, Any]) -> tuple[int, int, int] | None:
    limit = model_entry.get("limit")
    if not isinstance(limit, Mapping):
        return None
    return (int(limit.get("context") or 0), int(limit.get("input") or 0), int(limit.get("output") or 0))


def _params(model_entry: Mapping[str, Any]) -> dict[str, Any]:
    """Request parameters a model's ``options`` set, as the AI SDK spells them: extended thinking
    (``{"thinking": {"type": "enabled", "budgetTokens": 16000}}``) becomes Anthropic's own form."""
    options = model_entry.get("options")
    thinking = options.get("thinking") if isinstance(options, Mapping) else None
    if not isinstance(thinking, Mapping):
        return {}
    renamed = {"budgetTokens": "budget_tokens"}
    return {"thinking": {renamed.get(k, k): v for k, v in thinking.items()}}


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _check(model: str) -> str:
    name = (model or "").strip()
    if not name:
        raise ValueError("no model given: pass --model provider/model or set `model` in opencode.json")
    if not _VALID_MODEL.match(name):
        raise ValueError(f"invalid model {model!r}: expected provider/model or a litellm model name")
    return name


def _configured(provider_id: str, model_id: str, entry: Mapping[str, Any], env: Mapping[str, str]) -> Route:
    options = entry.get("options") or {}
    models = entry.get("models") or {}
    model_entry = models.get(model_id) or {}
    api_id = model_entry.get("id") or model_id  # `id` is the name the provider's API expects
    # The config was substituted once, where it was read (``{env:}`` only where the user allows it):
    # what a ``{file:}`` brought in is text, never expanded again here.
    base = options.get("baseURL") or None
    key = options.get("apiKey") or None
    if key is None:
        key = next((env[v] for v in entry.get("env") or [] if env.get(v)), None)
    headers = {**(options.get("headers") or {}), **(model_entry.get("headers") or {})}
    npm = entry.get("npm")
    prefix = NPM_PREFIXES.get(npm or "") or OPENCODE_PROVIDERS.get(provider_id)
    if npm == OPENAI_COMPATIBLE_NPM or (prefix is None and base):
        litellm_model, key = f"openai/{api_id}", key or PLACEHOLDER_API_KEY
    elif prefix is not None:
        litellm_model = f"{prefix}/{api_id}"
    else:
        raise ValueError(
            f"provider {provider_id!r} needs options.baseURL or a known npm package to be reachable"
        )
    return Route(
        litellm_model=litellm_model,
        api_base=base,
        api_key=key,
        headers=headers,
        provider_id=provider_id,
        model_id=model_id,
        display=f"{provider_id}/{model_id}",
        limits=_limits(model_entry),
        params=_params(model_entry),
        cache_key=_flag(options.get("setCacheKey")),
    )


def resolve(
    model: str,
    providers: Mapping[str, Mapping[str, Any]],
    api_base: str | None = None,
    env: Mapping[str, str] = os.environ,
) -> Route:
    """Route a model name; `api_base` (the CLI's --api-base) overrides any configured base URL."""
    name = _check(model)
    provider_id, _, model_id = name.partition("/")
    if model_id and provider_id in providers:
        route = _configured(provider_id, model_id, providers[provider_id], env)
    elif model_id and provider_id in OPENCODE_PROVIDERS and provider_id not in LITELLM_PREFIXES:
        # An OpenCode id litellm spells differently (google → gemini, …); ids litellm shares pass as-is.
        prefix = OPENCODE_PROVIDERS[provider_id]
        route = Route(f"{prefix}/{model_id}", None, None, {}, provider_id, model_id, name)
    elif api_base and not (model_id and provider_id in LITELLM_PREFIXES):
        # A bare name aimed at a base URL: talk OpenAI's protocol to it, as OpenCode's compatible
        # provider does.
        route = Route(f"openai/{name}", None, PLACEHOLDER_API_KEY, {}, "openai", name, name)
    else:
        route = Route(name, None, None, {}, provider_id if model_id else "", model_id or name, name)
    if api_base:
        route = replace(route, api_base=api_base)
    return route


def limits_override(route: Route) -> tuple[int, int, int] | None:
    """The (context, input, output) limits the config sets for this model, if any are non-zero."""
    if route.limits is None or not any(route.limits):
        return None
    return route.limits
