"""The database: which one (a SQLite file or a PostgreSQL server, named by a SQLAlchemy URL), how it
is opened, and turning driver failures into one line.

SQLite: WAL and a busy timeout let a second agentcli process read (``sessions list``) while a chat
writes; ``synchronous=NORMAL`` in WAL mode keeps every committed write across a killed process.
PostgreSQL (psycopg 3): a small pool with ``pool_pre_ping`` so a connection lost between turns is
replaced instead of failing the next statement.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, ExceptionContext, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlalchemy.pool import QueuePool

from agentcli.store import tables  # noqa: F401  (registers the tables on SQLModel.metadata)
from agentcli.store.errors import StoreError

BUSY_TIMEOUT_S = 10.0  # how long a write waits for another program's lock ($AGENTCLI_DB_BUSY_TIMEOUT)


def busy_timeout_s() -> float:
    try:
        return max(0.0, float(os.environ.get("AGENTCLI_DB_BUSY_TIMEOUT", BUSY_TIMEOUT_S)))
    except ValueError:
        return BUSY_TIMEOUT_S


@dataclass(frozen=True)
class Target:
    """A database agentcli can use: a SQLite file (``path``) or a PostgreSQL URL."""

    url: URL
    path: Path | None  # the SQLite file; None for PostgreSQL

    @property
    def dialect(self) -> str:
        return self.url.get_backend_name()

    def display(self) -> str:
        """Where the database is, without a password."""
        return str(self.path) if self.path else self.url.render_as_string(hide_password=True)


def resolve(value: str | Path) -> Target:
    """A ``--db`` / ``AGENTCLI_DB`` / ``database.url`` value: a plain path or a SQLAlchemy URL."""
    text = str(value)
    if isinstance(value, Path) or "://" not in text:
        path = Path(text).expanduser()
        return Target(URL.create("sqlite", database=str(path)), path)
    try:
        url = make_url(text)
    except ArgumentError:
        raise StoreError(f"not a database URL: {_hide(text)}") from None
    backend, driver = url.get_backend_name(), url.get_driver_name()
    if backend == "sqlite" and driver == "pysqlite":
        if not url.database or url.database == ":memory:":
            raise StoreError("a sqlite:/// URL needs a file path (e.g. sqlite:////home/me/agentcli.db)")
        path = Path(url.database).expanduser()
        return Target(url.set(database=str(path)), path)
    if backend == "postgresql" and driver in ("psycopg", "psycopg2", "psycopg2cffi", "asyncpg", "pg8000"):
        if driver != "psycopg":
            raise StoreError(f"use postgresql+psycopg:// (psycopg 3), not {backend}+{driver}://")
        return Target(url, None)
    if backend == "postgresql":
        raise StoreError(f"unsupported PostgreSQL driver '{driver}': use postgresql+psycopg://")
    raise StoreError(
        f"unsupported database URL {_hide(text)}: use a file path, sqlite:///PATH or postgresql+psycopg://..."
    )


def _hide(text: str) -> str:
    try:
        return make_url(text).render_as_string(hide_password=True)
    except ArgumentError:
        return text.split("@")[-1]


def default_target(env: Mapping[str, str] | None = None, configured: str | None = None) -> Target:
    """``$AGENTCLI_DB``, else the config's ``database.url``, else the file in the user data dir."""
    env = os.environ if env is None else env
    if env.get("AGENTCLI_DB"):
        return resolve(env["AGENTCLI_DB"])
    if configured:
        return resolve(configured)
    return resolve(default_file(env))


def default_file(env: Mapping[str, str]) -> Path:
    """The database file in the user data dir (``$XDG_DATA_HOME/agentcli/agentcli.db``)."""
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "agentcli" / "agentcli.db"


def _touch_private(path: Path) -> None:
    """The database, and the WAL and SHM files SQLite gives the same mode, are 0600; agentcli's own
    data folder 0700. Files an older version left readable are tightened."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.parent == default_file(os.environ).parent:
        os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            os.chmod(file, 0o600)


def open_engine(target: Target) -> Engine:
    """An engine on an up-to-date schema; every driver error it raises later is a one-line StoreError."""
    from agentcli.store.schema import migrate

    engine = connect(target)
    where = target.display()

    @event.listens_for(engine, "handle_error")
    def _one_line(context: ExceptionContext) -> BaseException | None:
        if context.is_pre_ping:
            return None  # the pool handles a dead connection found by its ping: it reconnects
        return one_line(context.original_exception, where)

    try:
        migrate(engine, where)
    except StoreError:
        engine.dispose()
        raise
    return engine


def connect(target: Target) -> Engine:
    """An engine for ``target`` (not yet migrated: see ``schema.migrate``)."""
    if target.path is not None:
        return _sqlite_engine(target.path)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise StoreError("PostgreSQL needs psycopg 3: pip install 'agentcli[postgres]'") from None
    timeout = busy_timeout_s()
    engine = create_engine(
        target.url,
        pool_pre_ping=True,
        pool_size=4,
        max_overflow=4,
        connect_args={"connect_timeout": max(1, int(timeout)), "application_name": "agentcli"},
    )

    @event.listens_for(engine, "connect")
    def _lock_timeout(dbapi_conn: Any, _record: object) -> None:
        # A row or table lock held by another program longer than this is an error, not a hang.
        with dbapi_conn.cursor() as cur:
            cur.execute(f"SET lock_timeout = {int(timeout * 1000)}")
        dbapi_conn.commit()

    return engine


def _sqlite_engine(path: Path) -> Engine:
    try:
        _touch_private(path)
    except OSError as exc:
        raise StoreError(f"cannot create database {path}: {exc.strerror or exc}") from None
    timeout = busy_timeout_s()
    engine = create_engine(
        URL.create("sqlite", database=str(path)),
        connect_args={"check_same_thread": False, "timeout": timeout},
        poolclass=QueuePool,
        pool_size=4,
        max_overflow=4,
    )

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: sqlite3.Connection, _record: object) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    return engine


def one_line(exc: BaseException, where: str) -> StoreError | None:
    """A driver error as the one line a user can act on, or None if it is not a database error."""
    orig: Any = exc.orig if isinstance(exc, DBAPIError) else exc
    if isinstance(orig, sqlite3.OperationalError) and "locked" in str(orig):
        return StoreError(
            f"database {where} is locked by another program: its write lock was held longer than the "
            f"{busy_timeout_s():g}s busy timeout ({orig})"
        )
    if isinstance(orig, sqlite3.DatabaseError):
        return StoreError(f"cannot use database {where}: {orig}")
    module = type(orig).__module__ or ""
    if module.startswith("psycopg"):
        first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
        if type(orig).__name__ == "LockNotAvailable":
            return StoreError(
                f"database {where} is locked by another program: a lock was held longer than the "
                f"{busy_timeout_s():g}s busy timeout ({first})"
            )
        if "connection" in first.lower() or type(orig).__name__ == "OperationalError":
            return StoreError(f"cannot reach database {where}: {first}")
        return StoreError(f"database {where}: {first}")
    return None
