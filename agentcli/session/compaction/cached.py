"""The summary request that rides the prompt cache (``"compaction": {"request": "cache"}``, the default).

It is the session's next chat request exactly as the loop would send it — the same system prompt,
tools, messages and request parameters, so the same cache breakpoints — with the compaction
instruction appended as the last user message. Everything before the instruction is a byte-identical
prefix of the request sent just before (plus that step's answer), so the provider's cache serves it.

Tool calls: where the provider can forbid them without touching the cached prefix it is told to
(OpenAI's protocol: ``tool_choice: "none"``, which is not part of the prompt); Anthropic's
``tool_choice`` is, by its documentation, part of what its message cache is keyed on, so there the
instruction asks for no calls and a stray one is dropped (``StepPolicy.ignore_calls``).

The transcript request (``plan.build_summary_request``) stays the fallback: when the summarizer is
another model (no shared cache), when the window is too long to send (an overflow), and for the
smaller retries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from agentcli.llm.cache import CACHE_KEY_PREFIXES
from agentcli.llm.events import ChatRequest
from agentcli.session.compaction.plan import FOCUS_LINE, prompt
from agentcli.store.records import TextPart, ToolPart, WithParts

_QUOTE_CHARS = 160
_TAIL_LINE = (
    "The messages from the one that begins “{quote}” to the end stay in the context word for word "
    "after your summary, so spend your words on the older context that still matters for the work."
)
_MERGE_LINE = (
    "The conversation above begins with the summary written the last time it was shortened. Merge it "
    "with the rest of the conversation into one summary: keep what is still true, drop what the "
    "conversation has made stale, and add what is new."
)


def forbids_calls(litellm_model: str) -> bool:
    """Whether the summary request says ``tool_choice: "none"``: only on OpenAI's protocol, where it
    leaves the cached prompt alone (Anthropic's message cache is keyed on ``tool_choice``)."""
    prefix = litellm_model.partition("/")[0] if "/" in litellm_model else ""
    return prefix in CACHE_KEY_PREFIXES


def tail_quote(history: Sequence[WithParts], tail_start_id: str | None) -> str | None:
    """How the instruction names the first message kept verbatim: the start of its text (or its
    first tool call); None without a tail."""
    if tail_start_id is None:
        return None
    first = next((m for m in history if m.id == tail_start_id), None)
    if first is None:
        return None
    for part in first.parts:
        if isinstance(part, TextPart) and part.text.strip() and not part.ignored:
            line = " ".join(part.text.split())
            return line if len(line) <= _QUOTE_CHARS else f"{line[:_QUOTE_CHARS]}…"
        if isinstance(part, ToolPart):
            return f"[a call of the {part.tool} tool]"
    return None


def instruction(
    *,
    quote: str | None,
    previous: bool,
    hook: dict[str, Any],
    focus: str | None,
) -> str:
    """The last user message: the summarizer's rules and the template, worded as in the transcript
    request, with where the kept tail starts and (after an earlier compaction) the merge.
    ``hook``: ``session_compacting``'s output (its ``prompt`` replaces the template and makes its
    ``context`` moot, as in the transcript request)."""
    prompt_override: str | None = hook.get("prompt")
    plugin_context: Sequence[str] = list(hook.get("context") or [])
    sections = [prompt("compaction_cached.txt")]
    if quote:
        sections.append(_TAIL_LINE.format(quote=quote))
    if previous:
        sections.append(_MERGE_LINE)
    sections.append(prompt_override if prompt_override is not None else prompt("compaction_template.txt"))
    if focus and focus.strip():
        sections.append(FOCUS_LINE.format(focus=focus.strip()))
    if prompt_override is None:
        sections += [c for c in plugin_context if c.strip()]
    return "\n\n".join(sections)


def summary_request(
    base: ChatRequest, text: str, *, litellm_model: str, max_tokens: int | None
) -> ChatRequest:
    """``base`` (the next chat request, as the loop builds it) with ``text`` as its last user message."""
    messages: list[dict[str, Any]] = [*base.messages, {"role": "user", "content": text}]
    extra = dict(base.extra)
    if base.tools and forbids_calls(litellm_model):
        extra["tool_choice"] = "none"
    return dataclasses.replace(base, messages=messages, extra=extra, max_tokens=max_tokens or base.max_tokens)
