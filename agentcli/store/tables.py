"""SQLModel tables: indexed columns for what queries filter and sort on, the rest of each record as
validated JSON in ``data`` (OpenCode's session.sql.ts layout)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class SessionRow(SQLModel, table=True):
    __tablename__ = "session"
    id: str = Field(primary_key=True)
    parent_id: str | None = Field(default=None, index=True)
    directory: str = Field(default="", index=True)
    time_created: int
    time_updated: int = Field(index=True)
    data: str  # SessionInfo without id, as JSON


class MessageRow(SQLModel, table=True):
    __tablename__ = "message"
    __table_args__ = (Index("message_session_id_idx", "session_id", "id"),)
    id: str = Field(primary_key=True)
    session_id: str = Field(foreign_key="session.id", ondelete="CASCADE")
    role: str
    time_created: int
    time_updated: int
    data: str  # UserMessage | AssistantMessage, as JSON


class PartRow(SQLModel, table=True):
    __tablename__ = "part"
    __table_args__ = (
        Index("part_message_id_idx", "message_id", "id"),
        Index("part_session_type_idx", "session_id", "type"),
    )
    id: str = Field(primary_key=True)
    message_id: str = Field(foreign_key="message.id", ondelete="CASCADE")
    session_id: str
    type: str
    time_created: int
    time_updated: int
    data: str  # a Part, as JSON


class StateRow(SQLModel, table=True):
    """Small per-session state that is not history: todos, file read times."""

    __tablename__ = "session_state"
    session_id: str = Field(primary_key=True, foreign_key="session.id", ondelete="CASCADE")
    key: str = Field(primary_key=True)
    value: str  # JSON
