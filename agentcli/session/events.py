"""What the loop tells its listeners (UI, plugins) as a turn unfolds. Plain data over records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentcli.store.records import AssistantMessage, SessionInfo, ToolPart

# Events that OpenCode also has carry its name in ``name`` (what a plugin's ``event`` hook matches on).


@dataclass
class StepStarted:
    session_id: str
    message: AssistantMessage


@dataclass
class TextDelta:
    session_id: str
    part_id: str
    text: str  # the delta
    reasoning: bool = False


@dataclass
class TextEnded:
    session_id: str
    part_id: str
    text: str  # the whole text of the part
    reasoning: bool = False


@dataclass
class ToolUpdated:
    session_id: str
    part: ToolPart  # pending → running → completed | error
    name: str = field(default="message.part.updated")


@dataclass
class SubagentToolUpdated:
    """A tool call of a task's child session finished: shown under the task, not as the parent's own."""

    session_id: str  # the parent's
    agent: str
    child_id: str
    part: ToolPart


@dataclass
class PermissionRefused:
    session_id: str
    tool: str
    hint: str  # one line for the human: what was refused and how to allow it


@dataclass
class StepFinished:
    session_id: str
    message: AssistantMessage


@dataclass
class Retrying:
    session_id: str
    attempt: int
    delay: float
    error: str


@dataclass
class ErrorOccurred:
    session_id: str
    message: str
    kind: str = "unknown"
    name: str = field(default="session.error")


@dataclass
class Pruned:
    session_id: str
    tokens: int
    parts: int


@dataclass
class CompactionStarted:
    session_id: str
    auto: bool
    overflow: bool
    background: bool = False  # a summary written in the background is swapped in (no summary request now)

    def said(self) -> str:
        """The line a front end shows."""
        kind = "overflow" if self.overflow else ("auto" if self.auto else "manual")
        what = "summarising the conversation so far"
        if self.background:
            what = "the summary written in the background"
        return f"compacting ({kind})… {what}"


@dataclass
class CompactionFinished:
    """``name = "session.compacted"`` for plugins; ``fallback`` when made without a model; ``background``
    when the summary was written in the background and swapped in."""

    session_id: str
    auto: bool
    overflow: bool
    tokens_before: int
    tokens_after: int
    cost: float
    summary: str
    fallback: bool = False
    background: bool = False
    name: str = field(default="session.compacted")

    def how(self) -> str:
        """How it was made, as a front end says it after "compacted"."""
        return " without a model" if self.fallback else (" in the background" if self.background else "")


@dataclass
class CompactionFailed:
    session_id: str
    message: str


@dataclass
class CompactionSkipped:
    """A compaction asked for while another agent held the session was not made: that agent
    compacted it meanwhile (one compaction at a time per session)."""

    session_id: str
    message: str


@dataclass
class StepLimitReached:
    """The turn's last step: the model is asked to wrap up, without tools."""

    session_id: str
    max_steps: int


@dataclass
class InterruptedClosed:
    """Records an earlier, killed process left open were closed as interrupted (session/recovery.py)."""

    session_id: str
    messages: int
    tool_calls: int


@dataclass
class WindowLearned:
    """The provider told the model's window (an overflow error naming it, a prompt it was seen to cut):
    the session uses it from now on. ``line``: what the user is told."""

    session_id: str
    tokens: int
    line: str
    name: str = field(default="session.window")


@dataclass
class TurnFinished:
    """``session.idle``: the turn is over."""

    session_id: str
    message: AssistantMessage | None
    name: str = field(default="session.idle")


@dataclass
class SessionCreated:
    session_id: str
    info: SessionInfo
    name: str = field(default="session.created")


@dataclass
class SessionUpdated:
    session_id: str
    info: SessionInfo
    name: str = field(default="session.updated")


@dataclass
class SessionDeleted:
    session_id: str
    info: SessionInfo
    name: str = field(default="session.deleted")


@dataclass
class MessageUpdated:
    """A message as stored: a user message when written, an assistant message when a step finished
    (its tokens are the step's real usage, never a placeholder)."""

    session_id: str
    info: Any  # UserMessage | AssistantMessage
    name: str = field(default="message.updated")


@dataclass
class PartUpdated:
    """A text, reasoning or step part as stored (tool parts come as ``ToolUpdated``, same name)."""

    session_id: str
    part: Any
    name: str = field(default="message.part.updated")
