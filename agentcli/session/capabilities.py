"""What a model takes, as OpenCode's model capabilities say it: images (``attachment`` /
``modalities.input``) and a temperature (``temperature``). The config's entry for the model
(``provider.<id>.models.<id>``) decides first, else litellm's model map; unknown: no."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentcli.config import Config
from agentcli.llm import modelmap
from agentcli.llm.route import Route, resolve


def _entry(config: Config, provider_id: str, model_id: str) -> Mapping[str, Any]:
    return (config.providers_dict().get(provider_id) or {}).get("models", {}).get(model_id) or {}


def _known(litellm_model: str) -> Mapping[str, Any] | None:
    for name in modelmap.candidates(litellm_model):
        known = modelmap.entry(name)
        if known is not None:
            return known
    return None


def accepts_images(config: Config, model: str | None, api_base: str | None = None) -> bool:
    """The config's word first (OpenCode's ``modalities.input`` or ``attachment`` on the model's
    entry), else litellm's model map (``supports_vision``); unknown: no."""
    if not model:
        return False
    provider_id, _, model_id = model.partition("/")
    said = _declared_images(_entry(config, provider_id, model_id))
    if said is not None:
        return said
    try:
        route = resolve(model, config.providers_dict(), api_base)
    except ValueError:
        return False
    known = _known(route.litellm_model)
    return bool(known and known.get("supports_vision"))


def takes_temperature(config: Config, route: Route) -> bool:
    """Whether an agent's ``temperature`` is sent to this model: OpenCode sends it only to a model whose
    capabilities say ``temperature``. The model's entry may say so (``"temperature": true|false``);
    else a model litellm's map knows takes one unless it has no sampling parameters; unknown: no."""
    said = _entry(config, route.provider_id, route.model_id).get("temperature")
    if isinstance(said, bool):
        return said
    known = _known(route.litellm_model)
    return known is not None and known.get("supports_sampling_params") is not False


def agent_temperature(config: Config, model: Any, agent: Any) -> float | None:
    """``agent``'s temperature for ``model`` (a ModelInfo), or None where the model takes none."""
    if agent.temperature is None or not takes_temperature(config, model.route):
        return None
    return float(agent.temperature)


def _declared_images(entry: Mapping[str, Any]) -> bool | None:
    modalities = entry.get("modalities")
    if isinstance(modalities, Mapping) and isinstance(modalities.get("input"), list):
        return "image" in modalities["input"]
    attachment = entry.get("attachment")
    return attachment if isinstance(attachment, bool) else None
