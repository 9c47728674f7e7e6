"""Versioned schema migrations that run on SQLite and PostgreSQL.

``MIGRATIONS[i]`` upgrades version i to i + 1 on an open transaction; append, never edit. The
version lives in ``PRAGMA user_version`` on SQLite (as before) and in ``agentcli_schema`` on
PostgreSQL. Several processes may open a new database at once: the whole upgrade runs under the
database's write lock (SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), and the version is
read again once the lock is held, so exactly one process creates the tables and the others find them.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, Engine
from sqlmodel import SQLModel

from agentcli.store import fulltext
from agentcli.store.errors import StoreError
from agentcli.store.tables import LeaseRow, MessageRow, PartRow, SessionRow, StateRow

# Any constant: identifies agentcli's schema lock among the server's advisory locks.
_PG_LOCK_KEY = 0x61676E74636C69


def _create_v1(conn: Connection) -> None:
    """Version 1: sessions, messages, parts and per-session state."""
    tables = [SessionRow, MessageRow, PartRow, StateRow]
    SQLModel.metadata.create_all(conn, tables=[t.__table__ for t in tables])  # type: ignore[attr-defined]


def _create_v2(conn: Connection) -> None:
    """Version 2: full-text search over text, reasoning and tool parts (existing rows included)."""
    fulltext.create(conn)


def _create_v3(conn: Connection) -> None:
    """Version 3: the same-session lease (one running turn per session across processes)."""
    SQLModel.metadata.create_all(conn, tables=[LeaseRow.__table__])  # type: ignore[attr-defined]


MIGRATIONS: list[Callable[[Connection], None]] = [_create_v1, _create_v2, _create_v3]
SCHEMA_VERSION = len(MIGRATIONS)


def _read_version(conn: Connection) -> int:
    if conn.dialect.name == "sqlite":
        return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
    if conn.exec_driver_sql("SELECT to_regclass('agentcli_schema')").scalar() is None:
        return 0
    return int(conn.exec_driver_sql("SELECT max(version) FROM agentcli_schema").scalar() or 0)


def _write_version(conn: Connection, version: int) -> None:
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"PRAGMA user_version={int(version)}")
        return
    conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS agentcli_schema (version integer NOT NULL)")
    conn.exec_driver_sql("DELETE FROM agentcli_schema")
    conn.exec_driver_sql(f"INSERT INTO agentcli_schema (version) VALUES ({int(version)})")


def _check(version: int, where: str) -> bool:
    """True when up to date; refuses a schema newer than this agentcli in one line."""
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"database {where} has schema version {version}, newer than this agentcli ({SCHEMA_VERSION}); "
            "upgrade agentcli"
        )
    return version == SCHEMA_VERSION


def _upgrade(conn: Connection, where: str) -> None:
    version = _read_version(conn)
    if _check(version, where):
        return
    for index in range(version, SCHEMA_VERSION):
        MIGRATIONS[index](conn)
    _write_version(conn, SCHEMA_VERSION)


def migrate(engine: Engine, where: str) -> None:
    with engine.connect() as conn:
        if _check(_read_version(conn), where):  # the common case: no lock taken
            return
        conn.rollback()
        if conn.dialect.name == "sqlite":
            _migrate_sqlite(conn, where)
        else:
            _migrate_pg(conn, where)


def _migrate_pg(conn: Connection, where: str) -> None:
    # A session-level lock, then a new transaction: starting one makes the backend drop catalog
    # entries cached before the wait (it had looked for agentcli_schema and found none).
    conn.exec_driver_sql(f"SELECT pg_advisory_lock({_PG_LOCK_KEY})")
    conn.commit()
    try:
        _upgrade(conn, where)
        conn.commit()
    finally:
        conn.rollback()
        conn.exec_driver_sql(f"SELECT pg_advisory_unlock({_PG_LOCK_KEY})")
        conn.commit()


def _migrate_sqlite(conn: Connection, where: str) -> None:
    # pysqlite opens transactions only before DML; drive them by hand so the DDL, the version and
    # the lock taken by BEGIN IMMEDIATE are one transaction.
    dbapi = conn.connection.driver_connection
    saved = dbapi.isolation_level  # type: ignore[union-attr]
    dbapi.isolation_level = None  # type: ignore[union-attr]
    try:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            _upgrade(conn, where)
        except BaseException:
            conn.exec_driver_sql("ROLLBACK")
            raise
        conn.exec_driver_sql("COMMIT")
    finally:
        conn.rollback()
        dbapi.isolation_level = saved  # type: ignore[union-attr]
