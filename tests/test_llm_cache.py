"""Prompt-caching breakpoints follow OpenCode's rule (first two system messages, last two conversation
messages, never more than Anthropic's four), and reach Anthropic's request on the lean path."""

from __future__ import annotations

import copy
import json
from typing import Any

from agentcli.llm import anthropic, cache
from agentcli.llm.events import ChatRequest

EPHEMERAL = {"type": "ephemeral"}


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "header"},
        {"role": "system", "content": "instructions"},
        {"role": "system", "content": "third block"},
    ]
    for n in range(turns):
        messages += [
            {"role": "user", "content": f"question {n}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": f"c{n}a", "type": "function", "function": {"name": "read", "arguments": "{}"}},
                    {"id": f"c{n}b", "type": "function", "function": {"name": "glob", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": f"c{n}a", "content": "file"},
            {"role": "tool", "tool_call_id": f"c{n}b", "content": "a.py"},
        ]
    return messages


def test_breakpoints_go_on_the_first_two_system_and_the_last_two_messages() -> None:
    roles = ["system", "system", "system", "user", "assistant", "tool", "tool", "user"]
    assert cache.breakpoints(roles) == [0, 1, 6, 7]
    # A step's tool results are one message (as in the AI SDK): the mark goes on the last of them,
    # and the assistant message that called the tools is the other one.
    assert cache.breakpoints(roles[:7]) == [0, 1, 4, 6]
    assert cache.breakpoints(["user"]) == [0]
    assert cache.breakpoints([]) == []


def test_marks_land_on_each_messages_last_block_without_touching_the_input() -> None:
    messages = _history(2) + [
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "text", "text": "!"}]}
    ]
    before = copy.deepcopy(messages)
    marked = cache.mark(messages)
    assert messages == before  # the view reuses its messages from step to step
    assert marked[0]["cache_control"] == EPHEMERAL and marked[1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in marked[2]
    assert marked[-2]["cache_control"] == EPHEMERAL  # the last tool result of the step
    assert marked[-1]["content"][-1]["cache_control"] == EPHEMERAL
    assert "cache_control" not in marked[-1]["content"][0]
    calls_only = cache.mark(_history(1)[:5])
    assert calls_only[-1]["tool_calls"][-1]["cache_control"] == EPHEMERAL  # the call is the last block
    assert "cache_control" not in calls_only[-1]["tool_calls"][0]


def test_never_more_than_four_breakpoints_counting_those_already_set() -> None:
    messages = _history(3)
    messages[4] = {**messages[4], "cache_control": EPHEMERAL}  # one a plugin set
    marked = cache.mark(messages)
    assert json.dumps(marked).count('"cache_control"') == 4
    assert cache.mark(marked) == marked  # marking twice changes nothing


def test_anthropic_requests_on_the_lean_path_carry_the_breakpoints() -> None:
    for turns in (0, 1, 5, 30):
        req = ChatRequest(
            model="anthropic/claude-sonnet-4-5",
            messages=_history(turns) + [{"role": "user", "content": "go"}],
        )
        target = anthropic.endpoint(req, {"ANTHROPIC_API_KEY": "k"})
        assert target is not None
        body = target.body
        assert json.dumps(body).count('"cache_control"') <= cache.MAX_BREAKPOINTS
        assert [b.get("cache_control") for b in body["system"]] == [EPHEMERAL, EPHEMERAL, None]
        last = body["messages"][-1]["content"][-1]
        assert last["cache_control"] == EPHEMERAL
        if turns:  # the newest tool results (merged into the last user turn) are marked too
            assert body["messages"][-1]["content"][-2]["cache_control"] == EPHEMERAL
