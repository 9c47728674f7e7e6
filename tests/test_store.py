"""The SQLite store on a real file: ids, file and connection settings, schema versions, newest-first
paging, session totals and session lookup."""

from __future__ import annotations

import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from agentcli.store import ids
from agentcli.store.db import StoreError
from agentcli.store.records import StepFinishPart, Tokens
from agentcli.store.schema import SCHEMA_VERSION
from agentcli.store.store import NotFound, Store
from tests.dbs import database, on_postgres
from tests.test_history import SES, assistant, user

sqlite_only = pytest.mark.skipif(on_postgres(), reason="about the SQLite file; PostgreSQL has its own test")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with database(tmp_path / "sub") as url:
        s = Store(url)
        yield s
        s.close()


def _session(store: Store) -> str:
    from agentcli.store.records import SessionInfo

    store.put_session(SessionInfo(id=SES, directory="/p"))
    return SES


# --- ids ----------------------------------------------------------------------------------------


def test_ids_strictly_increase_within_one_millisecond() -> None:
    made = [ids.ascending("msg") for _ in range(10_000)]
    assert all(a < b for a, b in zip(made, made[1:], strict=False))


def test_ids_are_unique_and_ordered_across_threads() -> None:
    per_thread: list[list[str]] = [[] for _ in range(4)]

    def work(out: list[str]) -> None:
        out.extend(ids.ascending("prt") for _ in range(2_500))

    threads = [threading.Thread(target=work, args=(out,)) for out in per_thread]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    everything = [i for out in per_thread for i in out]
    assert len(set(everything)) == 10_000
    for out in per_thread:
        assert out == sorted(out)


def test_timestamp_round_trip() -> None:
    before = int(time.time() * 1000)
    made = ids.ascending("ses")
    after = int(time.time() * 1000)
    assert made.startswith("ses_")
    # The counter may borrow the next millisecond when 4 095 ids were made in one.
    assert before <= ids.timestamp_ms(made) <= after + 1


# --- the file -----------------------------------------------------------------------------------


@sqlite_only
def test_db_file_is_private_and_in_wal_mode(store: Store) -> None:
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


@sqlite_only
def test_a_reader_is_not_blocked_by_an_open_write_transaction(store: Store, tmp_path: Path) -> None:
    sid = store.create_session("/p", title="committed").id
    writer = sqlite3.connect(store.path, timeout=0.1)
    writer.execute("BEGIN EXCLUSIVE")  # in rollback-journal mode this would lock readers out
    writer.execute("UPDATE session SET directory = 'uncommitted'")
    try:
        other = Store(store.path)
        started = time.monotonic()
        seen = other.get_session(sid)
        assert time.monotonic() - started < 5  # blocked, it would wait for the busy timeout (10 s)
        assert seen.title == "committed" and seen.directory == "/p"
        other.close()
    finally:
        writer.rollback()
        writer.close()


@sqlite_only
def test_schema_version_is_recorded(store: Store) -> None:
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA user_version").scalar() == SCHEMA_VERSION


@sqlite_only
def test_a_newer_database_is_refused_in_one_line(store: Store) -> None:
    sid = store.create_session("/p").id
    store.close()
    raw = sqlite3.connect(store.path)
    raw.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    raw.commit()
    raw.close()
    with pytest.raises(StoreError) as info:
        Store(store.path)
    message = str(info.value)
    assert "newer" in message and "\n" not in message
    # Nothing was touched: an up-to-date agentcli still finds the session.
    raw = sqlite3.connect(store.path)
    assert raw.execute("SELECT id FROM session").fetchall() == [(sid,)]
    raw.close()


