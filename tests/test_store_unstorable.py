"""The store boundary: every write keeps what no backend could store (NUL, lone surrogates) as
U+FFFD, and a row this agentcli cannot read is one line naming it. SQLite by default; PostgreSQL
when AGENTCLI_TEST_DB_URL is set."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import text

from agentcli.store import ids
from agentcli.store.records import SessionInfo, TextPart, ToolPart, ToolState, UserMessage, WithParts
from agentcli.store.rows import BadRecord
from agentcli.store.store import Store
from tests.dbs import database

BAD = "a\x00b\ud800c\udcffd"
KEPT = "a\ufffdb\ufffdc\ufffdd"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with database(tmp_path) as url:
        s = Store(url)
        yield s
        s.close()


def test_every_write_keeps_unstorable_characters_as_replacements(store: Store) -> None:
    info = store.create_session(f"/p/{BAD}", title=BAD)
    sid = info.id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid, model=BAD)
    store.put_message(msg)
    store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text=f"{BAD} walrus"))
    tool = ToolPart(
        id=ids.ascending("prt"),
        session_id=sid,
        message_id=msg.id,
        call_id="c1",
        tool="bash",
        state=ToolState(
            status="completed", input={BAD: BAD}, output=f"out {BAD} narwhal", metadata={"k": BAD}
        ),
    )
    store.put_part(tool)
    store.update_session(sid, title=f"renamed {BAD}")
    store.set_state(sid, "todos", [{"content": BAD}])

    assert store.get_session(sid).title == f"renamed {KEPT}"
    assert store.get_session(sid).directory == f"/p/{KEPT}"
    [got] = store.messages(sid)
    assert got.info.model == KEPT
    assert got.parts[0].text == f"{KEPT} walrus"  # type: ignore[union-attr]
    state = got.parts[1].state  # type: ignore[union-attr]
    assert (
        state.input == {KEPT: KEPT}
        and state.output == f"out {KEPT} narwhal"
        and state.metadata == {"k": KEPT}
    )
    assert store.get_state(sid, "todos") == [{"content": KEPT}]
    assert {h.part_id for h in store.search("walrus")} | {h.part_id for h in store.search("narwhal")} == {
        p.id for p in got.parts
    }


def test_imported_sessions_are_cleaned_too(store: Store) -> None:
    info = SessionInfo(id=ids.ascending("ses"), directory="/p", title=BAD)
    msg = UserMessage(id=ids.ascending("msg"), session_id=info.id)
    part = TextPart(id=ids.ascending("prt"), session_id=info.id, message_id=msg.id, text=BAD)
    store.import_sessions([(info, [WithParts(info=msg, parts=[part])])], {info.id: {"k": BAD}})
    assert store.get_session(info.id).title == KEPT
    assert store.messages(info.id)[0].text() == KEPT
    assert store.get_state(info.id, "k") == KEPT


def test_text_that_only_looks_like_an_escape_is_kept_as_typed(store: Store) -> None:
    typed = 'printf "\\u0000" and "\\\\u0000" stay as typed; a real one: \x00.'
    sid = store.create_session("/p").id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(msg)
    store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text=typed))
    assert store.messages(sid)[0].text() == typed.replace("\x00", "\ufffd")


def test_a_row_that_cannot_be_read_is_one_line_naming_it(store: Store) -> None:
    sid = store.create_session("/p").id
    msg = UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(msg)
    part = TextPart(id=ids.ascending("prt"), session_id=sid, message_id=msg.id, text="fine")
    store.put_part(part)
    with store.engine.begin() as conn:  # what a newer agentcli (or a damaged file) left
        conn.execute(
            text("UPDATE part SET data = :d WHERE id = :id"), {"d": '{"type": "hologram"}', "id": part.id}
        )
    with pytest.raises(BadRecord) as info:
        store.messages(sid)
    assert part.id in str(info.value) and "hologram" in str(info.value) and "\n" not in str(info.value)
