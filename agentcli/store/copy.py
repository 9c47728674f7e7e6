"""``agentcli sessions copy``: sessions, their messages, parts and state from one database to
another (SQLite ↔ PostgreSQL). Rows keep their ids, so copying again replaces what is there with the
same rows: the copy is idempotent, and a re-copy brings over what changed since.

A session that cannot be copied (a row the source cannot read, one the target refuses) is named and
skipped; the others are copied. Trouble with either database itself stops the copy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from agentcli.store.errors import StoreError
from agentcli.store.records import SessionInfo, WithParts
from agentcli.store.rows import BadRecord
from agentcli.store.store import Store

BATCH = 50  # sessions per transaction on the target


class Skipped(BaseModel):
    session_id: str
    reason: str  # one line


class CopyResult(BaseModel):
    sessions: int = 0
    messages: int = 0
    parts: int = 0
    skipped: list[Skipped] = Field(default_factory=list)


@dataclass(frozen=True)
class _Loaded:
    info: SessionInfo
    messages: list[WithParts]
    state: dict[str, Any]


def copy_sessions(
    source: Store,
    target: Store,
    session_ids: list[str] | None = None,
    progress: Callable[[CopyResult], None] | None = None,
) -> CopyResult:
    ids = session_ids if session_ids is not None else source.session_ids()[::-1]  # oldest first
    result = CopyResult()
    for start in range(0, len(ids), BATCH):
        batch = [loaded for sid in ids[start : start + BATCH] if (loaded := _read(source, sid, result))]
        for group in _write(target, batch, result):
            result.sessions += len(group)
            result.messages += sum(len(s.messages) for s in group)
            result.parts += sum(len(m.parts) for s in group for m in s.messages)
        if progress is not None:
            progress(result)
    return result


def _read(source: Store, session_id: str, result: CopyResult) -> _Loaded | None:
    try:
        return _Loaded(
            info=source.get_session(session_id),
            messages=source.messages(session_id),
            state=source.all_state(session_id),
        )
    except BadRecord as exc:
        result.skipped.append(Skipped(session_id=session_id, reason=str(exc)))
        return None


def _write(target: Store, batch: list[_Loaded], result: CopyResult) -> list[list[_Loaded]]:
    """Import ``batch`` in one transaction; if the target refuses it, one session at a time, so the
    one at fault is named and the rest are copied. Returns the groups written."""
    if not batch:
        return []
    try:
        _import(target, batch)
        return [batch]
    except StoreError as exc:
        target.ping()  # the database itself failing is no session's fault: that stops the copy
        if len(batch) == 1:
            result.skipped.append(Skipped(session_id=batch[0].info.id, reason=str(exc)))
            return []
    written = []
    for one in batch:
        try:
            _import(target, [one])
            written.append([one])
        except StoreError as exc:
            target.ping()
            result.skipped.append(Skipped(session_id=one.info.id, reason=str(exc)))
    return written


def _import(target: Store, group: list[_Loaded]) -> None:
    target.import_sessions([(s.info, s.messages) for s in group], {s.info.id: s.state for s in group})