@sqlite_only
def test_a_file_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(StoreError) as info:
        Store(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes().startswith(b"this is not sqlite")  # left as it was


# --- paging -------------------------------------------------------------------------------------


def _history(store: Store, n: int) -> list[str]:
    sid = _session(store)
    msgs = [user(f"m{i}") for i in range(n)]
    store.import_messages(msgs)
    assert sid == SES
    return [m.id for m in msgs]


def _count_message_selects(store: Store) -> tuple[list[str], Any]:
    selects: list[str] = []

    def spy(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT") and "FROM message" in statement:
            selects.append(statement)

    event.listen(store.engine, "before_cursor_execute", spy)
    return selects, lambda: event.remove(store.engine, "before_cursor_execute", spy)


def test_stream_is_newest_first_across_pages(store: Store) -> None:
    made = _history(store, 120)
    got = [m.id for m in store.stream(SES, page=50)]
    assert got == list(reversed(made))
    assert [m.id for m in store.messages(SES)] == made
    assert [p.text for p in store.messages(SES)[0].parts] == ["m0"]  # type: ignore[attr-defined]


def test_a_consumer_that_stops_early_reads_no_more_pages(store: Store) -> None:
    _history(store, 200)
    selects, stop = _count_message_selects(store)
    try:
        first = list(islice(store.stream(SES, page=50), 10))
        assert len(first) == 10 and len(selects) == 1
        selects.clear()
        list(islice(store.stream(SES, page=50), 51))
        assert len(selects) == 2
    finally:
        stop()


def test_unknown_session_stream_is_empty_and_get_is_not_found(store: Store) -> None:
    assert list(store.stream("ses_missing")) == []
    with pytest.raises(NotFound):
        store.get_session("ses_missing")


# --- totals -------------------------------------------------------------------------------------


def test_session_totals_follow_step_finish_parts_once(store: Store) -> None:
    sid = _session(store)
    u = user("q")
    a = assistant(u, "a")
    store.put_message(u.info)
    store.put_message(a.info)
    store.put_message(a.info)  # rewritten: still one message
    step = StepFinishPart(
        id=ids.ascending("prt"),
        session_id=sid,
        message_id=a.id,
        reason="stop",
        tokens=Tokens(input=100, output=20),
        cost=0.5,
    )
    store.put_part(step)
    store.put_part(step)  # a rewrite must not count twice
    info = store.get_session(sid)
    assert info.messages == 2 and info.tokens.input == 100 and info.tokens.output == 20 and info.cost == 0.5
    store.put_part(step.model_copy(update={"id": ids.ascending("prt")}))
    info = store.get_session(sid)
    assert info.tokens.input == 200 and info.cost == 1.0


# --- lookup -------------------------------------------------------------------------------------


def test_find_session_by_id_prefix(store: Store) -> None:
    a = store.create_session("/p").id
    b = store.create_session("/p").id
    common = next(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    assert store.find_session(a).id == a
    assert store.find_session(b[: common + 1]).id == b
    with pytest.raises(NotFound, match="several sessions"):
        store.find_session(a[:common])
    with pytest.raises(NotFound, match="no session matches"):
        store.find_session("ses_ffffffffffffff")
    with pytest.raises(NotFound):
        store.find_session("ses_%")  # LIKE wildcards are not patterns


def test_concurrent_session_updates_lose_nothing(store: Store) -> None:
    """The loop bumps totals while the title thread sets the title: neither may overwrite the other."""
    sid = store.create_session("/tmp", "m").id
    msg = user("hi")
    store.put_message(msg.info.model_copy(update={"session_id": sid}))
    steps, titles = 200, 200

    def bump() -> None:
        for _ in range(steps):
            store.put_part(
                StepFinishPart(
                    id=ids.ascending("prt"),
                    session_id=sid,
                    message_id=msg.id,
                    tokens=Tokens(total=3, input=2, output=1),
                    cost=0.5,
                )
            )

    def retitle() -> None:
        for i in range(titles):
            store.update_session(sid, title=f"title {i}")
            store.update_session(sid, context_tokens=i, add={"compactions": 1})

    workers = [threading.Thread(target=bump), threading.Thread(target=retitle)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    info = store.get_session(sid)
    assert info.tokens.total == 3 * steps and info.tokens.input == 2 * steps and info.cost == 0.5 * steps
    assert (
        info.title == f"title {titles - 1}"
        and info.compactions == titles
        and info.context_tokens == titles - 1
    )
    assert info.messages == 1


def test_update_session_refuses_unknown_fields(store: Store) -> None:
    sid = store.create_session("/tmp", "m").id
    with pytest.raises(ValueError):
        store.update_session(sid, nonsense=1)
    with pytest.raises(NotFound):
        store.update_session("ses_missing", title="x")
