"""What the agent tells a client it takes in a prompt: images only when the model takes them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.config import Config
from agentcli.llm import modelmap
from agentcli.llm.route import resolve


def accepts_images(config: Config, model: str | None, api_base: str | None = None) -> bool:
    """The config's word first (OpenCode's ``modalities.input`` or ``attachment`` on the model's
    entry), else litellm's model map (``supports_vision``); unknown: no."""
    if not model:
        return False
    providers = config.providers_dict()
    provider_id, _, model_id = model.partition("/")
    entry = (providers.get(provider_id) or {}).get("models", {}).get(model_id) or {}
    said = _declared(entry)
    if said is not None:
        return said
    try:
        route = resolve(model, providers, api_base)
    except ValueError:
        return False
    for name in modelmap.candidates(route.litellm_model):
        known = modelmap.entry(name)
        if known is not None:
            return bool(known.get("supports_vision"))
    return False


def _declared(entry: Mapping[str, Any]) -> bool | None:
    modalities = entry.get("modalities")
    if isinstance(modalities, Mapping) and isinstance(modalities.get("input"), list):
        return "image" in modalities["input"]
    attachment = entry.get("attachment")
    return attachment if isinstance(attachment, bool) else None
