"""Which records are compactions: a summary that finished, and the (marker, summary) pairs of a
session's completed compactions. Pure functions over records, below both the session (the window,
compaction) and the plugins' read-only store view, which both ask."""

from __future__ import annotations

from collections.abc import Sequence

from agentcli.store.records import AssistantMessage, WithParts


def completes_compaction(msg: WithParts) -> bool:
    """A summary that finished without error: its marker is a cut-off for the window."""
    info = msg.info
    return isinstance(info, AssistantMessage) and info.summary and bool(info.finish) and info.error is None


def _is_marker(msg: WithParts) -> bool:
    return msg.role == "user" and msg.compaction() is not None


def completed_compactions(history: Sequence[WithParts]) -> list[tuple[WithParts, WithParts]]:
    """(marker, summary) pairs of the compactions that finished without error, oldest first."""
    markers = {m.id: m for m in history if _is_marker(m)}
    pairs: list[tuple[WithParts, WithParts]] = []
    for msg in history:
        if completes_compaction(msg) and (marker := markers.get(msg.info.parent_id)) is not None:  # type: ignore[union-attr]
            pairs.append((marker, msg))
    return pairs
