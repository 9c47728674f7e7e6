"""Which database the store tests use: a SQLite file by default; with ``AGENTCLI_TEST_DB_URL`` set
(a ``postgresql+psycopg://`` URL of a server the test may create schemas on, as ``.ci/run`` sets
for its second pass) each test gets its own PostgreSQL schema, dropped afterwards."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

PG_URL = os.environ.get("AGENTCLI_TEST_DB_URL", "")


def on_postgres() -> bool:
    return bool(PG_URL)


@contextlib.contextmanager
def pg_schema_url(base: str = PG_URL) -> Iterator[str]:
    """A URL whose connections use a fresh schema (via ``search_path``) of ``base``'s database."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(base)
    name = f"t_{secrets.token_hex(6)}"
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {name}")
    separator = "&" if "?" in base else "?"
    try:
        yield f"{base}{separator}options={quote(f'-csearch_path={name}')}"
    finally:
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {name} CASCADE")


@contextlib.contextmanager
def database(tmp_path: Path, name: str = "agentcli.db") -> Iterator[str]:
    """The database a test uses: ``tmp_path/name``, or a fresh PostgreSQL schema."""
    if PG_URL:
        with pg_schema_url() as url:
            yield url
    else:
        yield str(tmp_path / name)
