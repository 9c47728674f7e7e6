"""Undoing the last compaction (``agentcli compact --undo``, ``/compact undo``).

Context management deletes nothing, so a compaction is undone by making its summary stop counting as a
completed one: it gets a ``CompactionReverted`` error. The window then runs past the marker again —
the whole history comes back, the marker and summary are left out of what the model is sent — and
``sessions show`` still shows the compaction, marked. The marker's ``tail_start_id`` is cleared so the
window is not reordered around a compaction that no longer holds. Refused when the full window would not fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agentcli.session.request.history import completes_compaction, filter_compacted
from agentcli.store.records import MessageError, WithParts
from agentcli.store.store import Store

REVERTED = "CompactionReverted"


class UndoRefused(Exception):
    """There is no compaction to undo, or the window would not fit without it."""


@dataclass(frozen=True)
class Undone:
    summary_id: str
    tokens: int  # the estimated window after the undo
    usable: int


def undo_last_compaction(
    store: Store, session_id: str, *, estimate: Callable[[list[WithParts]], int], usable: int
) -> Undone:
    """``estimate``: tokens of a window as the model would be sent it; ``usable``: 0 when unknown."""
    newest_first = list(store.stream(session_id))
    summary = next((m for m in newest_first if completes_compaction(m)), None)
    if summary is None:
        raise UndoRefused("this session has no compaction to undo")
    reverted = summary.model_copy(
        update={
            "info": summary.info.model_copy(
                update={
                    "error": MessageError(
                        name=REVERTED, message="undone by the user: the full history is back in the window"
                    )
                }
            )
        }
    )
    parent_id = summary.info.parent_id  # type: ignore[union-attr]
    marker = next((m for m in newest_first if m.id == parent_id), None)
    part = marker.compaction() if marker is not None else None
    loose = part.model_copy(update={"tail_start_id": None}) if part is not None else None
    if marker is not None and loose is not None:
        marker = marker.model_copy(update={"parts": [loose if p.id == loose.id else p for p in marker.parts]})
    changed = {m.id: m for m in (reverted, marker) if m is not None}
    window = filter_compacted(changed.get(m.id, m) for m in newest_first)
    tokens = estimate(window)
    if usable and tokens >= usable:
        raise UndoRefused(
            f"the window without the last compaction would be {tokens:,} tokens, at or above the "
            f"usable {usable:,}: it would be compacted again at once"
        )
    store.put_message(reverted.info)
    if loose is not None:
        store.put_part(loose)
    session = store.get_session(session_id)
    store.update_session(session_id, context_tokens=tokens, compactions=max(0, session.compactions - 1))
    return Undone(summary.id, tokens, usable)
