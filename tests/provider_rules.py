"""Strict validators of what the providers accept in a request's conversation, as their documentation
states it. Each returns the list of broken rules (empty: valid), so a fuzz run reports them all.

Used by the history fuzz (tests/test_history_fuzz.py, scripts/fuzz_history.py) on every request the
session sends; each rule has a test that it rejects a bad request and accepts a good one
(tests/test_provider_rules.py). They check the wire body, not agentcli's own records: what the
provider would answer 400 to.

``Expect`` carries what the fuzz knows the model produced (a tool call's reasoning, its thinking
signature), so a round trip can be checked byte for byte, not only by shape.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

Body = dict[str, Any]


@dataclass
class Expect:
    """What the model said with each tool call, as the fuzz scripted it (call id → text)."""

    reasoning: dict[str, str] = field(default_factory=dict)  # DeepSeek: the step's reasoning_content
    thinking: dict[str, tuple[str, str]] = field(default_factory=dict)  # Anthropic: (thinking, signature)
    redacted: dict[str, str] = field(default_factory=dict)  # Anthropic: the redacted_thinking data


# --- Anthropic Messages -------------------------------------------------------------------------
#
# https://platform.claude.com/docs/en/api/messages — "Our models are trained to operate on alternating
#   user and assistant conversational turns"; the first message is the user's; content may not be empty.
# https://platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use — "Tool result blocks
#   must immediately follow their corresponding tool use blocks in the message history"; "In the user
#   message containing tool results, the tool_result blocks must come FIRST in the content array";
#   the API answers 400 "tool_use ids were found without tool_result blocks immediately after" and
#   "unexpected tool_use_id found in tool_result blocks".
# https://platform.claude.com/docs/en/build-with-claude/extended-thinking#preserving-thinking-blocks —
#   "you must pass thinking blocks back to the API for the last assistant message", "complete and
#   unmodified" (the signature is verified); redacted_thinking blocks go back as they came. While a
#   tool-use loop goes on with thinking enabled the API answers 400 "a final `assistant` message must
#   start with a thinking block" (earlier turns' thinking is stripped, so its place there is free:
#   interleaved thinking puts it between tool calls).
# https://platform.claude.com/docs/en/build-with-claude/prompt-caching — "You can define up to 4 cache
#   breakpoints".

ANTHROPIC_MAX_BREAKPOINTS = 4


def anthropic(body: Body, expect: Expect | None = None) -> list[str]:
    errors: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["anthropic: no messages"]
    if messages[0].get("role") != "user":
        errors.append("anthropic: the first message is not the user's")
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("user", "assistant"):
            errors.append(f"anthropic: messages.{i} has role {role!r}")
        if i and role == messages[i - 1].get("role"):
            errors.append(f"anthropic: messages.{i} does not alternate ({role} after {role})")
        blocks = _blocks(msg.get("content"))
        if not blocks:
            errors.append(f"anthropic: messages.{i} has empty content")
        for j, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text") or "").strip():
                errors.append(f"anthropic: messages.{i}.content.{j} is an empty text block")
        if role == "assistant":
            errors += _anthropic_assistant(i, blocks, seen_ids, expect)
            following = messages[i + 1] if i + 1 < len(messages) else None
            errors += _anthropic_answered(i, blocks, following)
        elif role == "user":
            errors += _anthropic_results(i, blocks, messages[i - 1] if i else None)
    errors += _anthropic_tool_loop(body, messages, expect)
    last = _blocks(messages[-1].get("content"))
    if messages[-1].get("role") == "assistant" and any(b.get("type") == "tool_use" for b in last):
        errors.append("anthropic: the last message is an assistant tool_use with no result")
    breakpoints = _count_cache_control(body)
    if breakpoints > ANTHROPIC_MAX_BREAKPOINTS:
        errors.append(f"anthropic: {breakpoints} cache_control blocks (at most {ANTHROPIC_MAX_BREAKPOINTS})")
    return errors


def _anthropic_tool_loop(body: Body, messages: list[dict[str, Any]], expect: Expect | None) -> list[str]:
    """With thinking on, a request that continues a tool-use loop (it ends with tool results) must
    send that assistant turn starting with its thinking: "a final assistant message must start with a
    thinking block". Checked where the fuzz knows the turn had thinking (``expect``)."""
    thinking = body.get("thinking")
    if expect is None or not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return []
    last = _blocks(messages[-1].get("content"))
    if messages[-1].get("role") != "user" or not any(b.get("type") == "tool_result" for b in last):
        return []
    turn = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
    blocks = _blocks((turn or {}).get("content"))
    ids = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
    had_thinking = any(i in expect.thinking or i in expect.redacted for i in ids)
    if had_thinking and blocks[0].get("type") not in ("thinking", "redacted_thinking"):
        first = blocks[0].get("type")
        return [f"anthropic: the tool-use turn being continued starts with {first}, not its thinking"]
    return []


