"""Which old tool outputs to hide from the model, without an LLM (reference §3.5 and §14): the rules
live here only.

``plan`` decides over messages it is handed; ``prune`` applies the plan to a session after its
turn: it reads the store newest-first only as far as the rules look (to the last summary, or past
the two protected turns to the first output an earlier prune hid), stamps ``state.time.compacted``
on the listed parts and says so on the bus. Outputs stay stored: the history is rebuilt with a
placeholder in their place.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentcli.llm.tokens import estimate
from agentcli.session import events
from agentcli.store.records import AssistantMessage, ToolPart, WithParts

if TYPE_CHECKING:
    from agentcli.bus import Bus
    from agentcli.store.store import Store

PRUNE_MINIMUM = 20_000  # not worth touching the history for less than this
PRUNE_PROTECT = 40_000  # the newest tool output kept visible, in estimated tokens
PROTECTED_TOOLS = frozenset({"skill"})  # loaded instructions the model keeps needing


@dataclass(frozen=True)
class PrunePlan:
    parts: list[ToolPart] = field(default_factory=list)
    tokens: int = 0  # estimated tokens the listed outputs free


def prune(store: Store, bus: Bus, session_id: str) -> int:
    """Hide a session's old tool outputs after its turn. Returns the estimated tokens freed."""
    found = plan_newest_first(store.stream(session_id))
    if not found.parts:
        return 0
    store.mark_compacted(found.parts)
    bus.publish(events.Pruned(session_id, found.tokens, len(found.parts)))
    return found.tokens


def plan(messages_chronological: Sequence[WithParts]) -> PrunePlan:
    """``plan_newest_first`` over messages in model order."""
    return plan_newest_first(reversed(messages_chronological))


def plan_newest_first(newest_first: Iterable[WithParts]) -> PrunePlan:
    """Tool outputs older than the newest ``PRUNE_PROTECT`` tokens of them, outside the two newest
    user turns and after the last summary; nothing unless they add up to more than ``PRUNE_MINIMUM``.
    ``newest_first`` is consumed lazily and no further than these rules look, so the store can page it."""
    turns = 0
    total = 0
    pruned = 0
    listed: list[ToolPart] = []
    for msg in newest_first:
        if isinstance(msg.info, AssistantMessage) and msg.info.summary:
            break  # nothing older is in the window, even when the summary is a protected turn's
        if msg.role == "user":
            turns += 1
        if turns < 2:
            continue
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
