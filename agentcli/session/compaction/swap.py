"""A summary written ahead of time (``background``), where it may be swapped in, and its writing.

A background summary covers the history before its cut (``tail_start_id``) as it was when it was
asked for. It may replace that history only while that part is exactly as it was: the same messages
before the cut, in the same order. An undo that removed the cut, or a compaction made meanwhile
(a manual one: the window then starts at its summary), changes that, and the summary is discarded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentcli.session.compaction import plan
from agentcli.store.records import AssistantMessage, Part, Tokens, WithParts, now_ms
from agentcli.store.store import Store


@dataclass(frozen=True)
class Ready:
    """A background summary, written and not yet in the store."""

    parts: Sequence[Part]  # the summary message's parts (text redacted, step finish with its usage)
    tail_start_id: str  # the first message kept verbatim after it
    head_ids: tuple[str, ...]  # the messages it summarises
    cost: float = 0.0
    tokens: Tokens = field(default_factory=Tokens)
    request_tokens: int = 0  # the summary request's size (estimated)
    seconds: float | None = None  # how long it took to write


def visible_ids(window: Sequence[WithParts]) -> list[str]:
    """The ids of what a summary may summarise in ``window``: earlier marker/summary pairs left out,
    as ``Compactor.prepare`` does."""
    return [m.id for m in plan.hide_completed(window)]


def head_of(visible: list[str], tail_start_id: str) -> tuple[str, ...] | None:
    """Of ``visible_ids``, what a summary cut at ``tail_start_id`` summarises; None when the cut is
    not there."""
    return tuple(visible[: visible.index(tail_start_id)]) if tail_start_id in visible else None


def head_ids(window: Sequence[WithParts], tail_start_id: str) -> tuple[str, ...] | None:
    return head_of(visible_ids(window), tail_start_id)


def cut(history: Sequence[WithParts], ready: Ready) -> tuple[plan.Selection, WithParts | None] | None:
    """Where ``ready`` is swapped into ``history``: the selection (its head what ``ready``
    summarises, the rest the kept tail) and the question of a turn in progress it summarises (re-sent
    after it); None when the history changed under it."""
    if head_ids(history, ready.tail_start_id) != ready.head_ids:
        return None
    visible = plan.hide_completed(history)
    summarised = visible[: len(ready.head_ids)]
    return plan.Selection(summarised, ready.tail_start_id), plan.question_in_progress(visible, summarised)


def write(store: Store, summary: AssistantMessage, ready: Ready) -> str:
    """``ready`` becomes ``summary``: its parts written under it (the step finish among them, so the
    session's totals count its usage once)."""
    for part in ready.parts:
        store.put_part(part.model_copy(update={"session_id": summary.session_id, "message_id": summary.id}))
    summary.error, summary.finish, summary.completed = None, "stop", now_ms()
    summary.cost, summary.tokens = ready.cost, ready.tokens
    store.put_message(summary)
    return "ok"
