"""Model limits and prices from litellm's bundled map."""

from __future__ import annotations

import pytest

from agentcli.llm.lazy import get_litellm
from agentcli.llm.limits import ModelLimits, cost, limits_from_info, list_models, lookup_limits


@pytest.mark.parametrize(
    ("model", "limits"),
    [
        ("gpt-4o", ModelLimits(context=128_000, input=0, output=16_384)),
        ("openai/gpt-4o", ModelLimits(context=128_000, input=0, output=16_384)),
        ("claude-sonnet-4-20250514", ModelLimits(context=200_000, input=0, output=64_000)),
        ("anthropic/claude-sonnet-4-20250514", ModelLimits(context=200_000, input=0, output=64_000)),
    ],
)
def test_known_models(model: str, limits: ModelLimits) -> None:
    assert lookup_limits(model) == limits


def test_gateway_prefix_falls_back_to_the_bare_name() -> None:
    assert lookup_limits("mygateway/gpt-4o") == lookup_limits("gpt-4o")


@pytest.mark.parametrize("model", ["openai/test-model", "nosuchmodel", "", "///"])
def test_unknown_model_is_all_zeros(model: str) -> None:
    assert lookup_limits(model) == ModelLimits(0, 0, 0)


def test_mapping_rules() -> None:
    # max_input is taken as the window; a legacy max_tokens counts as output only when it differs
    assert limits_from_info({"max_input_tokens": 272000, "max_output_tokens": 128000}) == ModelLimits(
        272000, 0, 128000
    )
    assert limits_from_info({"max_input_tokens": 8192, "max_tokens": 8192}) == ModelLimits(8192, 0, 0)
    assert limits_from_info({"max_input_tokens": 32000, "max_tokens": 4096}) == ModelLimits(32000, 0, 4096)
    assert limits_from_info({"max_input_tokens": None, "max_output_tokens": "x"}) == ModelLimits(0, 0, 0)


def test_cost_uses_the_price_map_with_cache_rates() -> None:
    prices = get_litellm().model_cost["gpt-4o"]
    expected = (
        500_000 * prices["input_cost_per_token"]
        + 500_000 * prices["cache_read_input_token_cost"]
        + 1_000_000 * prices["output_cost_per_token"]
    )
    assert cost("gpt-4o", 1_000_000, 1_000_000, cache_read=500_000) == pytest.approx(expected)
    assert cost("gpt-4o", 0, 0) == 0.0


def test_cost_of_unknown_model_is_zero() -> None:
    assert cost("openai/test-model", 1000, 1000) == 0.0
    assert cost("nosuchmodel", 1000, 1000, 10, 10) == 0.0


def test_list_models() -> None:
    rows = list_models("gpt-4o")
    names = [name for name, _, _ in rows]
    assert names == sorted(names) and "gpt-4o" in names
    assert all("gpt-4o" in name.lower() for name in names)
    assert dict((n, (lim, prov)) for n, lim, prov in rows)["gpt-4o"] == (lookup_limits("gpt-4o"), "openai")
    everything = list_models()
    assert len(everything) > 1000
    assert not any("embedding" in name for name, _, _ in list_models("text-embedding"))  # chat models only
    assert list_models("no-such-model-anywhere") == []
