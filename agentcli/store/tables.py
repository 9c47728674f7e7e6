"""SQLModel tables: indexed columns for what queries filter and sort on, the rest of each record as
validated JSON in ``data`` (OpenCode's session.sql.ts layout). These are what queries are written
against; the tables themselves are made by the migrations (``migrations.py``), never from these
models, and a test checks the two agree."""

from __future__ import annotations

from sqlalchemy import BigInteger, Index
from sqlmodel import Field, SQLModel


class SessionRow(SQLModel, table=True):
    __tablename__ = "session"
    id: str = Field(primary_key=True)
    parent_id: str | None = Field(default=None, index=True)
    directory: str = Field(default="", index=True)
    time_created: int = Field(sa_type=BigInteger)  # ms: past 32 bits
    time_updated: int = Field(index=True, sa_type=BigInteger)
    data: str  # SessionInfo without id, as JSON


class MessageRow(SQLModel, table=True):
    __tablename__ = "message"
    __table_args__ = (Index("message_session_id_idx", "session_id", "id"),)
    id: str = Field(primary_key=True)
    session_id: str = Field(foreign_key="session.id", ondelete="CASCADE")
    role: str
    time_created: int = Field(sa_type=BigInteger)  # ms: past 32 bits
    time_updated: int = Field(sa_type=BigInteger)
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
    time_created: int = Field(sa_type=BigInteger)  # ms: past 32 bits
    time_updated: int = Field(sa_type=BigInteger)
    data: str  # a Part, as JSON


class StateRow(SQLModel, table=True):
    """Small per-session state that is not history: todos, file read times."""

    __tablename__ = "session_state"
    session_id: str = Field(primary_key=True, foreign_key="session.id", ondelete="CASCADE")
    key: str = Field(primary_key=True)
    value: str  # JSON


class LeaseRow(SQLModel, table=True):
    """Who runs a turn in a session right now, until when (ms). Renewed by a heartbeat while the
    turn runs, so a killed agent's lease simply expires."""

    __tablename__ = "session_lease"
    session_id: str = Field(primary_key=True, foreign_key="session.id", ondelete="CASCADE")
    owner: str  # a random token of the holder
    holder: str  # host and pid, for the message another agent shows
    expires: int = Field(sa_type=BigInteger)
