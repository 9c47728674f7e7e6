"""The shape of a session archive (agentcli's own JSON export) and the session totals an import
recomputes from its messages: what ``archive`` (export, import) and ``opencode_import`` (OpenCode's
export converted) both build on."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentcli.store.records import AssistantMessage, SessionInfo, StepFinishPart, Tokens, WithParts

FORMAT: Final = "agentcli.session"
VERSION = 1


class ArchiveError(ValueError):
    """An import file that is neither an agentcli nor an OpenCode export, or cannot be used."""


class SessionArchive(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: Literal["agentcli.session"] = FORMAT
    version: int = VERSION
    info: SessionInfo
    messages: list[WithParts] = Field(default_factory=list)
    todos: list[dict[str, Any]] = Field(default_factory=list)


def totals(info: SessionInfo, messages: list[WithParts]) -> SessionInfo:
    """Session totals recomputed from the messages (for imports that do not carry ours)."""
    tokens = Tokens()
    cost = 0.0
    context = 0
    compactions = 0
    for msg in messages:
        if not isinstance(msg.info, AssistantMessage):
            continue
        steps = [p for p in msg.parts if isinstance(p, StepFinishPart)]
        for step in steps:
            tokens = tokens.add(step.tokens)
        if not steps:
            tokens = tokens.add(msg.info.tokens)
        cost += msg.info.cost
        if msg.info.summary and msg.info.finish and msg.info.error is None:
            compactions += 1
        elif msg.info.finish and msg.info.tokens.count():
            context = msg.info.tokens.count()
    return info.model_copy(
        update={
            "tokens": tokens,
            "cost": cost,
            "messages": len(messages),
            "context_tokens": context,
            "compactions": compactions,
        }
    )
