"""A compaction's summary must have text: it replaces the history."""

from __future__ import annotations

from agentcli.store import ids
from agentcli.store.records import AssistantMessage, MessageError, ReasoningPart, TextPart
from agentcli.store.store import Store


def ensure_text(store: Store, summary: AssistantMessage) -> bool:
    """Whether ``summary`` has text. A reasoning model that wrote it all as reasoning gets that
    reasoning as the text; with nothing at all the summary fails (its error is written)."""
    parts = store.get_message(summary.id).parts
    if any(isinstance(p, TextPart) and p.text.strip() for p in parts):
        return True
    thought = "\n\n".join(p.text for p in parts if isinstance(p, ReasoningPart) and p.text.strip())
    if thought:
        store.put_part(
            TextPart(
                id=ids.ascending("prt"),
                session_id=summary.session_id,
                message_id=summary.id,
                text=thought,
                from_reasoning=True,
            )
        )
        return True
    summary.error = MessageError(name="UnknownError", message="the summarizer returned no text")
    summary.finish = "error"
    store.put_message(summary)
    return False