def _anthropic_answered(i: int, blocks: list[dict[str, Any]], following: dict[str, Any] | None) -> list[str]:
    """Every tool_use of the assistant turn ``i`` answered in the very next message."""
    if following is None:
        return []
    got = {b.get("tool_use_id") for b in _blocks(following.get("content")) if b.get("type") == "tool_result"}
    missing = [b.get("id") for b in blocks if b.get("type") == "tool_use" and b.get("id") not in got]
    return [f"anthropic: messages.{i} tool_use ids without a tool_result after: {missing}"] if missing else []


def _anthropic_results(i: int, blocks: list[dict[str, Any]], before: dict[str, Any] | None) -> list[str]:
    """The user turn ``i``'s tool_result blocks: first, once each, each for a tool_use just before."""
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if not results:
        return []
    errors = []
    asked = {b.get("id") for b in _blocks((before or {}).get("content")) if b.get("type") == "tool_use"}
    orphans = [r.get("tool_use_id") for r in results if r.get("tool_use_id") not in asked]
    if orphans:
        errors.append(f"anthropic: messages.{i} tool_result without its tool_use before: {orphans}")
    first_other = next((k for k, b in enumerate(blocks) if b.get("type") != "tool_result"), None)
    if first_other is not None and first_other < len(results):
        errors.append(f"anthropic: messages.{i} has content before its tool_result blocks")
    ids = [r.get("tool_use_id") for r in results]
    if len(set(ids)) != len(ids):
        errors.append(f"anthropic: messages.{i} answers a tool_use twice: {ids}")
    return errors


def _anthropic_assistant(
    i: int, blocks: list[dict[str, Any]], seen_ids: set[str], expect: Expect | None
) -> list[str]:
    errors: list[str] = []
    uses = [b for b in blocks if b.get("type") == "tool_use"]
    for use in uses:
        uid = str(use.get("id") or "")
        if not uid:
            errors.append(f"anthropic: messages.{i} has a tool_use without an id")
        elif uid in seen_ids:
            errors.append(f"anthropic: tool_use id {uid} is used twice")
        seen_ids.add(uid)
        if not isinstance(use.get("input"), dict):
            errors.append(f"anthropic: tool_use {uid} has input that is not an object")
    for block in blocks:
        if block.get("type") == "thinking" and not block.get("signature"):
            errors.append(f"anthropic: messages.{i} has a thinking block without its signature")
        if block.get("type") == "redacted_thinking" and not block.get("data"):
            errors.append(f"anthropic: messages.{i} has a redacted_thinking block without its data")
    if expect is None:
        return errors
    sent_thinking = [(b.get("thinking"), b.get("signature")) for b in blocks if b.get("type") == "thinking"]
    sent_redacted = [b.get("data") for b in blocks if b.get("type") == "redacted_thinking"]
    for use in uses:
        uid = str(use.get("id") or "")
        if uid in expect.thinking and expect.thinking[uid] not in sent_thinking:
            errors.append(f"anthropic: the thinking of tool_use {uid} was not sent back as is (signature)")
        if uid in expect.redacted and expect.redacted[uid] not in sent_redacted:
            errors.append(f"anthropic: the redacted_thinking of tool_use {uid} was not sent back")
    return errors


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _count_cache_control(node: Any) -> int:
    if isinstance(node, dict):
        own = 1 if isinstance(node.get("cache_control"), dict) else 0
        return own + sum(_count_cache_control(v) for k, v in node.items() if k != "cache_control")
    if isinstance(node, list):
        return sum(_count_cache_control(v) for v in node)
    return 0


