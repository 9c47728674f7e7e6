"""litellm's bundled model map (limits and prices), read as JSON without importing litellm.

litellm ships ``model_prices_and_context_window_backup.json`` inside its package and, with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` (which agentcli always sets), that file *is* its
``litellm.model_cost``. Finding the package with ``importlib.util.find_spec`` does not execute it, so
limits and the common prices cost a 20 ms JSON load instead of a multi-second import.

Prices: ``price`` reproduces ``litellm.cost_per_token`` for entries whose pricing is flat per token
(input, output, cache read, cache write; service-tier and modality rates do not apply to our requests).
For anything richer (long-context tiers past their threshold, per-request fees, off-peak tables) it
returns None and the caller asks litellm itself. tests/test_llm_modelmap.py checks the equality
over every chat model in the map.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

MAP_FILE = "model_prices_and_context_window_backup.json"

# Rates that never apply to a plain chat request as agentcli sends it (no service tier, text only).
_IGNORED_RATE = re.compile(
    r"_(batches|flex|priority|ultrafast|decisions|balanced)$"
    r"|audio|image|video|pixel|character|per_second|per_query|per_session|search|citation|dbu"
    r"|^cache_creation_input_token_cost_above_1hr$"
    r"|^output_cost_per_reasoning_token$"
    # DeepSeek's entries repeat their cache-read rate under this name; litellm's cost code never reads it.
    r"|^input_cost_per_token_cache_hit$"
)
_BASE_RATES = frozenset(
    {
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_read_input_token_cost",
        "cache_creation_input_token_cost",
    }
)
_THRESHOLD = re.compile(r"_above_(\d+)(k?)_tokens$")


@functools.cache
def _map_text() -> str:
    path = map_path()
    if path is None:
        return ""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return ""


@functools.cache
def _raw_map() -> dict[str, Any]:
    try:
        data = json.loads(_map_text() or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


@functools.cache
def model_map() -> dict[str, dict[str, Any]]:
    """The bundled map, name → entry (empty when litellm's package or its file cannot be found)."""
    # Model entries only: "sample_spec" documents the format, "fallback_generalizations" holds
    # litellm's name-matching rules (see ``generalized``).
    return {k: v for k, v in _raw_map().items() if isinstance(v, dict) and "litellm_provider" in v}


@functools.cache
def _rules() -> tuple[tuple[re.Pattern[str], dict[str, Any]], ...]:
    block = _raw_map().get("fallback_generalizations")
    rules = block.get("rules") if isinstance(block, dict) else None
    out = []
    for rule in rules if isinstance(rules, list) else ():
        info = rule.get("model_info") if isinstance(rule, dict) else None
        if not isinstance(info, dict) or not isinstance(rule.get("pattern"), str):
            continue
        try:
            out.append((re.compile(rule["pattern"], re.IGNORECASE), info))
        except re.error:
            continue
    return tuple(out)


def routed_provider(name: str) -> str | None:
    """The provider litellm infers for an unlisted bare name from its routing rules (the first that
    matches: e.g. a new ``claude-…`` id → "anthropic")."""
    for pattern, info in _rules():
        if set(info) == {"litellm_provider"} and pattern.search(name):
            return str(info["litellm_provider"])
    return None


def generalized(name: str) -> dict[str, Any]:
    """What litellm's capability rules say about a name its map does not list (limits, thinking
    style, …): every matching rule's ``model_info`` in file order, later ones winning; {} if none."""
    out: dict[str, Any] = {}
    for pattern, info in _rules():
        if "litellm_provider" not in info and pattern.search(name):
            out.update(info)
    return out


def map_path() -> Path | None:
    """Where the installed litellm keeps its model map (litellm itself is not imported)."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / MAP_FILE
        if candidate.is_file():
            return candidate
    return None


def entry(name: str) -> dict[str, Any] | None:
    """``model_map().get(name)``; before the whole map is needed, the one entry is read out of the
    file's text (a 3 MB JSON parse is most of a short ``run``'s own work)."""
    if not model_map.cache_info().currsize:
        sure, found = _entry_in_text(name)
        if sure:
            return found
    return model_map().get(name)


_TOP_KEY = "\n    {}: "  # how litellm writes the map: json.dumps(..., indent=4)
_DECODER = json.JSONDecoder()


@functools.cache
def _entry_in_text(name: str) -> tuple[bool, dict[str, Any] | None]:
    """(True, the entry for ``name``) found by its top-level key in the text; (False, None) when the
    text is not laid out as expected or holds the key twice: the parsed map decides then."""
    text = _map_text()
    if not text.startswith('{\n    "'):
        return False, None
    key = _TOP_KEY.format(json.dumps(name))
    at = text.find(key)
    if at < 0:
        return True, None
    if text.find(key, at + len(key)) >= 0:
        return False, None
    try:
        value, _ = _DECODER.raw_decode(text, at + len(key))
    except ValueError:
        return False, None
    return True, value if isinstance(value, dict) and "litellm_provider" in value else None


def candidates(model: str) -> list[str]:
    """The name as given, then without leading "provider/" segments ("openrouter/openai/gpt-4o" →
    "openai/gpt-4o" → "gpt-4o"), for gateways whose prefix the map does not list."""
    parts = model.strip().split("/")
    return ["/".join(parts[i:]) for i in range(len(parts)) if parts[i]]


def price(
    info: dict[str, Any],
    prompt_tokens: int,
    completion_tokens: int,
    cache_read: int = 0,
    cache_write: int = 0,
) -> float | None:
    """Dollars for one request under a flat per-token ``info``; None when the entry prices in a way
    only litellm knows (then ask ``litellm.cost_per_token``). ``prompt_tokens`` includes cached ones."""
    for key in info:
        if "cost" not in key and "pricing" not in key and "uplift" not in key:
            continue
        if key in _BASE_RATES or _IGNORED_RATE.search(key):
            continue
        threshold = _THRESHOLD.search(key)
        if threshold and prompt_tokens < int(threshold.group(1)) * (1000 if threshold.group(2) else 1):
            continue  # a long-context tier this request stays below
        return None
    input_rate = rate(info, "input_cost_per_token") or 0.0
    output_rate = rate(info, "output_cost_per_token") or 0.0
    read_rate = rate(info, "cache_read_input_token_cost")
    write_rate = rate(info, "cache_creation_input_token_cost")
    # An unpublished cache rate has provider-specific defaults in litellm (input rate, or a fraction).
    if (read_rate is None and cache_read) or (write_rate is None and cache_write):
        return None
    uncached = max(0, prompt_tokens - cache_read - cache_write)
    return (
        uncached * input_rate
        + cache_read * (read_rate or 0.0)
        + cache_write * (write_rate or 0.0)
        + max(0, completion_tokens) * output_rate
    )


def rate(info: dict[str, Any], key: str) -> float | None:
    """A per-token price from a map entry (None: not published)."""
    value = info.get(key)
    if value is None:
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
