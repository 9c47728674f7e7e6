"""Which variable a provider needs, known before the first request."""

from __future__ import annotations

import pytest

from agentcli.llm.keys import key_message, missing_key, missing_key_thorough
from agentcli.llm.route import resolve


@pytest.mark.parametrize(
    ("model", "env", "missing"),
    [
        ("openai/gpt-4o", {}, ["OPENAI_API_KEY"]),
        ("openai/gpt-4o", {"OPENAI_API_KEY": "sk-x"}, None),
        ("google/gemini-2.5-pro", {"GOOGLE_API_KEY": "g"}, None),  # either of litellm's names will do
        ("anthropic/claude-sonnet-4-20250514", {}, ["ANTHROPIC_API_KEY"]),
        ("ollama/llama3", {}, None),  # local: no key
    ],
)
def test_the_table_knows_the_common_providers_without_litellm(
    model: str, env: dict[str, str], missing: list[str] | None
) -> None:
    assert missing_key(resolve(model, {}, None, env), env) == missing


def test_a_base_url_or_a_configured_key_needs_no_variable() -> None:
    assert missing_key(resolve("openai/local", {}, "http://127.0.0.1:1/v1"), {}) is None
    providers = {"p": {"npm": "@ai-sdk/openai", "options": {"apiKey": "k"}, "models": {"m": {}}}}
    assert missing_key(resolve("p/m", providers, None, {}), {}) is None


def test_other_providers_ask_litellm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("REPLICATE_API_KEY", raising=False)
    assert missing_key_thorough(resolve("replicate/meta/llama-3", {})) == ["REPLICATE_API_KEY"]
    monkeypatch.setenv("REPLICATE_API_KEY", "r")
    assert missing_key_thorough(resolve("replicate/meta/llama-3", {})) is None


def test_the_message_names_the_variable_and_the_demo() -> None:
    line = key_message("openai/gpt-4o", ["OPENAI_API_KEY"])
    assert "OPENAI_API_KEY" in line and "agentcli demo" in line and "\n" not in line
