"""The database file: where it lives, how it is opened, and its schema version.

WAL and a busy timeout let a second agentcli process read (``sessions list``) while a chat writes;
``synchronous=NORMAL`` in WAL mode keeps every committed write across a killed process.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import QueuePool
from sqlmodel import SQLModel

from agentcli.store import tables  # noqa: F401  (registers the tables on SQLModel.metadata)


class StoreError(Exception):
    """A database problem, said in one line."""


def default_db_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("AGENTCLI_DB"):
        return Path(env["AGENTCLI_DB"]).expanduser()
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentcli" / "agentcli.db"


def _create_v1(conn: sqlite3.Connection) -> None:
    """Version 1: the tables of ``tables.py``."""
    # create_all runs through the engine; nothing to do on the raw connection.


# Forward migrations: index i upgrades user_version i -> i + 1. Append, never edit.
MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [_create_v1]
SCHEMA_VERSION = len(MIGRATIONS)


def _touch_private(path: Path) -> None:
    """The database, and the WAL and SHM files SQLite gives the same mode, are 0600; agentcli's own
    data folder 0700. Files an older version left readable are tightened."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.parent == default_db_path({k: v for k, v in os.environ.items() if k != "AGENTCLI_DB"}).parent:
        os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(file, 0o600)


def open_engine(path: Path) -> Engine:
    try:
        _touch_private(path)
    except OSError as exc:
        raise StoreError(f"cannot create database {path}: {exc.strerror or exc}") from None

    engine = create_engine(
        f"sqlite:///{path}",
        connect_args={"check_same_thread": False, "timeout": 10},
        poolclass=QueuePool,
        pool_size=4,
        max_overflow=4,
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=10000")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    try:
        _migrate(engine, path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"cannot open database {path}: {exc}") from None
    except Exception as exc:  # sqlalchemy wraps sqlite errors
        orig = getattr(exc, "orig", None)
        if isinstance(orig, sqlite3.DatabaseError):
            raise StoreError(f"cannot open database {path}: {orig}") from None
        raise
    return engine


def _migrate(engine: Engine, path: Path) -> None:
    with engine.connect() as conn:
        version = conn.exec_driver_sql("PRAGMA user_version").scalar() or 0
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"database {path} has schema version {version}, newer than this agentcli ({SCHEMA_VERSION}); upgrade agentcli"
        )
    if version == SCHEMA_VERSION:
        return
    SQLModel.metadata.create_all(engine)
    raw = engine.raw_connection()
    try:
        dbapi = raw.driver_connection
        for index in range(version, SCHEMA_VERSION):
            MIGRATIONS[index](dbapi)
            dbapi.execute(f"PRAGMA user_version={index + 1}")
        dbapi.commit()
    finally:
        raw.close()