# --- OpenAI chat completions --------------------------------------------------------------------
#
# https://platform.openai.com/docs/api-reference/chat/create — a tool message's ``tool_call_id`` is
#   "Tool call that this message is responding to"; the API answers 400 "An assistant message with
#   'tool_calls' must be followed by tool messages responding to each 'tool_call_id'" and "messages
#   with role 'tool' must be a response to a preceeding message with 'tool_calls'".
# https://platform.openai.com/docs/guides/function-calling — a call's ``arguments`` are a JSON string.


def openai(body: Body, expect: Expect | None = None) -> list[str]:
    errors: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return ["openai: no messages"]
    pending: dict[str, int] = {}  # call id → the assistant message that asked it, until answered
    answered: set[str] = set()
    seen_ids: set[str] = set()
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role not in ("system", "developer", "user", "assistant", "tool"):
            errors.append(f"openai: messages.{i} has role {role!r}")
        if role == "tool":
            cid = msg.get("tool_call_id")
            if cid not in pending:
                why = "answered twice" if cid in answered else "no assistant tool_calls asked it"
                errors.append(f"openai: messages.{i} is a tool message for {cid!r}: {why}")
            pending.pop(cid, None)
            answered.add(cid)
            if not isinstance(msg.get("content"), str | list):
                errors.append(f"openai: messages.{i} is a tool message without content")
            continue
        if pending:
            errors.append(f"openai: tool_calls {sorted(pending)} not answered before messages.{i} ({role})")
            pending.clear()
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if not calls and not msg.get("content"):  # "Required unless tool_calls ... is specified"
                errors.append(f"openai: messages.{i} is an assistant message with neither content nor calls")
            for call in calls:
                cid = call.get("id")
                if not cid:
                    errors.append(f"openai: messages.{i} has a tool call without an id")
                elif cid in seen_ids:
                    errors.append(f"openai: tool call id {cid} is used twice")
                seen_ids.add(cid)
                pending[cid] = i
                errors += _arguments(i, call)
    if pending:
        errors.append(f"openai: tool_calls {sorted(pending)} not answered at the end")
    return errors


def _arguments(i: int, call: dict[str, Any]) -> list[str]:
    arguments = (call.get("function") or {}).get("arguments")
    if not isinstance(arguments, str):
        return [f"openai: messages.{i} call {call.get('id')} has arguments that are not a string"]
    try:
        json.loads(arguments)
    except ValueError:
        return [f"openai: messages.{i} call {call.get('id')} has arguments that are not valid JSON"]
    return []


# --- DeepSeek (thinking mode, chat completions) -------------------------------------------------
#
# https://api-docs.deepseek.com/guides/thinking_mode — "Between two user messages, if the model
#   performed a tool call, the intermediate assistant's reasoning_content must participate in the
#   context concatenation and must be passed back to the API in all subsequent user interaction
#   turns"; "If your code does not correctly pass back reasoning_content, the API will return a 400
#   error." The rest of the request follows OpenAI's rules above.


def deepseek(body: Body, expect: Expect | None = None) -> list[str]:
    errors = [e.replace("openai:", "deepseek:", 1) for e in openai(body)]
    for i, msg in enumerate(body.get("messages") or []):
        if msg.get("role") != "assistant" or not msg.get("tool_calls"):
            continue
        reasoning = msg.get("reasoning_content")
        if not isinstance(reasoning, str):
            errors.append(f"deepseek: messages.{i} is a tool-call turn without its reasoning_content")
            continue
        for call in msg["tool_calls"]:
            want = expect.reasoning.get(call.get("id")) if expect else None
            if want is not None and reasoning != want:
                errors.append(f"deepseek: messages.{i} sends back reasoning that is not the model's own")
                break
    return errors


VALIDATORS = {"anthropic": anthropic, "openai": openai, "deepseek": deepseek}


def check(shape: str, body: Body, expect: Expect | None = None) -> list[str]:
    return VALIDATORS[shape](body, expect)


def first_errors(found: Iterable[str], n: int = 5) -> str:
    return "; ".join(list(found)[:n])
