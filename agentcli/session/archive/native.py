"""Sessions in and out of the database: agentcli's own JSON export (complete: re-importing it gives
the same session back) and imports of it or of OpenCode's ``opencode export``.

An export is ``sessions show --json``'s ``{info, messages}`` plus a format tag and the todo list.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from agentcli.session.archive.model import FORMAT, ArchiveError, SessionArchive
from agentcli.store import ids
from agentcli.store.records import (
    AssistantMessage,
    CarryoverPart,
    CompactionPart,
    SessionInfo,
    TextPart,
    WithParts,
    now_ms,
)
from agentcli.store.store import Store


def export_session(store: Store, session_id: str) -> dict[str, Any]:
    archive = SessionArchive(
        info=store.get_session(session_id),
        messages=store.messages(session_id),
        todos=store.get_state(session_id, "todos", []) or [],
    )
    return archive.model_dump(mode="json")


def parse(data: Any) -> SessionArchive:
    """Either format, as an archive of ours (OpenCode's is converted and given fresh ids)."""
    if not isinstance(data, dict) or "info" not in data or "messages" not in data:
        raise ArchiveError("not a session export: expected a JSON object with 'info' and 'messages'")
    if data.get("format") == FORMAT:
        try:
            return SessionArchive.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            raise ArchiveError(f"invalid agentcli export at {where}: {first['msg']}") from None
    from agentcli.session.archive.opencode_import import from_opencode

    return rekey(from_opencode(data))


def import_archive(store: Store, archive: SessionArchive, directory: str | None = None) -> SessionInfo:
    """Write the archive as a session; refuses to overwrite one that exists."""
    info = archive.info
    if directory is not None:
        info = info.model_copy(update={"directory": directory})
    try:
        store.get_session(info.id)
    except Exception:  # not there: good
        pass
    else:
        raise ArchiveError(f"session {info.id} is already in the database (delete it first to re-import)")
    store.put_session(info)
    store.import_messages(archive.messages)
    if archive.todos:
        store.set_state(info.id, "todos", archive.todos)
    return info


def rekey(archive: SessionArchive) -> SessionArchive:
    """Fresh ascending ids in history order (OpenCode's ids do not sort with ours), references kept."""
    session_id = ids.ascending("ses")
    ordered = sorted(archive.messages, key=lambda m: (m.info.created, m.id))
    new_ids = {m.id: ids.ascending("msg") for m in ordered}
    messages: list[WithParts] = []
    for msg in ordered:
        info = msg.info.model_copy(update={"id": new_ids[msg.id], "session_id": session_id})
        if isinstance(info, AssistantMessage):
            info = info.model_copy(update={"parent_id": new_ids.get(info.parent_id, info.parent_id)})
        parts = []
        for part in msg.parts:
            update: dict[str, Any] = {
                "id": ids.ascending("prt"),
                "session_id": session_id,
                "message_id": info.id,
            }
            if isinstance(part, CompactionPart) and part.tail_start_id:
                update["tail_start_id"] = new_ids.get(part.tail_start_id)
            if isinstance(part, TextPart) and part.replay_of in new_ids:
                update["replay_of"] = new_ids[part.replay_of]
            if isinstance(part, CarryoverPart):
                # Its "newer than" mark and kept messages name messages: by their new ids.
                update["carryover"] = part.carryover.rekeyed(new_ids)
            parts.append(part.model_copy(update=update))
        messages.append(WithParts(info=info, parts=parts))
    session = archive.info.model_copy(
        update={"id": session_id, "updated": max(archive.info.updated, now_ms())}
    )
    return archive.model_copy(update={"info": session, "messages": messages})
