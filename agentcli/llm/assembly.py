"""How a stream's events become one answer: text and reasoning appended, tool calls joined.

``ToolCalls`` is the one rule for joining tool-call deltas, used by the session's processor (which
stores each call as a part as it streams) and by ``assemble`` (a whole answer at once: callers that do
not render as they go, and the recorded-stream tests). A delta continues the call open at its index,
unless it names another id: some providers reuse an index for the next call, and that delta starts a
new call there (before, the processor merged the two into one call with both arguments' JSON).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from agentcli.llm.events import (
    Event,
    Finish,
    ReasoningDelta,
    ReasoningSignature,
    RedactedReasoning,
    TextDelta,
    ToolCallDelta,
    Usage,
)

Call = TypeVar("Call")


class ToolCalls(Generic[Call]):
    """A step's tool calls, in the order they started; ``start`` makes a call from its first delta."""

    def __init__(self, start: Callable[[ToolCallDelta], Call]) -> None:
        self.start = start
        self.calls: list[Call] = []
        self._open: dict[int, tuple[str, Call]] = {}  # index → the id and call open there

    def add(self, event: ToolCallDelta) -> Call:
        """The call ``event`` belongs to (a new one when it starts one)."""
        held = self._open.get(event.index)
        if held is not None and not (event.id and held[0] and event.id != held[0]):
            if event.id and not held[0]:
                self._open[event.index] = (event.id, held[1])
            return held[1]
        call = self.start(event)
        self.calls.append(call)
        self._open[event.index] = (event.id or "", call)
        return call


@dataclass
class AssembledToolCall:
    id: str
    name: str
    arguments: str  # the raw JSON text as the model wrote it


@dataclass
class Assembled:
    text: str = ""
    reasoning: str = ""
    tool_calls: list[AssembledToolCall] = field(default_factory=list)
    finish: str | None = None
    usage: Usage | None = None
    signatures: list[str] = field(default_factory=list)  # each reasoning block's seal, in order
    redacted: list[str] = field(default_factory=list)  # encrypted reasoning blocks, in order


def _started(event: ToolCallDelta) -> AssembledToolCall:
    return AssembledToolCall(id=event.id or "", name=event.name or "", arguments="")


def assemble(events: Iterable[Event]) -> Assembled:
    """Consume events into the whole answer (for callers that do not render as they go)."""
    out = Assembled()
    calls = ToolCalls(_started)
    for event in events:
        if isinstance(event, TextDelta):
            out.text += event.text
        elif isinstance(event, ReasoningDelta):
            out.reasoning += event.text
        elif isinstance(event, ToolCallDelta):
            call = calls.add(event)
            call.id = call.id or event.id or ""
            call.name = call.name or event.name or ""
            call.arguments += event.arguments
        elif isinstance(event, Finish):
            out.finish = event.reason
        elif isinstance(event, Usage):
            out.usage = event
        elif isinstance(event, ReasoningSignature):
            out.signatures.append(event.signature)
        elif isinstance(event, RedactedReasoning):
            out.redacted.append(event.data)
    out.tool_calls = calls.calls
    return out
