"""Records as rows and back: the indexed columns apart, the rest of the record as JSON in ``data``,
everything cleaned of what no backend can store (``clean``); a row that does not read is one line
naming it (``BadRecord``)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agentcli.store import clean
from agentcli.store.errors import StoreError
from agentcli.store.records import Message, Part, SessionInfo

MESSAGES: TypeAdapter[Any] = TypeAdapter(Message)
PARTS: TypeAdapter[Any] = TypeAdapter(Part)
SESSIONS: TypeAdapter[Any] = TypeAdapter(SessionInfo)


class BadRecord(StoreError):
    """A stored row this agentcli cannot read (a newer agentcli's record, a damaged row)."""


def dump(model: Any, drop: set[str]) -> str:
    """A record as stored in ``data``: without the fields that live in indexed columns, and with
    what no backend can store cleaned (``clean``)."""
    return clean.dump_model(model, drop)


def _row(data: str, **columns: Any) -> dict[str, Any]:
    """A row: the indexed columns cleaned as ``data`` is (a directory or an imported id can hold
    anything), ``data`` as dumped."""
    return {k: clean.text(v) if isinstance(v, str) else v for k, v in columns.items()} | {"data": data}


def session_row(info: SessionInfo) -> dict[str, Any]:
    return _row(
        dump(info, {"id"}),
        id=info.id,
        parent_id=info.parent_id,
        directory=info.directory,
        time_created=info.created,
        time_updated=info.updated,
    )


def message_row(msg: Any, now: int) -> dict[str, Any]:
    return _row(
        dump(msg, {"id", "session_id"}),
        id=msg.id,
        session_id=msg.session_id,
        role=msg.role,
        time_created=msg.created,
        time_updated=now,
    )


def part_row(part: Any, now: int) -> dict[str, Any]:
    return _row(
        dump(part, {"id", "session_id", "message_id"}),
        id=part.id,
        message_id=part.message_id,
        session_id=part.session_id,
        type=part.type,
        time_created=now,
        time_updated=now,
    )


def load(adapter: TypeAdapter[Any], kind: str, row: Any, **columns: Any) -> Any:
    """The inverse of ``_dump``: the JSON ``data`` plus the indexed columns, validated; a row that
    does not read is one line naming it."""
    try:
        data = json.loads(row.data)
        data.update(columns)
        return adapter.validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"][:4])
        reason = f"{where}: {error['msg']}" if where else error["msg"]
    except (ValueError, AttributeError) as exc:  # not JSON, or JSON that is not an object
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    raise BadRecord(f"cannot read {kind} {row.id}: {reason[:200]}")


def state_value(session_id: str, key: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise BadRecord(f"cannot read state '{key}' of session {session_id}: {exc}") from None
