"""``agentcli sessions copy``: sessions, their messages, parts and state from one database to
another (SQLite ↔ PostgreSQL). Rows keep their ids, so copying again replaces what is there with the
same rows: the copy is idempotent, and a re-copy brings over what changed since."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from agentcli.store.store import Store

BATCH = 50  # sessions per transaction on the target


class CopyResult(BaseModel):
    sessions: int = 0
    messages: int = 0
    parts: int = 0


def copy_sessions(
    source: Store,
    target: Store,
    session_ids: list[str] | None = None,
    progress: Callable[[CopyResult], None] | None = None,
) -> CopyResult:
    ids = session_ids if session_ids is not None else [s.id for s in reversed(source.list_sessions())]
    result = CopyResult()
    for start in range(0, len(ids), BATCH):
        batch = [(source.get_session(sid), source.messages(sid)) for sid in ids[start : start + BATCH]]
        target.import_sessions(batch)
        for info, messages in batch:
            for key, value in source.all_state(info.id).items():
                target.set_state(info.id, key, value)
            result.sessions += 1
            result.messages += len(messages)
            result.parts += sum(len(m.parts) for m in messages)
        if progress is not None:
            progress(result)
    return result
