"""Choosing and opening the database: paths and SQLAlchemy URLs, one-line errors for what agentcli
cannot use or reach, schema creation by several processes at once, another program's lock, the
same-session lease, and copying sessions between databases (SQLite, and PostgreSQL when
AGENTCLI_TEST_DB_URL is set)."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from agentcli.store import ids
from agentcli.store.copy import copy_sessions
from agentcli.store.db import StoreError, resolve
from agentcli.store.lease import LeaseLost, SessionBusy, process_key
from agentcli.store.records import StepFinishPart, TextPart, Tokens, UserMessage
from agentcli.store.schema import SCHEMA_VERSION
from agentcli.store.store import Store
from tests.dbs import PG_URL, database, pg_schema_url


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with database(tmp_path) as value:
        yield value


# --- which database --------------------------------------------------------------------------


def test_a_plain_path_and_a_sqlite_url_name_the_same_file(tmp_path: Path) -> None:
    assert resolve(str(tmp_path / "a.db")).path == tmp_path / "a.db"
    assert resolve(f"sqlite:///{tmp_path}/a.db").path == tmp_path / "a.db"
    assert resolve("~/x.db").path == Path("~/x.db").expanduser()
    pg = resolve("postgresql+psycopg://me:secret@db.example:5432/agents")
    assert pg.path is None and pg.dialect == "postgresql" and "secret" not in pg.display()


@pytest.mark.parametrize(
    "value",
    [
        "mysql://u@h/db",
        "postgresql+asyncpg://u@h/db",
        "postgresql+pg8000://u@h/db",
        "sqlite://",
        "sqlite:///:memory:",
        "oracle+cx_oracle://u:pw@h/db",
        "://nothing",
    ],
)
def test_an_unusable_url_is_one_line(value: str) -> None:
    with pytest.raises(StoreError) as info:
        resolve(value)
    assert "\n" not in str(info.value) and "pw" not in str(info.value)


# --- creating the schema -----------------------------------------------------------------------


def _open_and_write(url: str, ready: Any, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    ready.wait(120)  # all at once, however slowly each process started
    try:
        store = Store(url)
        store.create_session("/p")
        store.close()
        out.put("ok")
    except Exception as exc:  # reported to the test, which shows it
        out.put(f"{type(exc).__name__}: {exc}")


def test_several_processes_creating_a_new_database_at_once_all_succeed(url: str) -> None:
    # Fresh processes, not forks: a fork of a test worker copies whatever locks its other threads held.
    ctx = multiprocessing.get_context("spawn")
    out, ready = ctx.Queue(), ctx.Barrier(8)
    procs = [ctx.Process(target=_open_and_write, args=(url, ready, out)) for _ in range(8)]
    for p in procs:
        p.start()
    results = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert results == ["ok"] * 8
    store = Store(url)
    assert len(store.list_sessions()) == 8
    store.close()


def test_the_schema_version_is_recorded_on_every_backend(url: str) -> None:
    store = Store(url)
    with store.engine.connect() as conn:
        if store.dialect == "sqlite":
            assert conn.exec_driver_sql("PRAGMA user_version").scalar() == SCHEMA_VERSION
        else:
            assert conn.exec_driver_sql("SELECT version FROM agentcli_schema").scalar() == SCHEMA_VERSION
    store.close()


def test_a_newer_schema_is_refused_in_one_line(url: str) -> None:
    store = Store(url)
    with store.engine.begin() as conn:
        if store.dialect == "sqlite":
            conn.exec_driver_sql(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
        else:
            conn.exec_driver_sql(f"UPDATE agentcli_schema SET version = {SCHEMA_VERSION + 1}")
    store.close()
    with pytest.raises(StoreError) as info:
        Store(url)
    assert "newer" in str(info.value) and "\n" not in str(info.value)


def test_a_write_blocked_by_another_programs_lock_is_one_line_naming_the_lock(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_DB_BUSY_TIMEOUT", "0.5")
    store = Store(url)
    sid = store.create_session("/p").id
    if store.dialect == "sqlite":
        assert store.path is not None
        other = sqlite3.connect(store.path)
        other.execute("BEGIN EXCLUSIVE")
        release = other.rollback
    else:
        import psycopg
        from sqlalchemy.engine import make_url

        other = psycopg.connect(
            make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        )
        other.execute("LOCK TABLE session IN ACCESS EXCLUSIVE MODE")
        release = other.rollback
    try:
        with pytest.raises(StoreError) as info:
            store.update_session(sid, title="blocked")
    finally:
        release()
        other.close()
    message = str(info.value)
    assert "locked by another program" in message and "\n" not in message
    store.update_session(sid, title="after")  # the lock gone, the store works again
    assert store.get_session(sid).title == "after"
    store.close()


# --- the same-session lease ------------------------------------------------------------------


def test_a_second_agent_waits_for_the_session_then_gets_it(url: str) -> None:
    a, b = Store(url), Store(url)
    sid = a.create_session("/p").id
    held = a.lease(sid)
    told: list[str] = []
    got = threading.Event()

    def second() -> None:
        with b.lease(sid, wait_s=30, on_wait=told.append):
            got.set()

    worker = threading.Thread(target=second)
    worker.start()
    time.sleep(0.5)
    assert not got.is_set()
    held.release()
    worker.join(30)
    assert got.is_set()
    assert len(told) == 1 and "busy" in told[0] and "\n" not in told[0]
    a.close()
    b.close()


def test_a_busy_session_is_refused_after_the_wait_in_one_line(url: str) -> None:
    a, b = Store(url), Store(url)
    sid = a.create_session("/p").id
    with a.lease(sid), pytest.raises(SessionBusy) as info:
        b.lease(sid, wait_s=0.3)
    assert sid in str(info.value) and "pid" in str(info.value) and "\n" not in str(info.value)
    a.close()
    b.close()


def test_the_heartbeat_keeps_a_long_turn_leased_and_a_dead_holder_lapses(url: str) -> None:
    a, b = Store(url), Store(url)
    sid = a.create_session("/p").id
    # A ttl long enough that a loaded CI machine cannot stall the heartbeat (every ttl/3) past it.
    held = a.lease(sid, ttl_s=2.0)
    time.sleep(3.0)  # one and a half ttls: renewed by the heartbeat all along
    with pytest.raises(SessionBusy):
        b.lease(sid, wait_s=0)
    held._stop.set()  # the holder dies: no more renewals, no release
    assert held._thread is not None
    held._thread.join(5)
    with b.lease(sid, wait_s=10):
        pass
    assert not held.renew()  # the old holder finds out it lost the session
    a.close()
    b.close()


def test_a_turn_left_behind_writes_nothing_and_the_next_turn_takes_the_session_at_once(url: str) -> None:
    store = Store(url)
    sid = store.create_session("/p").id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(msg)
    taken, go_on, outcome = threading.Event(), threading.Event(), []

    def old_turn() -> None:  # a turn that would not wind down: it goes on after it was left
        with store.lease(sid):
            taken.set()
            go_on.wait(60)
            try:
                store.put_part(
                    TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="late")
                )
                outcome.append("written")
            except LeaseLost:
                outcome.append("refused")

    left = threading.Thread(target=old_turn)
    left.start()
    assert taken.wait(60)
    store.abandon(sid)  # the chat gave up on it
    with store.lease(sid, wait_s=0):  # the next turn, in the same process: no wait
        store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="fresh"))
        go_on.set()
        left.join(60)
    assert outcome == ["refused"]
    assert [p.text for m in store.messages(sid) for p in m.parts] == ["fresh"]  # type: ignore[union-attr]
    store.close()


def test_a_holder_stalled_past_its_lease_writes_nothing_once_the_session_is_taken_over(url: str) -> None:
    a, b = Store(url), Store(url)
    sid = a.create_session("/p").id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
    held = a.lease(sid, ttl_s=0.5)
    a.put_message(msg)
    held._stop.set()  # the holder stalls: no more renewals (a suspended laptop, a lost network)
    assert held._thread is not None
    held._thread.join(5)
    late = TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="stale")
    with b.lease(sid, wait_s=30):  # waits for the lapse, then takes the session
        b.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="fresh"))
        with pytest.raises(LeaseLost) as info:
            a.put_part(late)
        assert "taken over" in str(info.value) and sid in str(info.value) and "\n" not in str(info.value)
        with pytest.raises(LeaseLost):  # every write of the session, not only parts
            a.update_session(sid, title="stale title")
    with pytest.raises(LeaseLost):  # lost for good, even once the other agent is done
        a.set_state(sid, "todos", ["stale"])
    assert [p.text for m in b.messages(sid) for p in m.parts] == ["fresh"]  # type: ignore[union-attr]
    assert b.get_session(sid).title == "" and b.get_state(sid, "todos") is None
    held.release()  # frees nothing of the other agent's
    a.put_part(late)  # the lease released, the store no longer guards the session
    a.close()
    b.close()


def _hold_as(store: Store, sid: str, owner: str) -> None:
    """A lease row as another agent leaves it: ``owner``, for another minute."""
    from agentcli.store.lease import _now_sql

    with store.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO session_lease (session_id, owner, holder, expires) "
                f"VALUES (:sid, :owner, 'elsewhere pid 1', {_now_sql(store.dialect)} + 60000)"
            ),
            {"sid": sid, "owner": owner},
        )


@pytest.mark.skipif(process_key(os.getpid()) is None, reason="no /proc to tell a process is gone")
def test_a_lease_whose_holder_process_is_gone_is_taken_at_once_and_only_then(url: str) -> None:
    store = Store(url)
    me = process_key(os.getpid())
    assert me is not None
    boot, namespace, _pid, _start = me.split("/")
    sleeper = subprocess.Popen(["sleep", "60"])
    alive = process_key(sleeper.pid)
    try:
        cases = {
            "this process": f"t1 {me}",
            "a live process": f"t2 {alive}",
            "another boot": f"t3 not-{boot}/{namespace}/{sleeper.pid + 1_000_000}/1",
            "an owner that does not say": "t4",
        }
        for case, owner in cases.items():
            sid = store.create_session("/p").id
            _hold_as(store, sid, owner)
            with pytest.raises(SessionBusy):
                store.lease(sid, wait_s=0)
                pytest.fail(f"the lease of {case} was taken before its time")
    finally:
        sleeper.kill()
        sleeper.wait()
    for gone in (f"t5 {alive}", f"t6 {boot}/{namespace}/{sleeper.pid}/{int(me.split('/')[3]) + 1}"):
        sid = store.create_session("/p").id  # the killed sleeper; its pid with another start time
        _hold_as(store, sid, gone)
        with store.lease(sid, wait_s=0):
            store.update_session(sid, title="taken from the dead")
        assert store.get_session(sid).title == "taken from the dead"
    store.close()


def _expired(store: Store, sid: str) -> bool:
    from agentcli.store.lease import _now_sql

    with store.engine.connect() as conn:
        return bool(
            conn.exec_driver_sql(
                f"SELECT expires < {_now_sql(store.dialect)} FROM session_lease WHERE session_id = '{sid}'"
            ).scalar()
        )


def test_a_lease_that_lapsed_without_a_taker_is_still_the_holders(url: str) -> None:
    store = Store(url)
    sid = store.create_session("/p").id
    held = store.lease(sid, ttl_s=0.3)
    held._stop.set()
    assert held._thread is not None
    held._thread.join(5)
    while not _expired(store, sid):  # expired, but nobody took it: nobody else wrote
        time.sleep(0.05)
    store.update_session(sid, title="still mine")
    assert held.renew() and store.get_session(sid).title == "still mine"
    held.release()
    store.close()


# --- copying -------------------------------------------------------------------------------


def _fill(store: Store, n: int) -> list[str]:
    out = []
    for i in range(n):
        sid = store.create_session(f"/p{i}", title=f"session {i}").id
        msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
        store.put_message(msg)
        store.put_part(
            TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text=f"about walrus {i}")
        )
        store.put_part(
            StepFinishPart(
                id=ids.ascending("prt"),
                session_id=sid,
                message_id=msg.id,
                tokens=Tokens(total=10, input=7, output=3),
                cost=0.25,
            )
        )
        store.set_state(sid, "todos", [{"content": f"todo {i}"}])
        out.append(sid)
    return out


def test_sessions_copy_between_databases_and_again_changes_nothing(tmp_path: Path, url: str) -> None:
    source = Store(tmp_path / "laptop.db")
    sids = _fill(source, 3)
    target = Store(url)
    first = copy_sessions(source, target)
    assert (first.sessions, first.messages, first.parts) == (3, 3, 6)
    copy_sessions(source, target)  # idempotent
    for sid in sids:
        assert target.get_session(sid) == source.get_session(sid)
        assert target.messages(sid) == source.messages(sid)
        assert target.get_state(sid, "todos") == source.get_state(sid, "todos")
    assert len(target.list_sessions()) == 3
    assert {h.session_id for h in target.search("walrus")} == set(sids)
    # and back: a session continued on the shared database comes home with its new messages
    msg = UserMessage(id=ids.ascending("msg"), session_id=sids[0])
    target.put_message(msg)
    copy_sessions(target, source, [sids[0]])
    assert source.messages(sids[0]) == target.messages(sids[0]) and len(source.messages(sids[0])) == 2
    source.close()
    target.close()


@pytest.mark.skipif(
    not PG_URL, reason="needs a PostgreSQL server (AGENTCLI_TEST_DB_URL): a row lock held on one session"
)
def test_a_session_the_target_refuses_is_named_and_skipped_and_the_rest_copied(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_DB_BUSY_TIMEOUT", "0.5")
    source = Store(tmp_path / "laptop.db")
    sids = _fill(source, 3)
    target = Store(url)
    copy_sessions(source, target, [sids[1]])
    source.update_session(sids[1], title="changed on the laptop")
    other = Store(url)
    with other.engine.begin() as conn:  # another program holds that session's row
        conn.execute(text("SELECT id FROM session WHERE id = :id FOR UPDATE"), {"id": sids[1]})
        result = copy_sessions(source, target)
    assert result.sessions == 2 and [s.session_id for s in result.skipped] == [sids[1]]
    assert "locked" in result.skipped[0].reason and "\n" not in result.skipped[0].reason
    assert {s.id for s in target.list_sessions()} == set(sids)
    assert target.get_session(sids[1]).title == "session 1"  # left as it was, not half-copied
    assert target.messages(sids[2]) == source.messages(sids[2])
    for store in (source, target, other):
        store.close()


@pytest.mark.skipif(not PG_URL, reason="needs a PostgreSQL server (AGENTCLI_TEST_DB_URL)")
def test_postgres_schemas_are_separate_databases_for_agentcli() -> None:
    with pg_schema_url() as one, pg_schema_url() as two:
        a, b = Store(one), Store(two)
        a.create_session("/p")
        assert b.list_sessions() == []
        a.close()
        b.close()


@pytest.mark.skipif(
    not PG_URL, reason="needs a PostgreSQL server (AGENTCLI_TEST_DB_URL): a server-side disconnect"
)
def test_connections_dropped_by_the_server_are_replaced_and_nothing_written_is_lost(url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    store = Store(url)
    sid = store.create_session("/p", title="before").id
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    from sqlalchemy import text

    with store.engine.connect() as conn:  # the pooled connection the store reads through next
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar()
    # Only this store's connection: other tests run on the same server at the same time.
    with psycopg.connect(dsn, autocommit=True) as admin:  # a server restart, a proxy timing out
        killed = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid = %s", (pid,)
        ).fetchone()
    assert killed is not None and killed[0] >= 1
    assert store.get_session(sid).title == "before"  # the pool pings, reconnects, reads
    store.update_session(sid, title="after")
    assert store.get_session(sid).title == "after"
    store.close()
