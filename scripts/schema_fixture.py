"""Write a test fixture of the database an agentcli version makes: the exact statements its schema
setup ran on a new database, then one session it wrote (as INSERTs), then its schema version.
``tests/test_store_migrations.py`` loads each fixture and upgrades it with today's migrations.

Run it with an older agentcli first on the path (a checkout of that commit):

    git worktree add /tmp/old <commit>
    PYTHONPATH=/tmp/old python scripts/schema_fixture.py sqlite <commit> tests/fixtures/schemas/NAME.sql
    AGENTCLI_FIXTURE_PG=postgresql+psycopg://… PYTHONPATH=/tmp/old \\
        python scripts/schema_fixture.py postgresql <commit> tests/fixtures/schemas/NAME.sql

On PostgreSQL the URL's database gets a throwaway schema of its own.
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

import sqlalchemy
from sqlalchemy import event, text

from agentcli.store import ids
from agentcli.store import records as r
from agentcli.store.store import Store

DDL = ("CREATE", "ALTER", "PRAGMA USER_VERSION=", "INSERT INTO AGENTCLI_SCHEMA")
TABLES = {  # the columns each version's writer filled (PostgreSQL's generated ``search`` is not one)
    "session": ["id", "parent_id", "directory", "time_created", "time_updated", "data"],
    "message": ["id", "session_id", "role", "time_created", "time_updated", "data"],
    "part": ["id", "message_id", "session_id", "type", "time_created", "time_updated", "data"],
    "session_state": ["session_id", "key", "value"],
}


def _capture() -> list[str]:
    ran: list[str] = []

    @event.listens_for(sqlalchemy.engine.Engine, "before_cursor_execute")
    def _record(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        stripped = statement.strip()
        if stripped.upper().startswith(DDL) and "%(" not in stripped and "?" not in stripped:
            ran.append(stripped)

    return ran


def _admin(sql: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(os.environ["AGENTCLI_FIXTURE_PG"]).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as admin:
        admin.execute(sql)


def _open(backend: str, tmp: str) -> tuple[Store, str | None]:
    if backend == "sqlite":
        return Store(Path(tmp) / "old.db"), None  # type: ignore[arg-type]
    base = os.environ["AGENTCLI_FIXTURE_PG"]
    schema = f"fixture_{secrets.token_hex(4)}"
    _admin(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in base else "?"
    return Store(f"{base}{separator}options=-csearch_path%3D{schema}"), schema


def _write_session(store: Store, backend: str) -> None:
    sid = store.create_session("/home/me/project", "openai/gpt-4o", title="fix the parser").id
    user = r.UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(user)
    # SQLite took a NUL (kept as the JSON escape ``\u0000``); PostgreSQL never could.
    asked = "the walrus parser" + (" pasted\x00with a NUL" if backend == "sqlite" else "")
    store.put_part(r.TextPart(id=ids.ascending("prt"), session_id=sid, message_id=user.id, text=asked))
    reply = r.AssistantMessage(id=ids.ascending("msg"), session_id=sid, parent_id=user.id, finish="stop")
    store.put_message(reply)
    state = r.ToolState(status="completed", input={"filePath": "parser.py"}, output="def narwhal(): ...")
    call = r.ToolPart(
        id=ids.ascending("prt"), session_id=sid, message_id=reply.id, call_id="c1", tool="read", state=state
    )
    store.put_part(call)
    store.put_part(r.TextPart(id=ids.ascending("prt"), session_id=sid, message_id=reply.id, text="fixed it"))
    store.put_part(r.StepFinishPart(id=ids.ascending("prt"), session_id=sid, message_id=reply.id, cost=0.5))
    store.set_state(sid, "todos", [{"content": "write the tests"}])


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _rows(store: Store) -> list[str]:
    out = []
    with store.engine.connect() as conn:
        for table, columns in TABLES.items():
            names = ", ".join(f'"{c}"' for c in columns)
            for row in conn.execute(text(f"SELECT {names} FROM {table} ORDER BY 1, 2")):
                values = ", ".join(_literal(v) for v in row)
                out.append(f"INSERT INTO {table} ({names}) VALUES ({values})")
    return out


def main(backend: str, commit: str, out: Path) -> None:
    ran = _capture()
    with tempfile.TemporaryDirectory() as tmp:
        store, schema = _open(backend, tmp)
        schema_ddl = list(ran)
        if backend == "sqlite" and not any(s.upper().startswith("PRAGMA USER_VERSION=") for s in ran):
            with store.engine.connect() as conn:  # the oldest version set it on the raw connection
                schema_ddl.append(
                    f"PRAGMA user_version={conn.exec_driver_sql('PRAGMA user_version').scalar()}"
                )
        version = [
            s for s in schema_ddl if s.upper().startswith(("PRAGMA USER_VERSION=", "INSERT INTO AGENTCLI"))
        ]
        tables = [s for s in schema_ddl if s not in version]
        _write_session(store, backend)
        rows = _rows(store)
        store.close()
        if schema:
            _admin(f"DROP SCHEMA {schema} CASCADE")
    header = f"-- {backend} database made by agentcli {commit} (scripts/schema_fixture.py)\n\n"
    out.write_text(header + "".join(f"{s};\n\n" for s in [*tables, *rows, *version]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
