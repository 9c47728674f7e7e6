"""Reasoning sent back as reasoning: where the provider requires it, and nowhere else.

DeepSeek's thinking mode wants every earlier assistant message of the conversation back with its
``reasoning_content`` (after a reasoning + tool-call step it answers 400 without it: "The
reasoning_content in the thinking mode must be passed back to the API"); Moonshot's Kimi thinking
models want it kept across tool calls. Other OpenAI-compatible providers reject an unknown message
field (Groq: "property 'reasoning_content' is unsupported", Mistral: 422) or ignore it, so it is
dropped for them. The session's view adds ``reasoning_content`` to the model's own assistant messages
only for these providers (``keeps_reasoning``); ``outgoing`` enforces the rule on whatever is sent,
on every path.
"""

from __future__ import annotations

from typing import Any

FIELD = "reasoning_content"
# Provider prefixes (litellm's, and OpenCode's provider ids) whose APIs take reasoning back.
KEEPS = frozenset({"deepseek", "moonshot", "moonshotai", "moonshotai-cn", "kimi-for-coding"})
# DeepSeek refuses an assistant message without it once thinking is on; the least it accepts.
FILLER = {"deepseek": " "}


def _prefix(model: str) -> str:
    return model.partition("/")[0] if "/" in model else ""


def keeps_reasoning(model: str | None) -> bool:
    """Whether requests to ``model`` ("provider/model", OpenCode's or litellm's) carry reasoning back."""
    return bool(model) and _prefix(model or "") in KEEPS


def outgoing(model: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as ``model``'s provider takes them: ``reasoning_content`` kept (and, for DeepSeek,
    filled in on assistant messages that have none) or removed. The same list when nothing changes."""
    prefix = _prefix(model)
    carrying = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and FIELD in m]
    if prefix not in KEEPS:
        if not carrying:
            return messages
        out = list(messages)
        for i in carrying:
            out[i] = {k: v for k, v in messages[i].items() if k != FIELD}
        return out
    filler = FILLER.get(prefix)
    # Thinking mode answers 400 "Missing `reasoning_content` field in the assistant message" once the
    # conversation has a tool-call turn, even when no step kept any reasoning (the model wrote none,
    # or another model's steps): every assistant message then gets at least the filler.
    tool_turns = any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages)
    if filler is None or not (carrying or tool_turns):
        return messages
    missing = [i for i, m in enumerate(messages) if m.get("role") == "assistant" and not m.get(FIELD)]
    if not missing:
        return messages
    out = list(messages)
    for i in missing:
        out[i] = {**messages[i], FIELD: filler}
    return out
