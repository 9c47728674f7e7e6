"""Which database the store tests use: a SQLite file by default; with ``AGENTCLI_TEST_DB_URL`` set
(a ``postgresql+psycopg://`` URL of a server the test may create schemas on, as ``.ci/run`` sets
for its second pass) each test gets its own PostgreSQL schema, dropped afterwards."""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

PG_URL = os.environ.get("AGENTCLI_TEST_DB_URL", "")


def on_postgres() -> bool:
    return bool(PG_URL)


def _admin(base: str, sql: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    dsn = make_url(base).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(sql)


def new_schema_url(base: str = PG_URL) -> tuple[str, str]:
    """A fresh schema of ``base``'s database and a URL whose connections use it (``search_path``)."""
    name = f"t_{secrets.token_hex(6)}"
    _admin(base, f"CREATE SCHEMA {name}")
    separator = "&" if "?" in base else "?"
    return name, f"{base}{separator}options={quote(f'-csearch_path={name}')}"


def drop_schema(name: str, base: str = PG_URL) -> None:
    _admin(base, f"DROP SCHEMA IF EXISTS {name} CASCADE")


@contextlib.contextmanager
def pg_schema_url(base: str = PG_URL) -> Iterator[str]:
    name, url = new_schema_url(base)
    try:
        yield url
    finally:
        drop_schema(name, base)


_LEFT: list[str] = []  # schemas of harnesses that have no teardown; dropped when the process exits


def _drop_left() -> None:
    for name in _LEFT:
        with contextlib.suppress(Exception):
            drop_schema(name)


def database_for_harness(tmp_path: Path, name: str = "agentcli.db") -> str:
    """Like ``database`` for helpers without a teardown (the schema goes when the process ends)."""
    if not PG_URL:
        return str(tmp_path / name)
    if not _LEFT:
        atexit.register(_drop_left)
    schema, url = new_schema_url()
    _LEFT.append(schema)
    return url


@contextlib.contextmanager
def database(tmp_path: Path, name: str = "agentcli.db") -> Iterator[str]:
    """The database a test uses: ``tmp_path/name``, or a fresh PostgreSQL schema."""
    if PG_URL:
        with pg_schema_url() as url:
            yield url
    else:
        yield str(tmp_path / name)
