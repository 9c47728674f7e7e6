"""Running the migrations (``migrations.py``) on SQLite and PostgreSQL.

Each migration a database has had is recorded by name in ``agentcli_migrations`` (as llm's
``_llm_migrations``), so two lines of development that each add one cannot be mistaken for each
other. The count is also kept where agentcli has always kept its version — ``PRAGMA user_version``
on SQLite, ``agentcli_schema`` on PostgreSQL — so an older agentcli still refuses a database a newer
one upgraded, and a database from before names were recorded is read by its count (its first N
migrations). A database holding a migration this agentcli does not know is refused in one line.

Several processes may open a new database at once: the upgrade runs under the database's write lock
(SQLite ``BEGIN IMMEDIATE``, a PostgreSQL advisory lock), and what was applied is read again once the
lock is held, so exactly one process migrates and the others find it done.
"""

from __future__ import annotations

import sqlite3

from sqlalchemy import Connection, Engine, text

from agentcli.store.errors import StoreError
from agentcli.store.migrations import MIGRATIONS, Migration

SCHEMA_VERSION = len(MIGRATIONS)
NAMES = [m.__name__ for m in MIGRATIONS]
# Any constant: identifies agentcli's schema lock among the server's advisory locks.
_PG_LOCK_KEY = 0x61676E74636C69


def _has_table(conn: Connection, name: str) -> bool:
    if conn.dialect.name == "sqlite":
        found = conn.execute(
            text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n"), {"n": name}
        ).first()
        return found is not None
    return conn.execute(text("SELECT to_regclass(:n)"), {"n": name}).scalar() is not None


def _read_version(conn: Connection) -> int:
    if conn.dialect.name == "sqlite":
        return int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
    if not _has_table(conn, "agentcli_schema"):
        return 0
    return int(conn.exec_driver_sql("SELECT max(version) FROM agentcli_schema").scalar() or 0)


def _write_version(conn: Connection, version: int) -> None:
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(f"PRAGMA user_version={int(version)}")
        return
    conn.exec_driver_sql("CREATE TABLE IF NOT EXISTS agentcli_schema (version integer NOT NULL)")
    conn.exec_driver_sql("DELETE FROM agentcli_schema")
    conn.exec_driver_sql(f"INSERT INTO agentcli_schema (version) VALUES ({int(version)})")


def applied(conn: Connection) -> list[str]:
    """The names of the migrations the database has had, in the order they ran."""
    if _has_table(conn, "agentcli_migrations"):
        rows = conn.exec_driver_sql("SELECT name FROM agentcli_migrations ORDER BY applied, name")
        return [row[0] for row in rows]
    return NAMES[: _read_version(conn)]  # from before names were recorded: its first N


def _pending(conn: Connection, where: str) -> list[Migration]:
    """The migrations still to run; refuses a database a newer agentcli migrated, in one line."""
    version, done = _read_version(conn), applied(conn)
    unknown = [name for name in done if name not in NAMES]
    if version > SCHEMA_VERSION or unknown:
        what = f"migration {unknown[0]}" if unknown else f"schema version {version}"
        raise StoreError(
            f"database {where} has {what}, newer than this agentcli ({SCHEMA_VERSION} migrations, "
            f"last {NAMES[-1]}); upgrade agentcli"
        )
    return [m for m in MIGRATIONS if m.__name__ not in done]


def _upgrade(conn: Connection, where: str) -> None:
    pending = _pending(conn, where)
    if not pending:
        return
    done = applied(conn)
    conn.exec_driver_sql(
        "CREATE TABLE IF NOT EXISTS agentcli_migrations "
        "(name VARCHAR NOT NULL PRIMARY KEY, applied BIGINT NOT NULL)"
    )
    for order, name in enumerate(done):  # a database from before names: record what it had
        _record(conn, name, order)
    for order, step in enumerate(pending, start=len(done)):
        try:
            step(conn)
        except StoreError as exc:
            raise StoreError(f"database {where}: migration {step.__name__} failed: {exc}") from None
        _record(conn, step.__name__, order)
    _write_version(conn, len(done) + len(pending))


def _record(conn: Connection, name: str, order: int) -> None:
    # ``applied`` is the order of application, not a time: clocks differ between machines.
    conn.execute(
        text("INSERT INTO agentcli_migrations (name, applied) VALUES (:n, :o) ON CONFLICT (name) DO NOTHING"),
        {"n": name, "o": order},
    )


def migrate(engine: Engine, where: str) -> None:
    with engine.connect() as conn:
        if not _pending(conn, where):  # the common case: no lock taken
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
    assert isinstance(dbapi, sqlite3.Connection)  # the SQLite path runs on pysqlite
    saved = dbapi.isolation_level
    dbapi.isolation_level = None
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
        dbapi.isolation_level = saved
