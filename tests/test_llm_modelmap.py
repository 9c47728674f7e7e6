"""Limits and prices read from litellm's bundled JSON map agree with litellm itself, without importing it."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.llm import modelmap
from agentcli.llm.lazy import get_litellm
from agentcli.llm.limits import ModelLimits, cost, limits_from_info, lookup_limits

ROOT = Path(__file__).resolve().parents[1]


def test_limits_and_prices_never_import_litellm() -> None:
    code = (
        "import sys, json\n"
        "from agentcli.llm import modelmap\n"
        "from agentcli.llm.limits import lookup_limits, cost, list_models\n"
        "got = [lookup_limits('openai/gpt-4o').context, cost('gpt-4o', 1000, 100) > 0,\n"
        "       cost('openai/test-model', 10, 10), cost('deepseek/deepseek-chat', 1000, 100, 500) > 0]\n"
        "parsed = modelmap._raw_map.cache_info().currsize\n"
        "print(json.dumps([*got, parsed, len(list_models('gpt-4o')) > 0, 'litellm' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # A model's limits and price are read without parsing the whole 3 MB map (listing models needs it).
    assert json.loads(out.stdout) == [128_000, True, 0.0, True, 0, True, False]


def test_an_entry_read_out_of_the_maps_text_is_the_parsed_maps() -> None:
    whole = modelmap._raw_map()
    names = list(whole)
    for name in [*names[:5], *names[::40], *names[-5:]]:
        value = whole[name]
        expected = value if isinstance(value, dict) and "litellm_provider" in value else None
        assert modelmap._entry_in_text(name) == (True, expected), name
    assert modelmap._entry_in_text("no-such-provider/no-such-model") == (True, None)
    assert modelmap._entry_in_text("gpt-4o") == (True, modelmap.model_map()["gpt-4o"])


def test_the_map_is_litellms_model_cost() -> None:
    litellm = get_litellm()
    ours = modelmap.model_map()
    assert len(ours) > 1000
    assert {
        k: v for k, v in litellm.model_cost.items() if isinstance(v, dict) and "litellm_provider" in v
    } == ours


def test_limits_match_litellms_model_info_for_every_chat_model() -> None:
    litellm = get_litellm()
    differing = []
    for name, info in modelmap.model_map().items():
        if info.get("mode") != "chat":
            continue
        try:
            theirs = limits_from_info(dict(litellm.get_model_info(name)))
        except Exception:  # noqa: BLE001 - litellm cannot resolve some names in its own map
            continue
        if (theirs.context or theirs.output) and lookup_limits(name) != theirs:
            differing.append(name)
    assert differing == []


def _every_way_of_pricing(per_shape: int = 2) -> dict[str, dict]:
    """Chat models, the first ``per_shape`` of each provider and set of price keys: every way the map
    prices a model, at a fifth of litellm's cost of pricing all 3,000."""
    chosen: dict[str, dict] = {}
    seen: dict[tuple, int] = {}
    for name, info in sorted(modelmap.model_map().items()):
        if info.get("mode") != "chat" or info.get("litellm_provider") == "github_copilot":
            continue  # litellm asks GitHub for a Copilot token before it prices those (5 s offline)
        keys = tuple(sorted(k for k in info if "cost" in k or "pricing" in k or "uplift" in k))
        shape = (info.get("litellm_provider"), keys)
        if seen.get(shape, 0) < per_shape:
            seen[shape] = seen.get(shape, 0) + 1
            chosen[name] = info
    assert len(seen) > 100  # the map still prices in many ways: the sample covers each
    return chosen


@pytest.mark.parametrize(
    "tokens", [(1000, 200, 0, 0), (5000, 10, 1000, 3000), (150_000, 500, 20_000, 0), (300_000, 1000, 0, 0)]
)
def test_flat_prices_equal_litellms_cost_per_token(tokens: tuple[int, int, int, int]) -> None:
    litellm = get_litellm()
    checked = 0
    for name, info in _every_way_of_pricing().items():
        ours = modelmap.price(info, *tokens)
        if ours is None:
            continue
        try:
            prompt, completion = litellm.cost_per_token(
                model=name,
                prompt_tokens=tokens[0],
                completion_tokens=tokens[1],
                cache_read_input_tokens=tokens[2],
                cache_creation_input_tokens=tokens[3],
            )
        except Exception:  # noqa: BLE001 - litellm cannot resolve some names in its own map
            continue
        assert math.isclose(ours, prompt + completion, rel_tol=1e-9, abs_tol=1e-15), name
        checked += 1
    assert checked > 50


def test_richer_pricing_is_left_to_litellm() -> None:
    # gpt-5 style long-context tiers: past the threshold only litellm knows the rate
    tiered = {
        "input_cost_per_token": 1e-6,
        "output_cost_per_token": 2e-6,
        "input_cost_per_token_above_272k_tokens": 2e-6,
    }
    assert modelmap.price(tiered, 1000, 10) == pytest.approx(1000 * 1e-6 + 10 * 2e-6)
    assert modelmap.price(tiered, 300_000, 10) is None
    assert modelmap.price({"input_cost_per_token": 1e-6}, 1000, 10, cache_read=100) is None
    # and cost() then asks litellm, which agrees with itself
    name = next(
        n
        for n, i in modelmap.model_map().items()
        if i.get("mode") == "chat"
        and "input_cost_per_token_above_200k_tokens" in i
        and n.startswith("gemini/")
    )
    p, c = get_litellm().cost_per_token(model=name, prompt_tokens=250_000, completion_tokens=100)
    assert cost(name, 250_000, 100) == pytest.approx(p + c)


def test_unknown_models_have_no_limits_and_no_price() -> None:
    assert lookup_limits("openai/test-model") == ModelLimits()
    assert lookup_limits("openai/test-model", ask_litellm=False) == ModelLimits()
    assert cost("openai/test-model", 1000, 1000) == 0.0
