"""Model limits and prices from litellm's bundled map, read as JSON (``modelmap``): litellm itself is
imported only to price a model whose pricing the flat per-token rule does not cover.

How litellm's fields map onto OpenCode's ``limit {context, input, output}``: litellm's
``max_input_tokens`` is usually the whole window (gpt-4o 128k, Claude 200k: input and output share
it), but for a few models it is a separate input cap (gpt-5: 272k of a 400k window). The map does not
say which, so we take ``context = max_input_tokens`` and leave ``input`` unknown (0). That never
overstates the room: on the few models with a separate cap we compact somewhat early (gpt-5: usable
272k - 32k instead of OpenCode's 272k - 20k), which is cheap; overstating it would make the provider
reject the request instead. ``output = max_output_tokens`` (or a legacy ``max_tokens`` that differs
from the input size). User config can always override these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcli.llm import modelmap
from agentcli.llm.lazy import get_litellm, loaded_litellm


@dataclass(frozen=True)
class ModelLimits:
    context: int = 0  # 0 = unknown
    input: int = 0
    output: int = 0


def lookup_limits(model: str, *, ask_litellm: bool = True) -> ModelLimits:
    """Limits of ``model`` (e.g. "gpt-4o", "anthropic/claude-sonnet-4-20250514"); all zeros if unknown.

    The JSON map first; a name it does not list is then put to litellm (which generalises unlisted
    Claude ids, for one), unless ``ask_litellm`` is False: the lean path never imports litellm for it
    and applies the map's generalisation rules itself.
    """
    for name in modelmap.candidates(model):
        info = modelmap.entry(name)
        if info is not None:
            limits = limits_from_info(info)
            if limits.context or limits.output:
                return limits
    if not ask_litellm:
        # litellm's own fallback for a name its map lacks (a dated Claude id, say): its capability rules.
        for name in modelmap.candidates(model):
            limits = limits_from_info(modelmap.generalized(name))
            if limits.context or limits.output:
                return limits
        return ModelLimits()
    for name in modelmap.candidates(model):
        info = _litellm_info(name)
        if info is not None:
            limits = limits_from_info(info)
            if limits.context or limits.output:
                return limits
    return ModelLimits()


def limits_from_info(info: dict[str, Any]) -> ModelLimits:
    """Map one entry of litellm's model map to ``ModelLimits`` (see the module docstring)."""
    max_input = _int(info.get("max_input_tokens"))
    max_output = _int(info.get("max_output_tokens"))
    legacy = _int(info.get("max_tokens"))
    if not max_output and legacy and legacy != max_input:
        max_output = legacy
    return ModelLimits(context=max_input, input=0, output=max_output)


def cost(
    model: str, prompt_tokens: int, completion_tokens: int, cache_read: int = 0, cache_write: int = 0
) -> float:
    """Dollars for one request, from litellm's price map; 0.0 when the model is unknown.

    ``prompt_tokens`` includes the cached ones (as litellm reports usage); litellm charges the cached
    part at the cache rates and applies long-context price tiers.
    """
    known = next((info for name in modelmap.candidates(model) if (info := modelmap.entry(name))), None)
    if known is not None:
        flat = modelmap.price(known, prompt_tokens, completion_tokens, cache_read, cache_write)
        if flat is not None:
            return flat
    elif loaded_litellm() is None:
        return 0.0  # unlisted, and litellm not needed so far: it would have no price either
    litellm = get_litellm()
    for name in modelmap.candidates(model):
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=name,
                prompt_tokens=max(0, prompt_tokens),
                completion_tokens=max(0, completion_tokens),
                cache_read_input_tokens=max(0, cache_read),
                cache_creation_input_tokens=max(0, cache_write),
            )
        except Exception:  # noqa: BLE001 - litellm raises for unmapped models; try the next spelling
            continue
        return float(prompt_cost) + float(completion_cost)
    return 0.0


def list_models(search: str | None = None) -> list[tuple[str, ModelLimits, str]]:
    """Chat models in litellm's map as ``(name, limits, provider)``, sorted, filtered by a substring."""
    needle = (search or "").lower()
    rows = []
    for name, info in modelmap.model_map().items():
        if info.get("mode") != "chat":
            continue
        if needle and needle not in name.lower():
            continue
        rows.append((name, limits_from_info(info), str(info.get("litellm_provider") or "")))
    return sorted(rows, key=lambda row: row[0])


def _litellm_info(name: str) -> dict[str, Any] | None:
    try:
        return dict(get_litellm().get_model_info(name))
    except Exception:  # noqa: BLE001 - "This model isn't mapped yet" and friends
        return None


def _int(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0
