"""Prompt-caching breakpoints: OpenCode's rule (``ProviderTransform.applyCaching``) for every path.

The first two system messages and the last two conversation messages each get one
``cache_control: {"type": "ephemeral"}``, on their last content block, never more than Anthropic's four
per request. Consecutive tool results count as one message, as in the AI SDK that OpenCode builds
on (a step's results are one ``tool`` message there). ``mark`` writes the breakpoints into
chat-completions messages where both litellm and the lean Anthropic path read them; the messages
given are never changed (the session's view reuses them from step to step).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # Anthropic rejects a request with more cache_control blocks


def breakpoints(roles: Sequence[str]) -> list[int]:
    """Indexes of the messages (by role) that get a breakpoint, ascending, at most four."""
    system = [i for i, role in enumerate(roles) if role == "system"][:2]
    # A run of tool messages is one message: its breakpoint goes on the run's last result.
    conversation = [
        i
        for i, role in enumerate(roles)
        if role != "system" and not (role == "tool" and i + 1 < len(roles) and roles[i + 1] == "tool")
    ]
    return sorted(set(system) | set(conversation[-2:]))[:MAX_BREAKPOINTS]


def mark(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the breakpoints set (copies of the marked messages; the others as they are).

    Breakpoints already in the messages count against the four; none is added past them.
    """
    out = list(messages)
    room = MAX_BREAKPOINTS - sum(_count(m) for m in messages)
    for index in breakpoints([str(m.get("role")) for m in messages]):
        if room <= 0:
            break
        marked = _marked(messages[index])
        if marked is not None:
            out[index] = marked
            room -= 1
    return out


def _marked(message: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of ``message`` with a breakpoint on its last block, or None when it has no block to mark
    or already carries one."""
    if _count(message):
        return None
    calls = message.get("tool_calls")
    if message.get("role") == "assistant" and calls:
        # The tool_use blocks come after the text: the last call is the message's last block.
        return {**message, "tool_calls": [*calls[:-1], {**calls[-1], "cache_control": dict(EPHEMERAL)}]}
    content = message.get("content")
    if isinstance(content, str) and content:
        return {**message, "cache_control": dict(EPHEMERAL)}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": dict(EPHEMERAL)}]}
    if message.get("role") == "tool":
        return {**message, "cache_control": dict(EPHEMERAL)}
    return None


def _count(message: dict[str, Any]) -> int:
    """Breakpoints a message already carries (on itself, its blocks or its tool calls)."""
    found = 1 if message.get("cache_control") else 0
    for key in ("content", "tool_calls"):
        items = message.get(key)
        if isinstance(items, list):
            found += sum(1 for item in items if isinstance(item, dict) and item.get("cache_control"))
    return found
