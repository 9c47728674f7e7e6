"""A stored session replayed as session updates (``session/load``): the user's words, the answers,
reasoning, every tool call in its final state, the plan, and where compactions happened. Turns the
user undid are left out (as the model no longer sees them); nothing else is, so a session compacted
ten times still shows its whole history."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acp import (
    image_block,
    resource_link_block,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message,
    update_user_message_text,
)

from agentcli.acp import tool_calls
from agentcli.acp.updates import notice
from agentcli.session.undo import UNDONE
from agentcli.store.records import (
    AssistantMessage,
    CompactionPart,
    FilePart,
    ReasoningPart,
    TextPart,
    ToolPart,
    WithParts,
)


def replay(messages: list[WithParts], directory: Path) -> Iterator[Any]:
    for msg in messages:
        info = msg.info
        if isinstance(info, AssistantMessage):
            if info.error is not None and info.error.name == UNDONE:
                continue
            yield from _assistant(msg, directory, summary=info.summary)
        else:
            yield from _user(msg)


def _user(msg: WithParts) -> Iterator[Any]:
    for part in msg.parts:
        if isinstance(part, TextPart) and part.text and not part.synthetic and not part.ignored:
            yield update_user_message_text(part.text)
        elif isinstance(part, FilePart):
            yield update_user_message(_file_block(part))
        elif isinstance(part, CompactionPart):
            yield notice(
                f"compaction ({'auto' if part.auto else 'manual'}): the history before is summarised"
            )


def _file_block(part: FilePart) -> Any:
    if part.url.startswith("data:") and part.mime.startswith("image/"):
        data = part.url.partition(",")[2]
        return image_block(data, part.mime)
    name = part.filename or (part.source.path if part.source else "") or "file"
    return resource_link_block(name, part.url, mime_type=part.mime)


def _assistant(msg: WithParts, directory: Path, *, summary: bool) -> Iterator[Any]:
    for part in msg.parts:
        if isinstance(part, ReasoningPart) and part.text:
            yield update_agent_thought_text(part.text)
        elif isinstance(part, TextPart) and part.text and not part.ignored:
            # A compaction's summary is shown as reasoning: context the model wrote for itself.
            yield (update_agent_thought_text if summary else update_agent_message_text)(part.text)
        elif isinstance(part, ToolPart):
            yield tool_calls.start(part, directory)
            if (plan := tool_calls.plan(part)) is not None:
                yield plan
