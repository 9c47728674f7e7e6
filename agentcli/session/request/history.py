"""Which records make up a session's window, rebuilt from the records for every request.

Pure functions over ``WithParts`` lists: the window since the last completed compaction
(``filter_compacted``) and the newest messages by id (``latest``). What the model sees of the
window, and its size, is ``agentcli.session.request.view``. No database, no litellm.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agentcli.store.compactions import completes_compaction
from agentcli.store.records import AssistantMessage, CompactionPart, WithParts

INTERRUPTED_TEXT = "[Tool execution was interrupted]"


# --- the window ---------------------------------------------------------------------------


def filter_compacted(newest_first: Iterable[WithParts]) -> list[WithParts]:
    """The messages since the last completed compaction, in model order.

    ``newest_first`` is consumed lazily and no further than the cut-off, so the store can page it.
    With a kept tail the order is [marker, summary, tail..., newer...]; see reference §4.1."""
    result: list[WithParts] = []
    completed: set[str] = set()
    retain: str | None = None
    for msg in newest_first:
        result.append(msg)
        if retain is not None:
            if msg.id == retain:
                break
            continue
        if msg.role == "user" and msg.id in completed:
            part = msg.compaction()
            if part is None:
                continue
            if part.tail_start_id is None:
                break
            retain = part.tail_start_id
            if retain == msg.id:
                break
            continue
        if completes_compaction(msg):
            completed.add(msg.info.parent_id)  # type: ignore[union-attr]
    result.reverse()
    return _summary_before_tail(result)


def _summary_before_tail(msgs: list[WithParts]) -> list[WithParts]:
    """Move the newest marker/summary pair that keeps a tail in front of that tail."""
    marker_index = next(
        (
            i
            for i in range(len(msgs) - 1, -1, -1)
            if msgs[i].role == "user" and (p := msgs[i].compaction()) is not None and p.tail_start_id
        ),
        None,
    )
    if marker_index is None:
        return msgs
    marker = msgs[marker_index]
    tail_start_id = marker.compaction().tail_start_id  # type: ignore[union-attr]
    summary_index = next(
        (
            i
            for i in range(marker_index + 1, len(msgs))
            if isinstance(msgs[i].info, AssistantMessage)
            and msgs[i].info.summary  # type: ignore[union-attr]
            and msgs[i].info.parent_id == marker.id  # type: ignore[union-attr]
        ),
        None,
    )
    tail_index = next((i for i, m in enumerate(msgs) if m.id == tail_start_id), None)
    if summary_index is None or tail_index is None or not tail_index < marker_index < summary_index:
        return msgs
    return msgs[marker_index : summary_index + 1] + msgs[tail_index:marker_index] + msgs[summary_index + 1 :]


@dataclass(frozen=True)
class Latest:
    """The newest user, assistant and finished assistant by id (the window is not in id order),
    and the compaction tasks newer than the last finished assistant, oldest first."""

    user: WithParts | None = None
    assistant: WithParts | None = None
    finished: WithParts | None = None
    tasks: list[CompactionPart] = field(default_factory=list)


def latest(msgs: Iterable[WithParts]) -> Latest:
    msgs = list(msgs)
    users = [m for m in msgs if m.role == "user"]
    assistants = [m for m in msgs if m.role == "assistant"]
    finished_ones = [m for m in assistants if m.info.finish]  # type: ignore[union-attr]
    user = max(users, key=lambda m: m.id, default=None)
    assistant = max(assistants, key=lambda m: m.id, default=None)
    finished = max(finished_ones, key=lambda m: m.id, default=None)
    tasks = [
        part
        for m in sorted(msgs, key=lambda m: m.id)
        if finished is None or m.id > finished.id
        for part in m.parts
        if isinstance(part, CompactionPart)
    ]
    return Latest(user=user, assistant=assistant, finished=finished, tasks=tasks)


def turn_done(now: Latest) -> bool:
    """Nothing left to answer: no user message, or the newest step finished after the newest user
    message with an answer (not tool calls, not cut short)."""
    if now.user is None:
        return True
    done = now.assistant.info if now.assistant else None
    if not isinstance(done, AssistantMessage):
        return False
    return bool(
        done and done.finish and done.finish not in ("tool-calls", "unknown") and now.user.id < done.id
    )
