"""The providers' request rules (tests/provider_rules.py) reject what the provider would answer 400 to
and accept what it takes: one bad and one good request per rule."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests import provider_rules as rules
from tests.provider_rules import Expect

USE = {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"filePath": "a"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "text"}
THINK = {"type": "thinking", "thinking": "look first", "signature": "sig-1"}


def _anthropic(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "claude", "messages": list(messages)}


GOOD_ANTHROPIC = _anthropic(
    {"role": "user", "content": "read a"},
    {"role": "assistant", "content": [THINK, {"type": "text", "text": "reading"}, USE]},
    {"role": "user", "content": [RESULT, {"type": "text", "text": "and then?"}]},
)


def _bad(body: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(body)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


_DELETE = object()


def test_a_well_formed_anthropic_request_passes() -> None:
    expect = Expect(thinking={"toolu_1": ("look first", "sig-1")})
    assert rules.anthropic(GOOD_ANTHROPIC, expect) == []


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (("messages", 0, "role"), "assistant", "first message"),
        (("messages", 2, "role"), "assistant", "alternate"),
        (("messages", 2, "content", 0, "tool_use_id"), "toolu_9", "without a tool_result"),
        (("messages", 2, "content"), [{"type": "text", "text": "x"}, RESULT], "before its tool_result"),
        (("messages", 1, "content", 0, "signature"), "", "without its signature"),
        (("messages", 0, "content"), "", "empty text block"),
        (("messages", 0, "content"), [], "empty content"),
        (("messages", 1, "content", 2, "input"), '{"filePath": "a"}', "not an object"),
    ],
)
def test_anthropic_rejects(path: tuple[Any, ...], value: Any, said: str) -> None:
    errors = rules.anthropic(_bad(GOOD_ANTHROPIC, path, value))
    assert any(said in e for e in errors), errors


def test_anthropic_rejects_a_tool_result_whose_tool_use_is_gone() -> None:
    body = _anthropic(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [RESULT]},
    )
    assert any("without its tool_use" in e for e in rules.anthropic(body))


def test_anthropic_rejects_a_tool_use_id_used_twice() -> None:
    body = copy.deepcopy(GOOD_ANTHROPIC)
    body["messages"] += [
        {"role": "assistant", "content": [USE]},
        {"role": "user", "content": [RESULT]},
    ]
    assert any("used twice" in e for e in rules.anthropic(body))


def test_anthropic_rejects_a_trailing_tool_use() -> None:
    body = _anthropic({"role": "user", "content": "hi"}, {"role": "assistant", "content": [USE]})
    assert any("no result" in e for e in rules.anthropic(body))


def test_anthropic_rejects_thinking_not_sent_back_as_it_came() -> None:
    expect = Expect(thinking={"toolu_1": ("look first", "sig-1")})
    dropped = _bad(GOOD_ANTHROPIC, ("messages", 1, "content"), [USE])
    altered = _bad(GOOD_ANTHROPIC, ("messages", 1, "content", 0, "thinking"), "looked")
    for body in (dropped, altered):
        assert any("not sent back as is" in e for e in rules.anthropic(body, expect))


def test_anthropic_rejects_a_continued_tool_loop_whose_turn_does_not_start_with_its_thinking() -> None:
    expect = Expect(thinking={"toolu_1": ("look first", "sig-1")})
    body = copy.deepcopy(GOOD_ANTHROPIC)
    body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    body["messages"][2]["content"] = [RESULT]  # the loop goes on: the request ends with the result
    assert rules.anthropic(body, expect) == []
    body["messages"][1]["content"] = [{"type": "text", "text": "summary"}, THINK, USE]
    errors = rules.anthropic(body, expect)
    assert any("starts with text, not its thinking" in e for e in errors), errors
    body["messages"][2]["content"] = [RESULT, {"type": "text", "text": "next question"}]
    del body["thinking"]  # thinking off: no such rule
    assert rules.anthropic(body, expect) == []


def test_anthropic_rejects_redacted_thinking_dropped_and_accepts_it_kept() -> None:
    expect = Expect(redacted={"toolu_1": "EmwK"})
    kept = _bad(GOOD_ANTHROPIC, ("messages", 1, "content", 0), {"type": "redacted_thinking", "data": "EmwK"})
    assert rules.anthropic(kept, expect) == []
    assert any("redacted_thinking" in e for e in rules.anthropic(GOOD_ANTHROPIC, expect))


def test_anthropic_counts_cache_breakpoints_everywhere() -> None:
    mark = {"type": "ephemeral"}
    body = copy.deepcopy(GOOD_ANTHROPIC)
    body["system"] = [{"type": "text", "text": f"s{i}", "cache_control": mark} for i in range(2)]
    body["tools"] = [{"name": "read", "input_schema": {}, "cache_control": mark}]
    body["messages"][0]["content"] = [{"type": "text", "text": "read a", "cache_control": mark}]
    assert rules.anthropic(body) == []
    body["messages"][2]["content"][1]["cache_control"] = mark
    assert any("5 cache_control" in e for e in rules.anthropic(body))


CALL = {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"filePath": "a"}'}}
GOOD_OPENAI = {
    "messages": [
        {"role": "system", "content": "you are"},
        {"role": "user", "content": "read a"},
        {"role": "assistant", "content": None, "reasoning_content": "look", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "text"},
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": "thanks"},
    ]
}


@pytest.mark.parametrize("shape", ["openai", "deepseek"])
def test_a_well_formed_chat_completions_request_passes(shape: str) -> None:
    assert rules.check(shape, GOOD_OPENAI, Expect(reasoning={"call_1": "look"})) == []


@pytest.mark.parametrize(
    ("path", "value", "said"),
    [
        (("messages", 3, "tool_call_id"), "call_9", "not answered"),
        (("messages", 3, "tool_call_id"), "call_9", "no assistant tool_calls asked it"),
        (("messages", 2, "tool_calls", 0, "function", "arguments"), '{"filePath": ', "not valid JSON"),
        (("messages", 2, "tool_calls", 0, "function", "arguments"), {"filePath": "a"}, "not a string"),
        (("messages", 2, "tool_calls", 0, "id"), "", "without an id"),
        (("messages", 4, "content"), None, "neither content nor calls"),
    ],
)
@pytest.mark.parametrize("shape", ["openai", "deepseek"])
def test_chat_completions_rejects(shape: str, path: tuple[Any, ...], value: Any, said: str) -> None:
    errors = rules.check(shape, _bad(GOOD_OPENAI, path, value))
    assert any(said in e and e.startswith(shape) for e in errors), errors


def test_openai_rejects_a_tool_message_after_the_next_user_message() -> None:
    body = copy.deepcopy(GOOD_OPENAI)
    messages = body["messages"]
    messages[3], messages[4] = {"role": "user", "content": "wait"}, messages[3]
    errors = rules.openai(body)
    assert any("not answered before messages.3" in e for e in errors), errors


def test_openai_rejects_a_call_id_used_twice() -> None:
    body = copy.deepcopy(GOOD_OPENAI)
    body["messages"] += [
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "again"},
    ]
    assert any("used twice" in e for e in rules.openai(body))


def test_deepseek_rejects_a_tool_call_turn_without_its_reasoning() -> None:
    body = _bad(GOOD_OPENAI, ("messages", 2, "reasoning_content"), _DELETE)
    assert rules.openai(body) == []  # OpenAI takes it
    assert any("without its reasoning_content" in e for e in rules.deepseek(body))


def test_deepseek_rejects_reasoning_that_is_not_the_models_own() -> None:
    expect = Expect(reasoning={"call_1": "look"})
    body = _bad(GOOD_OPENAI, ("messages", 2, "reasoning_content"), " ")
    assert any("not the model's own" in e for e in rules.deepseek(body, expect))
    assert rules.deepseek(body) == []  # a filler is what DeepSeek takes when the reasoning is unknown
