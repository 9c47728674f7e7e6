"""Prompt-caching breakpoints: OpenCode's rule (``ProviderTransform.applyCaching``) for every path.

The first two system messages and the last two conversation messages each get one
``cache_control: {"type": "ephemeral"}``, on their last content block, never more than Anthropic's four
per request. Consecutive tool results count as one message, as in the AI SDK that OpenCode builds
on (a step's results are one ``tool`` message there). ``mark`` writes the breakpoints into
chat-completions messages where both litellm and the lean Anthropic path read them; the messages
given are never changed (the session's view reuses them from step to step).

``prepare`` applies the rule to a request bound for Claude on any path (``takes_breakpoints``):
Anthropic's own API, and Claude through Bedrock, Vertex, OpenRouter or an OpenAI-compatible gateway.
litellm turns the marks into each provider's form (Bedrock's ``cachePoint`` blocks, Anthropic's
``cache_control`` on Vertex); for OpenRouter they are written in the form litellm sends there (on
content blocks), so the lean path and litellm send the same body.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from agentcli.llm import modelmap
from agentcli.llm.events import ChatRequest

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # Anthropic rejects a request with more cache_control blocks
# litellm prefixes through which a Claude model takes breakpoints (litellm translates them, or the
# gateway at a custom base URL gets them as sent); "anthropic/" takes them whatever the model.
_CLAUDE_DOORS = frozenset({"bedrock", "vertex_ai", "vertex_ai_beta", "openrouter", "openai"})


# OpenAI's prompt_cache_key routes a session's requests to the same cache: sent by default where
# OpenAI's API (or a server speaking it at a custom base URL, which ignores what it does not know)
# serves the model. Never to a provider known to answer 400 to it — Groq ("property
# 'prompt_cache_key' is unsupported"), Gemini's OpenAI-compatible endpoint — by prefix or by host,
# nor to one that does not speak OpenAI's protocol (litellm would drop it; on Anthropic it would
# also take the request off the lean path).
CACHE_KEY_PREFIXES = frozenset({"openai", "azure"})
_NO_CACHE_KEY = frozenset(
    {"groq", "gemini", "vertex_ai", "vertex_ai_beta", "anthropic", "bedrock", "cohere", "cohere_chat"}
)
_REJECTING_HOSTS = ("api.groq.com", "generativelanguage.googleapis.com")
_OPENAI_BASE_ENV = ("OPENAI_BASE_URL", "OPENAI_API_BASE")


def sends_cache_key(
    model: str, api_base: str | None, setting: bool | None, env: Mapping[str, str] = os.environ
) -> bool:
    """Whether requests for this litellm model string carry ``prompt_cache_key``. ``setting`` is the
    provider's ``options.setCacheKey`` (OpenCode's name): False never, True for any provider but
    those known to reject it, None the default (OpenAI's protocol)."""
    prefix = model.partition("/")[0] if "/" in model else _provider_of_bare(model)
    if setting is False or prefix in _NO_CACHE_KEY:
        return False
    base = api_base
    if base is None and prefix == "openai":
        base = next((env[n] for n in _OPENAI_BASE_ENV if env.get(n)), None)
    host = (urlparse(base).hostname or "") if base else ""
    if any(host == h or host.endswith("." + h) for h in _REJECTING_HOSTS):
        return False
    return setting is True or prefix in CACHE_KEY_PREFIXES


def _provider_of_bare(model: str) -> str:
    """The provider litellm's map files a bare model name under ("gpt-4o" → "openai")."""
    info = modelmap.entry(model)
    return str(info.get("litellm_provider") or "") if info else ""


def takes_breakpoints(model: str) -> bool:
    """Whether requests for this litellm model string get breakpoints: Claude, on a door that
    accepts them (OpenCode marks any model whose id names Claude or Anthropic)."""
    prefix, _, rest = model.partition("/")
    if not rest:
        return "claude" in model.lower()  # a bare Claude id: litellm sends it to Anthropic
    if prefix == "anthropic":
        return True
    name = rest.lower()
    return prefix in _CLAUDE_DOORS and ("claude" in name or "anthropic" in name)


def prepare(req: ChatRequest) -> ChatRequest:
    """``req`` with the breakpoints its model takes (itself when it takes none)."""
    if not takes_breakpoints(req.model):
        return req
    messages = mark(req.messages)
    if req.model.startswith("openrouter/"):
        messages = [_on_content(m) for m in messages]
    return dataclasses.replace(req, messages=messages)


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


def _on_content(message: dict[str, Any]) -> dict[str, Any]:
    """A message-level breakpoint moved onto the message's last content block, where OpenRouter
    reads it (litellm's ``OpenrouterConfig._move_cache_control_to_content`` does the same)."""
    if "cache_control" not in message:
        return message
    out = dict(message)
    control = out.pop("cache_control")
    content = out.get("content")
    if isinstance(content, list):
        if content:
            out["content"] = [*content[:-1], {**content[-1], "cache_control": control}]
    else:
        out["content"] = [{"type": "text", "text": content, "cache_control": control}]
    return out


def _count(message: dict[str, Any]) -> int:
    """Breakpoints a message already carries (on itself, its blocks or its tool calls)."""
    found = 1 if message.get("cache_control") else 0
    for key in ("content", "tool_calls"):
        items = message.get(key)
        if isinstance(items, list):
            found += sum(1 for item in items if isinstance(item, dict) and item.get("cache_control"))
    return found
