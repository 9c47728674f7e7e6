"""Which old tool outputs to hide from the model, without an LLM (reference §3.5 and §14).

``plan`` only decides; the caller stamps ``state.time.compacted`` on the listed parts and saves
them. Outputs stay stored: the history is rebuilt with a placeholder in their place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli.llm.tokens import estimate
from agentcli.store.records import AssistantMessage, ToolPart, WithParts

PRUNE_MINIMUM = 20_000  # not worth touching the history for less than this
PRUNE_PROTECT = 40_000  # the newest tool output kept visible, in estimated tokens
PROTECTED_TOOLS = frozenset({"skill"})  # loaded instructions the model keeps needing


@dataclass(frozen=True)
class PrunePlan:
    parts: list[ToolPart] = field(default_factory=list)
    tokens: int = 0  # estimated tokens the listed outputs free


def plan(messages_chronological: Sequence[WithParts]) -> PrunePlan:
    """Tool outputs older than the newest ``PRUNE_PROTECT`` tokens of them, outside the two newest
    user turns and after the last summary; nothing unless they add up to more than ``PRUNE_MINIMUM``."""
    turns = 0
    total = 0
    pruned = 0
    listed: list[ToolPart] = []
    for msg in reversed(messages_chronological):
        if msg.role == "user":
            turns += 1
        if turns < 2:
            continue
        if isinstance(msg.info, AssistantMessage) and msg.info.summary:
            break
        for part in reversed(msg.parts):
            if not isinstance(part, ToolPart) or part.state.status != "completed":
                continue
            if part.tool in PROTECTED_TOOLS:
                continue
            if part.state.time.compacted:
                # Everything older was handled by an earlier prune (OpenCode stops here too).
                return _result(listed, pruned)
            size = estimate(part.state.output)
            total += size
            if total > PRUNE_PROTECT:
                listed.append(part)
                pruned += size
    return _result(listed, pruned)


def _result(listed: list[ToolPart], pruned: int) -> PrunePlan:
    return PrunePlan(listed, pruned) if pruned > PRUNE_MINIMUM else PrunePlan()
