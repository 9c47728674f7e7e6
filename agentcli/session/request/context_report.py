"""``/context`` and ``agentcli context``: what fills the window, by category.

The next request is built exactly as the loop builds it (``SessionRuntime.build_request``) and each of its
chat messages is sized with the one estimator (chars/4 of its JSON) and put in a category. The gauge
shows the context figure (``figure``: the next request in the provider's tokens); the difference
between that and the estimate (the provider's tokenizer against chars/4) is its own row, so the rows
add up to the gauge.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from agentcli.llm.tokens import estimate_json, json_text, tokens_for_length, utf16_length
from agentcli.session.agents.subagent import open_subagents
from agentcli.session.request.figure import figure
from agentcli.session.request.history import completes_compaction, filter_compacted
from agentcli.session.request.view import (
    PRUNED_PLACEHOLDER,
    SUMMARY_MARKER_TEXT,
    is_reminder,
    message_to_chat,
)
from agentcli.session.runtime import SessionRuntime
from agentcli.session.toolset import offered_tools, tools_for
from agentcli.session.usage import last_request
from agentcli.store.records import AssistantMessage, ReasoningPart, ToolPart

CATEGORIES = (
    "system prompt",
    "tool schemas",
    "MCP tool schemas",
    "summaries",
    "user messages",
    "assistant text",
    "tool calls",
    "tool outputs",
    "pruned outputs",
    "reasoning",
)


@dataclass
class Delegated:
    """Tools a subagent is given that this window does not carry (its own MCP servers, tools its
    ``tools`` key turns on): their schemas cost the subagent's window only."""

    agent: str
    tools: int
    tokens: int
    waiting: list[str] = field(default_factory=list)  # its own MCP servers, not started until it runs


@dataclass
class ContextReport:
    rows: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0))
    summaries: list[int] = field(default_factory=list)  # tokens of each summary in the window, oldest first
    pruned_hidden: int = 0  # tokens the pruned outputs held before they were cleared
    gauge: int = 0  # the context figure (what the gauge shows; agentcli.session.request.figure)
    context: int = 0
    usable: int = 0  # where automatic compaction fires (0: unknown)
    window_source: str = ""  # who told the window when no config or map did (agentcli.session.window)
    auto: bool = True
    # The last request's input as the provider counted it: all of it, and what its prompt cache
    # served (read) or stored (written).
    request_input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    delegated: list[Delegated] = field(default_factory=list)

    @property
    def estimate(self) -> int:
        return sum(self.rows.values())

    @property
    def difference(self) -> int:
        """Gauge minus estimate: the provider tokenizer's difference and anything since the last request."""
        return self.gauge - self.estimate if self.gauge else 0

    @property
    def total(self) -> int:
        return self.gauge or self.estimate

    @property
    def reserved(self) -> int:
        return max(0, self.context - self.usable) if self.context and self.usable else 0


def _size(message: Any) -> int:
    return tokens_for_length(utf16_length(json_text(message)) + 1)  # +1: the comma between list items


def delegated(runtime: SessionRuntime, here: set[str]) -> list[Delegated]:
    """For each subagent this window's agent may hand tasks to: the tools only it is given."""
    out = []
    for agent in open_subagents(runtime):
        theirs = tools_for(runtime, agent, child=True, start=False)
        only = [tool.schema() for name, tool in theirs.items() if name not in here]
        waiting = sorted(agent.mcp) if agent.mcp and agent.name not in runtime.agent_hosts else []
        if only or waiting:
            out.append(Delegated(agent.name, len(only), estimate_json(only) if only else 0, waiting))
    return out


def report(runtime: SessionRuntime, session_id: str) -> ContextReport:
    from agentcli.session.window import session_window

    runtime.adopt_window(session_window(runtime.store, session_id, runtime.model))  # learned earlier
    window = filter_compacted(runtime.store.stream(session_id))
    out = ContextReport(
        gauge=figure(runtime.store, session_id).tokens,
        context=runtime.model.limits.context,
        window_source=runtime.model.window_source,
        usable=runtime.usable(),
        auto=bool(runtime.config.compaction.auto),
    )
    last = last_request(runtime.store.stream(session_id))
    if last is not None:
        out.cache_read, out.cache_write = last.cache.read, last.cache.write
        out.request_input = last.input + last.cache.read + last.cache.write
    runner = runtime.runner(threading.Event(), offered_tools(runtime))
    schemas = runner.schemas()  # in the order of runner.tools: MCP tools (they carry a server) apart
    mcp = [s for s, t in zip(schemas, runner.tools.values(), strict=True) if getattr(t, "server", None)]
    own = [s for s, t in zip(schemas, runner.tools.values(), strict=True) if not getattr(t, "server", None)]
    out.rows["tool schemas"] = estimate_json(own) if own else 0
    out.rows["MCP tool schemas"] = estimate_json(mcp) if mcp else 0
    out.delegated = delegated(runtime, set(runner.tools))
    built = runtime.build_request(session_id, window)
    summary_texts = {c.get("content") for m in window if completes_compaction(m) for c in message_to_chat(m)}
    for message in built.messages:
        role = message.get("role")
        size = _size(message)
        content = message.get("content")
        if role == "system" or is_reminder(message):  # plugins' reminders are system text sent last
            out.rows["system prompt"] += size
        elif role == "tool":
            out.rows["pruned outputs" if content == PRUNED_PLACEHOLDER else "tool outputs"] += size
        elif role == "user":
            out.rows["summaries" if content == SUMMARY_MARKER_TEXT else "user messages"] += size
        elif content in summary_texts:
            out.rows["summaries"] += size
            out.summaries.append(size)
        elif message.get("tool_calls"):
            calls = estimate_json(message["tool_calls"])
            out.rows["tool calls"] += min(size, calls)
            out.rows["assistant text"] += max(0, size - calls)
        else:
            out.rows["assistant text"] += size
    reasoning = 0
    for msg in window:
        if not isinstance(msg.info, AssistantMessage):
            continue
        for part in msg.parts:
            if isinstance(part, ToolPart) and part.state.status == "completed" and part.state.time.compacted:
                out.pruned_hidden += tokens_for_length(utf16_length(part.state.output))
            elif (
                isinstance(part, ReasoningPart)
                and part.text.strip()
                and (msg.info.model not in (None, runtime.model.name) or part.metadata.get("anthropic"))
            ):
                # Another model's reasoning is sent as text; the same model's only when the provider
                # sealed it (Anthropic's signed thinking goes back with its signature).
                reasoning += tokens_for_length(utf16_length(part.text))
    moved = min(reasoning, out.rows["assistant text"])
    out.rows["reasoning"] += moved
    out.rows["assistant text"] -= moved
    return out
