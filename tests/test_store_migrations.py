"""Schema migrations: a database made by every earlier version of agentcli upgrades to today's
schema with what it held intact — the databases older agentcli versions actually made (their own
DDL and rows, ``tests/fixtures/schemas``, written by ``scripts/schema_fixture.py`` from those
commits) and one stopped after each migration of today's list. SQLite by default; PostgreSQL when
AGENTCLI_TEST_DB_URL is set."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from agentcli.store import ids, migrations, schema, tables
from agentcli.store.db import StoreError, connect, resolve
from agentcli.store.records import AssistantMessage, TextPart, ToolPart, UserMessage
from agentcli.store.store import Store
from tests.dbs import database, on_postgres

FIXTURES = Path(__file__).parent / "fixtures" / "schemas"
BACKEND = "postgresql" if on_postgres() else "sqlite"


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with database(tmp_path) as value:
        yield value


def _statements(fixture: Path) -> list[str]:
    body = "\n".join(line for line in fixture.read_text().splitlines() if not line.startswith("--"))
    return [s.strip() for s in re.split(r";\n\s*\n", body) if s.strip()]


def _execute(url: str, statements: list[str]) -> None:
    """Run ``statements`` on the database as an older agentcli would have, bypassing today's store."""
    if BACKEND == "sqlite":
        raw = sqlite3.connect(url)
        raw.executescript(";\n".join(statements) + ";")
        raw.close()
        return
    engine = connect(resolve(url))
    with engine.begin() as conn:
        for statement in statements:
            conn.exec_driver_sql(statement.replace("%", "%%"))
    engine.dispose()


def _rows() -> list[str]:
    """The rows an older agentcli wrote (one session: a question, a tool call, an answer, todos)."""
    return [s for s in _statements(FIXTURES / f"{BACKEND}-ba9fd51.sql") if s.startswith("INSERT INTO ")]


def _made_by_history(url: str, fixture: str) -> None:
    _execute(url, _statements(FIXTURES / fixture))


def _stopped_after(url: str, count: int) -> None:
    """A database today's runner left after ``count`` migrations (names recorded), then rows."""
    engine = connect(resolve(url))  # the engine, not the store: nothing migrated
    with engine.begin() as conn:
        for step in migrations.MIGRATIONS[:count]:
            step(conn)
        if count:
            conn.exec_driver_sql(
                "CREATE TABLE agentcli_migrations "
                "(name VARCHAR NOT NULL PRIMARY KEY, applied BIGINT NOT NULL)"
            )
            for order, step in enumerate(migrations.MIGRATIONS[:count]):
                conn.execute(
                    text("INSERT INTO agentcli_migrations VALUES (:n, :o)"), {"n": step.__name__, "o": order}
                )
            schema._write_version(conn, count)
    engine.dispose()
    if count:
        _execute(url, _rows())


HISTORY = [f.name for f in sorted(FIXTURES.glob(f"{BACKEND}-*.sql"))]


def _same_sql(sql: str) -> str:
    """SQLite's DDL text as it matters: INTEGER and BIGINT are one type there, spacing is not meant."""
    return " ".join(re.sub(r"\bINTEGER\b", "BIGINT", sql).split()).replace("( ", "(")


def _shape(store: Store) -> set[tuple[str, ...]]:
    """The schema, comparable between databases made different ways: tables, columns, indexes,
    constraints, triggers (SQLite: INTEGER and BIGINT are one type, whitespace is not meaningful)."""
    with store.engine.connect() as conn:
        if store.dialect == "sqlite":
            rows = conn.exec_driver_sql("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master")
            return {(kind, name, table, _same_sql(sql)) for kind, name, table, sql in rows}
        columns = conn.execute(
            text(
                "SELECT table_name, column_name, data_type, is_nullable, coalesce(generation_expression, '') "
                "FROM information_schema.columns WHERE table_schema = current_schema()"
            )
        ).all()
        indexes = conn.execute(
            text(
                "SELECT tablename, indexname, replace(indexdef, current_schema() || '.', '') "
                "FROM pg_indexes WHERE schemaname = current_schema()"
            )
        ).all()
        constraints = conn.execute(
            text(
                "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint "
                "WHERE connamespace = current_schema()::regnamespace"
            )
        ).all()
    return {tuple(map(str, row)) for row in [*columns, *indexes, *constraints]}


