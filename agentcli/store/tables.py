"""The tables: indexed columns for what queries filter and sort on, the rest of each record as
validated JSON in ``data`` (OpenCode's session.sql.ts layout). These are what queries are written
against; the tables themselves are made by the migrations (``migrations.py``), never from these
definitions, and a test checks the two agree.

SQLAlchemy Core tables, not ORM-mapped classes: the store reads and writes rows with Core statements
and validates ``data`` into the records (``records.py``) itself, so a mapped class per table would
only add its cost to every command's start (SQLModel's mapping and its import of SQLAlchemy's ORM:
about a fifth of a short ``run``'s CPU)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, ForeignKey, Index, MetaData, String, Table

metadata = MetaData()


def _text(name: str, *, primary_key: bool = False, index: bool | None = None) -> Column[str]:
    return Column(name, String, nullable=False, primary_key=primary_key, index=index)


def _ms(name: str, *, index: bool | None = None) -> Column[int]:
    return Column(name, BigInteger, nullable=False, index=index)  # ms: past 32 bits


session = Table(
    "session",
    metadata,
    _text("id", primary_key=True),
    Column("parent_id", String, nullable=True, index=True),
    _text("directory", index=True),
    _ms("time_created"),
    _ms("time_updated", index=True),
    _text("data"),  # SessionInfo without id, as JSON
)

message = Table(
    "message",
    metadata,
    _text("id", primary_key=True),
    Column("session_id", String, ForeignKey("session.id", ondelete="CASCADE"), nullable=False),
    _text("role"),
    _ms("time_created"),
    _ms("time_updated"),
    _text("data"),  # UserMessage | AssistantMessage, as JSON
    Index("message_session_id_idx", "session_id", "id"),
)

part = Table(
    "part",
    metadata,
    _text("id", primary_key=True),
    Column("message_id", String, ForeignKey("message.id", ondelete="CASCADE"), nullable=False),
    _text("session_id"),
    _text("type"),
    _ms("time_created"),
    _ms("time_updated"),
    _text("data"),  # a Part, as JSON
    Index("part_message_id_idx", "message_id", "id"),
    Index("part_session_type_idx", "session_id", "type"),
)

# Small per-session state that is not history: todos, file read times.
session_state = Table(
    "session_state",
    metadata,
    Column("session_id", String, ForeignKey("session.id", ondelete="CASCADE"), primary_key=True),
    _text("key", primary_key=True),
    _text("value"),  # JSON
)

# Who runs a turn in a session right now, until when (ms). Renewed by a heartbeat while the turn
# runs, so a killed agent's lease simply expires.
session_lease = Table(
    "session_lease",
    metadata,
    Column("session_id", String, ForeignKey("session.id", ondelete="CASCADE"), primary_key=True),
    _text("owner"),  # a random token of the holder
    _text("holder"),  # host and pid, for the message another agent shows
    _ms("expires"),
)
