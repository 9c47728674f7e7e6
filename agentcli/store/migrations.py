"""The schema's history: named migrations, each spelling its own DDL (as simonw/llm's do).

A migration is frozen once released: it must create what it created then, whatever today's models
(``tables.py``) or queries say, or a database made by an older agentcli and one made today would
differ. Append a new one to change the schema; never edit one. ``schema.py`` runs the ones a
database has not had, in order, and records each by name. ``tests/test_store_migrations.py``
upgrades the databases earlier versions made (``tests/fixtures/schemas``) and checks that today's
models match what the migrations create.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import Connection, text

Migration = Callable[[Connection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


def _run(conn: Connection, *statements: str) -> None:
    for statement in statements:
        conn.exec_driver_sql(statement)


@migration
def m001_sessions(conn: Connection) -> None:
    """Sessions, their messages and parts (indexed columns, the rest of each record as JSON in
    ``data``), and small per-session state."""
    _run(
        conn,
        """CREATE TABLE session (
            id VARCHAR NOT NULL,
            parent_id VARCHAR,
            directory VARCHAR NOT NULL,
            time_created BIGINT NOT NULL,
            time_updated BIGINT NOT NULL,
            data VARCHAR NOT NULL,
            PRIMARY KEY (id)
        )""",
        "CREATE INDEX ix_session_parent_id ON session (parent_id)",
        "CREATE INDEX ix_session_directory ON session (directory)",
        "CREATE INDEX ix_session_time_updated ON session (time_updated)",
        """CREATE TABLE message (
            id VARCHAR NOT NULL,
            session_id VARCHAR NOT NULL,
            role VARCHAR NOT NULL,
            time_created BIGINT NOT NULL,
            time_updated BIGINT NOT NULL,
            data VARCHAR NOT NULL,
            PRIMARY KEY (id),
            FOREIGN KEY(session_id) REFERENCES session (id) ON DELETE CASCADE
        )""",
        "CREATE INDEX message_session_id_idx ON message (session_id, id)",
        """CREATE TABLE session_state (
            session_id VARCHAR NOT NULL,
            "key" VARCHAR NOT NULL,
            value VARCHAR NOT NULL,
            PRIMARY KEY (session_id, "key"),
            FOREIGN KEY(session_id) REFERENCES session (id) ON DELETE CASCADE
        )""",
        """CREATE TABLE part (
            id VARCHAR NOT NULL,
            message_id VARCHAR NOT NULL,
            session_id VARCHAR NOT NULL,
            type VARCHAR NOT NULL,
            time_created BIGINT NOT NULL,
            time_updated BIGINT NOT NULL,
            data VARCHAR NOT NULL,
            PRIMARY KEY (id),
            FOREIGN KEY(message_id) REFERENCES message (id) ON DELETE CASCADE
        )""",
        "CREATE INDEX part_message_id_idx ON part (message_id, id)",
        "CREATE INDEX part_session_type_idx ON part (session_id, type)",
    )


# What full-text search reads of a part: its text, or a tool call's name, input, output and error.
_SQLITE_BODY = (
    "CASE {row}.type WHEN 'tool' THEN coalesce(json_extract({row}.data, '$.tool'), '') || ' ' || "
    "coalesce(json_extract({row}.data, '$.state.input'), '') || ' ' || "
    "coalesce(json_extract({row}.data, '$.state.output'), '') || ' ' || "
    "coalesce(json_extract({row}.data, '$.state.error'), '') "
    "ELSE coalesce(json_extract({row}.data, '$.text'), '') END, "
    # the filters: hex of the session id and of its directory, one token each
    "'x' || lower(hex({row}.session_id)), "
    "(SELECT 'x' || lower(hex(directory)) FROM session WHERE id = {row}.session_id)"
)
_SQLITE_FTS_INSERT = (
    "INSERT INTO part_fts (rowid, part_id, body, sid, dir) VALUES (NEW.rowid, NEW.id, {body});"
)
_SQLITE_FTS_DELETE = "DELETE FROM part_fts WHERE rowid = OLD.rowid AND part_id = OLD.id;"
_SEARCHED = "('text', 'reasoning', 'tool')"
_PG_SEARCH = (
    "ALTER TABLE part ADD COLUMN search tsvector GENERATED ALWAYS AS (CASE WHEN type IN "
    f"{_SEARCHED} THEN to_tsvector('simple'::regconfig, regexp_replace(CASE type WHEN 'tool' THEN "
    "coalesce(data::jsonb #>> '{tool}', '') || ' ' || coalesce(data::jsonb #>> '{state,input}', '') || "
    "' ' || coalesce(data::jsonb #>> '{state,output}', '') || ' ' || "
    "coalesce(data::jsonb #>> '{state,error}', '') ELSE coalesce(data::jsonb ->> 'text', '') END, "
    "'[[:punct:]]+', ' ', 'g')) END) STORED"
)


@migration
def m002_fulltext(conn: Connection) -> None:
    """Full-text search over text, reasoning and tool parts, existing parts included. SQLite: an
    FTS5 table kept by triggers (rowid = the part's rowid; part_id guards against a VACUUM
    renumbering). PostgreSQL: a generated ``tsvector`` with ASCII punctuation made spaces (as FTS5
    splits words), and a GIN index."""
    if conn.dialect.name != "sqlite":
        _run(conn, _PG_SEARCH, "CREATE INDEX part_search_idx ON part USING GIN (search)")
        return
    insert = _SQLITE_FTS_INSERT.format(body=_SQLITE_BODY.format(row="NEW"))
    _run(
        conn,
        "CREATE VIRTUAL TABLE part_fts USING fts5(part_id UNINDEXED, body, sid, dir, "
        "tokenize = 'unicode61 remove_diacritics 2')",
        f"CREATE TRIGGER part_fts_ai AFTER INSERT ON part WHEN NEW.type IN {_SEARCHED} BEGIN {insert} END",
        f"CREATE TRIGGER part_fts_au AFTER UPDATE OF data ON part WHEN NEW.type IN {_SEARCHED} "
        f"BEGIN {_SQLITE_FTS_DELETE} {insert} END",
        f"CREATE TRIGGER part_fts_ad AFTER DELETE ON part WHEN OLD.type IN {_SEARCHED} "
        f"BEGIN {_SQLITE_FTS_DELETE} END",
        "INSERT INTO part_fts (rowid, part_id, body, sid, dir) SELECT part.rowid, part.id, "
        f"{_SQLITE_BODY.format(row='part')} FROM part WHERE part.type IN {_SEARCHED}",
    )


@migration
def m003_session_lease(conn: Connection) -> None:
    """The same-session lease: who runs a turn in a session, until when (ms, the database's clock)."""
    _run(
        conn,
        """CREATE TABLE session_lease (
            session_id VARCHAR NOT NULL,
            owner VARCHAR NOT NULL,
            holder VARCHAR NOT NULL,
            expires BIGINT NOT NULL,
            PRIMARY KEY (session_id),
            FOREIGN KEY(session_id) REFERENCES session (id) ON DELETE CASCADE
        )""",
    )


@migration
def m004_clean_nul(conn: Connection) -> None:
    """NULs an older agentcli stored on SQLite (the JSON escape ``\\u0000``, which PostgreSQL
    refuses and at which SQLite's search stopped) become U+FFFD, as every write does now
    (``clean``); rewriting a part re-indexes it. PostgreSQL never stored one."""
    if conn.dialect.name != "sqlite":
        return
    # An escape, not an escaped backslash followed by the letters "u0000" (an even run before it).
    escape = re.compile(r"(?<!\\)((?:\\\\)*)\\u0000")
    for table, column in (
        ("session", "data"),
        ("message", "data"),
        ("part", "data"),
        ("session_state", "value"),
    ):
        rows = conn.execute(
            text(f"SELECT rowid AS k, {column} AS v FROM {table} WHERE instr({column}, :nul) > 0"),
            {"nul": "\\u0000"},
        ).all()
        for row in rows:
            conn.execute(
                text(f"UPDATE {table} SET {column} = :v WHERE rowid = :k"),
                {"v": escape.sub(lambda m: m.group(1) + "\ufffd", row.v), "k": row.k},
            )