def _fresh_shape(tmp_path: Path) -> set[tuple[str, ...]]:
    with database(tmp_path, "fresh.db") as fresh:
        store = Store(fresh)
        shape = _shape(store)
        store.close()
    return shape


def _assert_upgraded_with_history_intact(store: Store, had_rows: bool, sqlite_nul: bool) -> None:
    with store.engine.connect() as conn:
        assert schema.applied(conn) == schema.NAMES
        assert schema._read_version(conn) == schema.SCHEMA_VERSION
    if not had_rows:
        assert store.list_sessions() == []
    else:
        [session] = store.list_sessions()
        assert session.title == "fix the parser" and session.cost == 0.5
        question, answer = store.messages(session.id)
        assert isinstance(question.info, UserMessage) and isinstance(answer.info, AssistantMessage)
        asked = question.text()
        assert asked.startswith("the walrus parser") and "\x00" not in asked
        call = next(p for p in answer.parts if isinstance(p, ToolPart))
        assert call.state.output == "def narwhal(): ..." and answer.text() == "fixed it"
        assert store.get_state(session.id, "todos") == [{"content": "write the tests"}]
        # Search covers what was there before (a version-1 database had no index at all) ...
        assert [h.part_id for h in store.search("walrus")] == [question.parts[0].id]
        assert [h.part_id for h in store.search("narwhal")] == [call.id]
        if sqlite_nul:  # ... and the words after a NUL an older agentcli stored, which it never found
            assert asked == "the walrus parser pasted\ufffdwith a NUL"
            assert [h.part_id for h in store.search("NUL")] == [question.parts[0].id]
    # and the upgraded database works: a new session, a turn's writes, its lease
    sid = store.create_session("/p").id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
    with store.lease(sid):
        store.put_message(msg)
        store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="after"))
    assert [h.session_id for h in store.search("after")] == [sid]


@pytest.mark.parametrize("fixture", HISTORY)
def test_a_database_an_older_agentcli_made_upgrades_with_its_history_intact(
    url: str, tmp_path: Path, fixture: str
) -> None:
    _made_by_history(url, fixture)
    store = Store(url)
    _assert_upgraded_with_history_intact(store, had_rows=True, sqlite_nul=BACKEND == "sqlite")
    assert _shape(store) == _fresh_shape(tmp_path)  # the same schema as a database made today
    store.close()


@pytest.mark.parametrize("count", range(schema.SCHEMA_VERSION), ids=lambda n: f"after-{n}-migrations")
def test_a_database_stopped_after_each_migration_upgrades_to_todays_schema(
    url: str, tmp_path: Path, count: int
) -> None:
    _stopped_after(url, count)
    store = Store(url)
    _assert_upgraded_with_history_intact(store, had_rows=count > 0, sqlite_nul=False)
    assert _shape(store) == _fresh_shape(tmp_path)
    store.close()


def test_the_models_queries_use_match_what_the_migrations_create(url: str) -> None:
    store = Store(url)
    found = inspect(store.engine)
    for table in tables.metadata.sorted_tables:
        columns = {c["name"]: c for c in found.get_columns(table.name)}
        assert set(columns) >= {c.name for c in table.columns}, table.name
        for column in table.columns:
            assert columns[column.name]["nullable"] == column.nullable, (table.name, column.name)
        made = {i["name"] for i in found.get_indexes(table.name)}
        assert {i.name for i in table.indexes} <= made, table.name
    store.close()


def test_a_database_with_a_migration_this_agentcli_does_not_know_is_refused_in_one_line(url: str) -> None:
    Store(url).close()
    engine = connect(resolve(url))
    with engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO agentcli_migrations (name, applied) VALUES ('m999_hologram', 999)")
    engine.dispose()
    with pytest.raises(StoreError) as info:
        Store(url)
    message = str(info.value)
    assert "m999_hologram" in message and "newer" in message and "\n" not in message


def test_migrations_spell_their_own_ddl_never_todays_models() -> None:
    store_dir = Path(migrations.__file__).parent
    assert not [p.name for p in store_dir.glob("*.py") if "create_all" in p.read_text()]
    names = [m.__name__ for m in migrations.MIGRATIONS]
    assert len(set(names)) == len(names) and all(re.fullmatch(r"m\d{3}_[a-z0-9_]+", n) for n in names)
    assert [int(n[1:4]) for n in names] == list(range(1, len(names) + 1))
