"""A turn's bus events as ACP session updates (what ``cli/render.py`` draws on a terminal).

The answer streams as agent message chunks, reasoning as thought chunks (a compaction's summary
too: it is progress, not the answer); every tool call is announced once (``tool_call``) and then
updated (``tool_call_update``); a finished ``todowrite`` also sends the ``plan``. Retries, errors,
pruning and compaction are notices in the message stream, and each finished step, pruning and
compaction sends the context figures (``usage_update``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import update_agent_message_text, update_agent_thought_text
from acp.schema import UsageUpdate

from agentcli.acp import tool_calls
from agentcli.session import events
from agentcli.store.records import ToolPart
from agentcli.tools.base import PermissionRequest
from agentcli.ui.fmt import format_cost, format_tokens


def notice(line: str) -> Any:
    """A line of agentcli's own in the message stream, set apart from the model's words."""
    return update_agent_message_text(f"\n\n_{line}_\n\n")


@dataclass
class TurnUpdates:
    """Bus listener state for one session: call with an event, get the updates to send."""

    directory: Path
    usage: Callable[[], UsageUpdate | None]  # the session's context figures now
    summary: bool = False  # the step streaming now writes a compaction summary
    announced: set[str] = field(default_factory=set)  # tool call ids the client has seen
    calls: dict[str, ToolPart] = field(default_factory=dict)  # the latest state of each call, by id
    subagent_calls: dict[str, list[ToolPart]] = field(default_factory=dict)  # by running task's id
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, event: Any) -> list[Any]:
        with self.lock:
            return [u for u in self._updates(event) if u is not None]

    def new_turn(self) -> None:
        with self.lock:
            self.summary = False
            self.announced.clear()
            self.calls.clear()
            self.subagent_calls.clear()

    def asked_about(self, request: PermissionRequest) -> ToolPart | None:
        """The call a permission question is about: the one running (tools run one at a time), or
        for a repeated call (doom loop), the waiting call of that tool."""
        with self.lock:
            running = [p for p in self.calls.values() if p.state.status == "running"]
            if running and request.tool != "doom_loop":
                return running[-1]
            tool = request.metadata.get("tool")
            waiting = [p for p in self.calls.values() if p.state.status == "pending" and p.tool == tool]
            return waiting[0] if waiting else None

    def _updates(self, event: Any) -> list[Any]:
        if isinstance(event, events.StepStarted):
            self.summary = event.message.summary
            return []
        if isinstance(event, events.TextDelta):
            if self.summary or event.reasoning:
                return [update_agent_thought_text(event.text)]
            return [update_agent_message_text(event.text)]
        if isinstance(event, events.ToolUpdated):
            return self._tool(event.part)
        if isinstance(event, events.StepFinished):
            return [self.usage()]
        if isinstance(event, events.SubagentToolUpdated):
            return self._subagent(event.part)
        return self._notice(event)

    def _subagent(self, part: ToolPart) -> list[Any]:
        """A call a task's subagent finished: listed under the task while it runs (tools run one at
        a time, so the running task is the one)."""
        tasks = [p for p in self.calls.values() if p.tool == "task" and p.state.status == "running"]
        if not tasks:
            return []
        key = tool_calls.call_id(tasks[-1])
        done = self.subagent_calls.setdefault(key, [])
        done.append(part)
        return [tool_calls.subagent_progress(tasks[-1], done, self.directory)]

    def _tool(self, part: ToolPart) -> list[Any]:
        key = tool_calls.call_id(part)
        self.calls[key] = part
        if key not in self.announced:
            self.announced.add(key)
            return [tool_calls.start(part, self.directory), tool_calls.plan(part)]
        if part.state.status == "pending":
            return []  # its arguments still streaming: told once they are complete (running)
        if part.state.status in ("completed", "error"):
            self.calls.pop(key, None)
            self.subagent_calls.pop(key, None)
        return [tool_calls.progress(part, self.directory), tool_calls.plan(part)]

    def _notice(self, event: Any) -> list[Any]:
        if isinstance(event, events.Retrying):
            return [notice(f"retrying in {event.delay:.1f}s (attempt {event.attempt}): {event.error}")]
        if isinstance(event, events.ErrorOccurred):
            if self.summary:
                return []  # a failed summary is told by CompactionFailed
            label = "context overflow" if event.kind == "context_overflow" else "error"
            return [notice(f"{label}: {event.message}")]
        if isinstance(event, events.PermissionRefused):
            return [notice(f"permission: {event.hint}")]
        if isinstance(event, events.Pruned):
            line = f"pruned {format_tokens(event.tokens)} tokens of old tool output ({event.parts} results)"
            return [notice(line), self.usage()]
        if isinstance(event, events.CompactionStarted):
            return [notice(event.said())]
        if isinstance(event, events.CompactionFinished):
            self.summary = False
            how = event.how()
            before, after = format_tokens(event.tokens_before), format_tokens(event.tokens_after)
            line = f"compacted{how}: {before} → {after} tokens · summary cost {format_cost(event.cost)}"
            return [notice(line), self.usage()]
        if isinstance(event, events.CompactionFailed):
            self.summary = False
            return [notice(f"compaction: {event.message}")]
        if isinstance(event, events.StepLimitReached):
            return [notice(f"step limit reached ({event.max_steps} steps): asking the model to wrap up")]
        if isinstance(event, events.InterruptedClosed):
            return [notice(f"closed {event.tool_calls} tool call(s) an earlier agentcli process left open")]
        return []
