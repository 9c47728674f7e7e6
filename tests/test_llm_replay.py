"""Reasoning sent back where the provider requires it (agentcli.llm.replay), on the messages alone."""

from __future__ import annotations

from typing import Any

from agentcli.llm.replay import outgoing

CALL = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}


def test_deepseek_tool_call_turns_carry_reasoning_even_when_no_step_kept_any() -> None:
    """Found by the history fuzz: a DeepSeek session whose tool-call steps had no reasoning went out
    without the field, which thinking mode answers with a 400 ("Missing `reasoning_content` field")."""
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "text"},
        {"role": "assistant", "content": "done"},
    ]
    sent = outgoing("deepseek/deepseek-v4-flash", history)
    assert [m.get("reasoning_content") for m in sent] == [None, " ", None, " "]
    assert "reasoning_content" not in history[1]  # the caller's messages are not changed


def test_a_conversation_without_tool_calls_or_reasoning_goes_to_deepseek_unchanged() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert outgoing("deepseek/deepseek-v4-flash", history) is history
