"""What a model takes, as OpenCode's model capabilities say it: images and PDFs (``modalities.input``,
else ``attachment``) and a temperature (``temperature``). The config's entry for the model
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


# The media a request can carry, by OpenCode's modality name → litellm's model-map flag for it.
MEDIA_FLAGS = {"image": "supports_vision", "pdf": "supports_pdf_input"}


def modality(mime: str) -> str | None:
    """The modality a file of ``mime`` needs the model to take (OpenCode's ``mimeToModality``, for the
    media agentcli sends); None: not media, it goes as it is."""
    if mime.startswith("image/"):
        return "image"
    return "pdf" if mime == "application/pdf" else None


def media_accepted(config: Config, route: Route) -> frozenset[str]:
    """The modalities of ``MEDIA_FLAGS`` this model takes: the config's word first (OpenCode's
    ``modalities.input``, else ``attachment``, on the model's entry), else litellm's model map
    (``supports_vision``, ``supports_pdf_input``); unknown: none."""
    entry = _entry(config, route.provider_id, route.model_id)
    known: Mapping[str, Any] | None = None
    out = set()
    for name, flag in MEDIA_FLAGS.items():
        said = _declared(entry, name)
        if said is None:
            known = known if known is not None else (_known(route.litellm_model) or {})
            said = bool(known.get(flag))
        if said:
            out.add(name)
    return frozenset(out)


def accepts_images(config: Config, model: str | None, api_base: str | None = None) -> bool:
    """Whether ``model`` (a name as the user gives it) takes images (``media_accepted``)."""
    if not model:
        return False
    try:
        route = resolve(model, config.providers_dict(), api_base)
    except ValueError:
        provider_id, _, model_id = model.partition("/")
        return bool(_declared(_entry(config, provider_id, model_id), "image"))
    return "image" in media_accepted(config, route)


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


def _declared(entry: Mapping[str, Any], name: str) -> bool | None:
    modalities = entry.get("modalities")
    if isinstance(modalities, Mapping) and isinstance(modalities.get("input"), list):
        return name in modalities["input"]
    attachment = entry.get("attachment")
    return attachment if isinstance(attachment, bool) else None
