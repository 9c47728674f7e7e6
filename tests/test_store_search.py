"""Full-text search through ``Store.search``: what is found (text, reasoning, tool input and output),
ranking, filters, snippets, user text that is never query syntax, and an index that follows every
write, update and delete of a part (run against SQLite, and PostgreSQL with AGENTCLI_TEST_DB_URL)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.store import ids
from agentcli.store.fulltext import MARK
from agentcli.store.records import (
    AssistantMessage,
    ReasoningPart,
    StepFinishPart,
    TextPart,
    ToolPart,
    ToolState,
    UserMessage,
)
from agentcli.store.store import Store
from tests.dbs import database, on_postgres


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with database(tmp_path) as url:
        s = Store(url)
        yield s
        s.close()


def _turn(
    store: Store,
    sid: str,
    question: str,
    answer: str = "",
    *,
    reasoning: str = "",
    tool: tuple[str, dict[str, object], str] | None = None,
) -> tuple[str, str]:
    user = UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(user)
    store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=user.id, text=question))
    reply = AssistantMessage(id=ids.ascending("msg"), session_id=sid, parent_id=user.id)
    store.put_message(reply)
    if reasoning:
        store.put_part(
            ReasoningPart(id=ids.ascending("prt"), session_id=sid, message_id=reply.id, text=reasoning)
        )
    if tool:
        name, args, output = tool
        store.put_part(
            ToolPart(
                id=ids.ascending("prt"),
                session_id=sid,
                message_id=reply.id,
                call_id="c1",
                tool=name,
                state=ToolState(status="completed", input=args, output=output),
            )
        )
    if answer:
        store.put_part(TextPart(id=ids.ascending("prt"), session_id=sid, message_id=reply.id, text=answer))
    store.put_part(StepFinishPart(id=ids.ascending("prt"), session_id=sid, message_id=reply.id))
    return user.id, reply.id


def test_finds_text_reasoning_and_tool_input_and_output(store: Store) -> None:
    sid = store.create_session("/p", title="parser work").id
    user_id, reply_id = _turn(
        store,
        sid,
        "why does the tokenizer choke on tabs",
        "It splits on spaces only.",
        reasoning="maybe the lexer ignores whitespace classes",
        tool=("bash", {"command": "grep -rn zanzibar src/"}, "src/lexer.py:12: quokka = 1"),
    )
    hits = store.search("tokenizer")
    assert [(h.message_id, h.role) for h in hits] == [(user_id, "user")]
    assert hits[0].session_id == sid and hits[0].session_title == "parser work"
    assert [h.message_id for h in store.search("lexer whitespace")] == [reply_id]  # reasoning
    assert [h.message_id for h in store.search("zanzibar")] == [reply_id]  # tool input
    assert [h.message_id for h in store.search("quokka")] == [reply_id]  # tool output
    assert store.search("nothing-like-this-anywhere") == []


def test_snippet_marks_the_match_and_stays_short(store: Store) -> None:
    sid = store.create_session("/p").id
    filler = " ".join(f"word{i}" for i in range(300))
    _turn(store, sid, f"{filler} the needle is here {filler}")
    [hit] = store.search("needle")
    assert f"{MARK[0]}needle{MARK[1]}" in hit.snippet
    assert len(hit.snippet) < 300 and "\n" not in hit.snippet


def test_better_matches_rank_first_and_limit_applies(store: Store) -> None:
    sid = store.create_session("/p").id
    _turn(store, sid, "retry once")
    best, _ = _turn(store, sid, "retry retry retry backoff retry")
    _turn(store, sid, "a long message that mentions retry once among many other words " * 5)
    hits = store.search("retry")
    assert len(hits) == 3 and hits[0].message_id == best
    assert hits == sorted(hits, key=lambda h: -h.score)
    assert len(store.search("retry", limit=2)) == 2


def test_all_words_must_match_a_star_makes_a_prefix_and_quotes_make_phrases(store: Store) -> None:
    sid = store.create_session("/p").id
    a, _ = _turn(store, sid, "connection pool exhausted under load")
    b, _ = _turn(store, sid, "the pool was fine, the connection dropped")
    assert {h.message_id for h in store.search("connection pool")} == {a, b}
    assert [h.message_id for h in store.search('"connection pool"')] == [a]
    assert {h.message_id for h in store.search("pool exhau*")} == {a}
    assert store.search("pool exhau") == []  # whole words unless asked for a prefix
    assert store.search("connection kangaroo") == []


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "'",
        "(",
        ")",
        "*",
        "a AND",
        "NOT",
        "OR OR",
        "col:umn",
        "foo^",
        "-x",
        "~",
        "&",
        "|",
        "!",
        "<->",
        ":*",
        "\\",
        "NEAR(a b)",
        '"unterminated',
        "{x}",
        "%",
        "?",
        "x' OR '1'='1",
        "🙂",
        "   ",
        "",
    ],
)
def test_punctuation_and_query_syntax_never_raise(store: Store, query: str) -> None:
    sid = store.create_session("/p").id
    _turn(store, sid, "plain words AND NOT OR near x")
    assert isinstance(store.search(query), list)


def test_words_with_punctuation_match_as_phrases(store: Store) -> None:
    sid = store.create_session("/p").id
    a, _ = _turn(store, sid, "edit src/app.py and config.toml")
    _turn(store, sid, "the app is in src, py files elsewhere")
    assert [h.message_id for h in store.search("src/app.py")] == [a]
    assert [h.message_id for h in store.search("config.toml")] == [a]


def test_filters_by_session_and_directory(store: Store) -> None:
    one = store.create_session("/one", title="first").id
    two = store.create_session("/two", title="second").id
    _turn(store, one, "shared topic alpha")
    _turn(store, two, "shared topic beta")
    assert {h.session_id for h in store.search("shared")} == {one, two}
    assert {h.session_id for h in store.search("shared", session_id=two)} == {two}
    assert {h.session_title for h in store.search("shared", directory="/one")} == {"first"}
    assert store.search("alpha", session_id=two) == []


def test_index_follows_updates_and_deletes(store: Store) -> None:
    sid = store.create_session("/p").id
    user = UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(user)
    part = TextPart(
        id=ids.ascending("prt"), session_id=sid, message_id=user.id, text="first draft about walruses"
    )
    store.put_part(part)
    assert len(store.search("walruses")) == 1
    store.put_part(part.model_copy(update={"text": "rewritten about narwhals"}))  # a streaming rewrite
    assert store.search("walruses") == []
    assert [h.part_id for h in store.search("narwhals")] == [part.id]
    store.delete_session(sid)
    assert store.search("narwhals") == []


def test_existing_parts_are_indexed_when_an_old_database_is_upgraded(tmp_path: Path) -> None:
    if on_postgres():
        pytest.skip(
            "upgrading a version-1 file is a SQLite case; PostgreSQL support starts at the current schema"
        )
    path = tmp_path / "old.db"
    store = Store(path)
    sid = store.create_session("/p").id
    _turn(store, sid, "history from before search existed")
    store.close()
    raw = sqlite3.connect(path)  # make it the version-1 file an older agentcli wrote
    for name in ("part_fts_ai", "part_fts_au", "part_fts_ad"):
        raw.execute(f"DROP TRIGGER {name}")
    raw.execute("DROP TABLE part_fts")
    raw.execute("DROP TABLE session_lease")
    raw.execute("DROP TABLE agentcli_migrations")  # from before migrations were recorded by name
    raw.execute("PRAGMA user_version=1")
    raw.commit()
    raw.close()
    store = Store(path)
    assert len(store.search("existed")) == 1
    store.close()
