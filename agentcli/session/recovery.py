"""Closing what a killed process left open.

A process killed in the middle of a turn (SIGKILL, a crash, a closed laptop) leaves tool parts
``pending``/``running`` and its assistant message unfinished. Before a session's next turn they are
closed as interrupted, the way a Ctrl-C closes them: the tool call becomes an error result
("interrupted") the model is shown, the message an aborted one.

Only the caller knows that no turn of the session is running any more. Today that is a new turn
starting in this process; with several agents on one session it is whoever holds the session's
lease — ``close_interrupted`` is the step such a lease guards.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentcli.session.processor import interrupted_state
from agentcli.store.records import (
    AssistantMessage,
    MessageError,
    ReasoningPart,
    TextPart,
    ToolPart,
    WithParts,
)
from agentcli.store.store import Store

PAGE = 8  # the walk usually ends at the newest step: read a few messages at a time, not a full page
INTERRUPTED_MESSAGE = "interrupted: the agentcli process stopped before this step finished"


@dataclass(frozen=True)
class Recovered:
    messages: int = 0  # assistant messages closed
    tool_calls: int = 0  # tool parts closed

    def __bool__(self) -> bool:
        return bool(self.messages or self.tool_calls)


def close_interrupted(store: Store, session_id: str) -> Recovered:
    """Close the open records of turns that are no longer running; see the module's note on when
    that is known. Reads newest-first and stops at the first assistant message that was closed
    properly: everything older was closed by its own turn or by an earlier recovery.

    Summaries are left to the compaction, which finishes or redoes an interrupted compaction."""
    messages = tool_calls = 0
    for msg in store.stream(session_id, page=PAGE):
        info = msg.info
        if not isinstance(info, AssistantMessage) or info.summary:
            continue
        open_parts = _close_parts(msg)
        for part in open_parts:
            store.put_part(part)
        tool_calls += sum(isinstance(p, ToolPart) for p in open_parts)
        if info.finish is None and info.error is None:  # a step ends with a finish reason or an error
            info.error = MessageError(name="MessageAbortedError", message=INTERRUPTED_MESSAGE)
            info.completed = _last_seen(msg)
            store.put_message(info)
            messages += 1
        elif not open_parts:
            break
    return Recovered(messages=messages, tool_calls=tool_calls)


def _close_parts(msg: WithParts) -> list[ToolPart | TextPart | ReasoningPart]:
    closed: list[ToolPart | TextPart | ReasoningPart] = []
    for part in msg.parts:
        if isinstance(part, ToolPart) and part.state.status in ("pending", "running"):
            # When the process died is unknown: the call ends where it started, not hours later.
            state = interrupted_state(part.state, aborted=True, end=part.state.time.start)
            closed.append(part.model_copy(update={"state": state}))
        elif isinstance(part, TextPart | ReasoningPart) and part.time is not None and part.time.end is None:
            closed.append(
                part.model_copy(update={"time": part.time.model_copy(update={"end": part.time.start})})
            )
    return closed


def _last_seen(msg: WithParts) -> int:
    """The newest time the dead process wrote down for this message."""
    times = [msg.info.created]
    for part in msg.parts:
        if isinstance(part, ToolPart):
            times += [t for t in (part.state.time.start, part.state.time.end) if t]
        elif isinstance(part, TextPart | ReasoningPart) and part.time is not None:
            times += [t for t in (part.time.start, part.time.end) if t]
    return max(times)
