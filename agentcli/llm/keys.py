"""Which environment variable a model's provider needs, checked before the first request.

The common providers are a table (no litellm import, so the chat can say it at startup); for the rest
litellm's own knowledge (``validate_environment``) is asked lazily, when litellm is loaded anyway.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agentcli.llm.route import Route

# litellm prefix → the variables any one of which provides the key (litellm's names).
KEY_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "text-completion-openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openrouter": ("OPENROUTER_API_KEY", "OR_API_KEY"),
    "groq": ("GROQ_API_KEY",),
    "mistral": ("MISTRAL_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "together_ai": ("TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY", "TOGETHER_API_KEY"),
    "fireworks_ai": ("FIREWORKS_AI_API_KEY", "FIREWORKS_API_KEY"),
    "cerebras": ("CEREBRAS_API_KEY",),
    "perplexity": ("PERPLEXITYAI_API_KEY", "PERPLEXITY_API_KEY"),
    "cohere": ("COHERE_API_KEY", "CO_API_KEY"),
    "deepinfra": ("DEEPINFRA_API_KEY",),
    "azure": ("AZURE_API_KEY", "AZURE_OPENAI_API_KEY"),
}
# Providers that run locally and need no key.
KEYLESS: frozenset[str] = frozenset(
    {"ollama", "ollama_chat", "lm_studio", "hosted_vllm", "openai_like", "custom_openai"}
)
DEMO_HINT = "or try `agentcli demo` (no key needed)"


def _prefix(route: Route) -> str:
    return route.litellm_model.partition("/")[0] if "/" in route.litellm_model else ""


def _needs_no_check(route: Route) -> bool:
    # A key from the config, or a server of the user's own (a base URL): nothing to look up.
    return bool(route.api_key) or bool(route.api_base) or _prefix(route) in KEYLESS


def missing_key(route: Route, env: Mapping[str, str] | None = None) -> list[str] | None:
    """The variables to set when the key is surely missing; None when present, not needed or unknown."""
    env = os.environ if env is None else env
    if _needs_no_check(route):
        return None
    names = KEY_VARS.get(_prefix(route))
    if names is None or any(env.get(n) for n in names):
        return None
    return [names[0]]


def missing_key_thorough(route: Route) -> list[str] | None:
    """``missing_key``, then litellm's table for the providers ours does not know (imports litellm)."""
    if _needs_no_check(route):
        return None
    if _prefix(route) in KEY_VARS:
        return missing_key(route)
    from agentcli.llm.lazy import get_litellm

    try:
        found = get_litellm().validate_environment(model=route.litellm_model)
    except Exception:  # litellm does not know the provider's needs: let the request say
        return None
    missing = [str(k) for k in found.get("missing_keys") or []]
    return missing if missing and not found.get("keys_in_environment") else None


def key_message(model: str, missing: list[str]) -> str:
    names = " and ".join(missing)
    verb = "is" if len(missing) == 1 else "are"
    return (
        f"{model} needs {names}, which {verb} not set: export {missing[0]}=…, choose another model "
        f"(--model, /model), {DEMO_HINT}"
    )
