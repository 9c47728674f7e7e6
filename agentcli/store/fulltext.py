"""Ranked full-text search over what was said and done: text, reasoning and tool parts (tool name,
input and output). SQLite: an FTS5 table kept in sync with ``part`` by triggers. PostgreSQL: a
generated ``tsvector`` column on ``part`` with a GIN index. Both tokenize the same way (words of
letters and digits, no stemming), so a query finds the same parts on either backend.

User text is never passed through as query syntax: it is split into words, a word holding
punctuation (``foo.bar``, ``src/app.py``) becomes a phrase, a quoted "several words" is a phrase,
all must match, and a word ending in ``*`` matches as a prefix (``handl*``). Prefixes are opt-in:
without a prefix index FTS5 merges every matching word's list, which is what makes a search slow.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel
from sqlalchemy import Connection, text

MARK = ("«", "»")  # around each match in a snippet
WINDOW = 2000  # matches ranked per query, newest first: bounds the cost of a very common word
SEARCHED = ("text", "reasoning", "tool")
_WORD = re.compile(r"[^\W_]+")
_CHUNK = re.compile(r'"([^"]*)"|(\S+)')


class Terms(BaseModel):
    phrases: list[list[str]]  # a phrase of one word is a plain term
    prefix: list[bool]  # per phrase: its last word is a prefix


class SearchHit(BaseModel):
    session_id: str
    session_title: str
    message_id: str
    part_id: str
    role: str
    snippet: str  # a short excerpt around the match, each match between MARK
    score: float  # higher is better
    time_created: int


def terms(query: str) -> Terms:
    """The query as phrases of words; a bare chunk ending in ``*`` is a prefix."""
    out = Terms(phrases=[], prefix=[])
    for quoted, bare in _CHUNK.findall(query):
        words = _WORD.findall(quoted or bare)
        if words:
            out.phrases.append([w.lower() for w in words])
            out.prefix.append(bool(bare) and bare.endswith("*") and bool(_WORD.search(bare[-2:-1] or "")))
    return out


def _fts5_query(t: Terms, session_id: str | None, directory: str | None) -> str:
    parts = [
        '"' + " ".join(p) + '"' + ("*" if pre else "") for p, pre in zip(t.phrases, t.prefix, strict=True)
    ]
    query = "body : (" + " ".join(parts) + ")"
    # Filters are tokens of their own columns (hex of the exact value: one token, no partial match),
    # so FTS5 intersects them with the words instead of the query checking every match's row.
    if session_id is not None:
        query += f" AND sid : {_hex(session_id)}"
    if directory is not None:
        query += f" AND dir : {_hex(directory)}"
    return query


def _hex(value: str) -> str:
    return "x" + value.encode().hex()


def _tsquery(t: Terms) -> str:
    # Words are letters and digits only, so quoting them cannot inject tsquery syntax.
    return " & ".join(
        " <-> ".join(f"'{w}'" + (":*" if pre and i == len(p) - 1 else "") for i, w in enumerate(p))
        for p, pre in zip(t.phrases, t.prefix, strict=True)
    )


def snippet(body: str, t: Terms, width: int = 16) -> str:
    """About ``width`` words of ``body`` around the first match, each matching word marked. Made
    here rather than by FTS5's snippet() or ts_headline so both backends show the same excerpt."""
    words = list(_WORD.finditer(body))
    exact = {w for p in t.phrases for w in p}
    prefixes = tuple(p[-1] for p, pre in zip(t.phrases, t.prefix, strict=True) if pre)

    def hit(word: str) -> bool:
        word = word.lower()
        return word in exact or (bool(prefixes) and word.startswith(prefixes))

    first = next((i for i, w in enumerate(words) if hit(w.group())), 0)
    start = max(0, min(first - width // 3, len(words) - width))
    shown = words[start : start + width]
    if not shown:
        return ""
    out, at = [], shown[0].start()
    for w in shown:
        out.append(body[at : w.start()])
        out.append(f"{MARK[0]}{w.group()}{MARK[1]}" if hit(w.group()) else w.group())
        at = w.end()
    text_ = "".join(out)
    if start > 0:
        text_ = "…" + text_
    if start + width < len(words):
        text_ += "…"
    return " ".join(text_.split())


# --- schema ---------------------------------------------------------------------------------


def _sqlite_body(row: str) -> str:
    tool = " || ' ' || ".join(
        f"coalesce(json_extract({row}.data, '$.{path}'), '')"
        for path in ("tool", "state.input", "state.output", "state.error")
    )
    return (
        f"CASE {row}.type WHEN 'tool' THEN {tool} ELSE coalesce(json_extract({row}.data, '$.text'), '') END"
    )


def _pg_body(row: str) -> str:
    tool = " || ' ' || ".join(
        f"coalesce({row}.data::jsonb #>> '{{{path}}}', '')"
        for path in ("tool", "state,input", "state,output", "state,error")
    )
    return f"CASE {row}.type WHEN 'tool' THEN {tool} ELSE coalesce({row}.data::jsonb ->> 'text', '') END"


_IN = "(" + ", ".join(f"'{t}'" for t in SEARCHED) + ")"


def create(conn: Connection) -> None:
    """Create the index and fill it from the parts already stored."""
    if conn.dialect.name == "sqlite":
        _create_sqlite(conn)
    else:
        _create_pg(conn)


def _sqlite_filters(row: str) -> str:
    return (
        f"'x' || lower(hex({row}.session_id)), "
        f"(SELECT 'x' || lower(hex(directory)) FROM session WHERE id = {row}.session_id)"
    )


def _create_sqlite(conn: Connection) -> None:
    # rowid = part.rowid for cheap upkeep; part_id guards the delete in case a VACUUM renumbered rows.
    conn.exec_driver_sql(
        "CREATE VIRTUAL TABLE part_fts USING fts5(part_id UNINDEXED, body, sid, dir, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    insert = (
        f"INSERT INTO part_fts (rowid, part_id, body, sid, dir) "
        f"VALUES (NEW.rowid, NEW.id, {_sqlite_body('NEW')}, {_sqlite_filters('NEW')});"
    )
    delete = "DELETE FROM part_fts WHERE rowid = OLD.rowid AND part_id = OLD.id;"
    conn.exec_driver_sql(
        f"CREATE TRIGGER part_fts_ai AFTER INSERT ON part WHEN NEW.type IN {_IN} BEGIN {insert} END"
    )
    conn.exec_driver_sql(
        f"CREATE TRIGGER part_fts_au AFTER UPDATE OF data ON part WHEN NEW.type IN {_IN} "
        f"BEGIN {delete} {insert} END"
    )
    conn.exec_driver_sql(
        f"CREATE TRIGGER part_fts_ad AFTER DELETE ON part WHEN OLD.type IN {_IN} BEGIN {delete} END"
    )
    conn.exec_driver_sql(
        f"INSERT INTO part_fts (rowid, part_id, body, sid, dir) "
        f"SELECT part.rowid, part.id, {_sqlite_body('part')}, {_sqlite_filters('part')} "
        f"FROM part WHERE part.type IN {_IN}"
    )


def _create_pg(conn: Connection) -> None:
    body = _pg_body("part").replace("part.", "")  # a generated column sees its own row unqualified
    # ASCII punctuation becomes space first: PostgreSQL's parser would keep ``src/app.py`` as one
    # file token, FTS5 (and the query side here) sees the words src, app, py.
    conn.exec_driver_sql(
        f"ALTER TABLE part ADD COLUMN search tsvector GENERATED ALWAYS AS (CASE WHEN type IN {_IN} THEN "
        f"to_tsvector('simple'::regconfig, regexp_replace({body}, '[[:punct:]]+', ' ', 'g')) END) STORED"
    )
    conn.exec_driver_sql("CREATE INDEX part_search_idx ON part USING GIN (search)")


# --- query ----------------------------------------------------------------------------------


def search(
    conn: Connection, query: str, *, limit: int, session_id: str | None, directory: str | None
) -> list[SearchHit]:
    phrases = terms(query)
    if not phrases.phrases or limit <= 0:
        return []
    params: dict[str, Any] = {"limit": limit, "sid": session_id, "dir": directory, "window": WINDOW}
    if conn.dialect.name == "sqlite":
        params["q"] = _fts5_query(phrases, session_id, directory)
        # Rank only the newest WINDOW matches: bm25 over every match of a common word grows with
        # the whole history; FTS5 walks its doclist newest-first and stops at the window.
        sql = (
            "WITH ranked AS (SELECT rowid, bm25(part_fts, 0.0, 1.0, 0.0, 0.0) AS rank FROM part_fts "
            "WHERE part_fts MATCH :q AND rowid >= (SELECT coalesce(min(rowid), 0) FROM "
            "(SELECT rowid FROM part_fts WHERE part_fts MATCH :q ORDER BY rowid DESC LIMIT :window)) "
            "ORDER BY rank LIMIT :limit) "
            "SELECT p.id AS part_id, p.session_id, p.message_id, p.time_created, m.role, "
            "coalesce(json_extract(s.data, '$.title'), '') AS title, f.body, -ranked.rank AS score "
            "FROM ranked JOIN part_fts f ON f.rowid = ranked.rowid JOIN part p ON p.id = f.part_id "
            "JOIN message m ON m.id = p.message_id JOIN session s ON s.id = p.session_id ORDER BY ranked.rank"
        )
    else:
        filters = ""
        if session_id is not None:
            filters += " AND p.session_id = :sid"
        if directory is not None:
            filters += " AND s.directory = :dir"
        params["q"] = _tsquery(phrases)
        sql = (
            "WITH hits AS ("
            "SELECT p.id AS part_id, p.session_id, p.message_id, p.time_created, p.type, p.data, "
            "ts_rank_cd(p.search, q, 1) AS score "  # 1: divided by 1 + log(length), as bm25 weighs length
            "FROM part p JOIN session s ON s.id = p.session_id CROSS JOIN to_tsquery('simple', :q) AS q "
            f"WHERE p.search @@ q{filters} ORDER BY score DESC, p.id DESC LIMIT :limit) "
            "SELECT hits.part_id, hits.session_id, hits.message_id, hits.time_created, m.role, "
            "coalesce(s.data::jsonb ->> 'title', '') AS title, "
            f"{_pg_body('hits')} AS body, hits.score "
            "FROM hits JOIN message m ON m.id = hits.message_id JOIN session s ON s.id = hits.session_id "
            "ORDER BY hits.score DESC, hits.part_id DESC"
        )
    rows = conn.execute(text(sql), params).all()
    return [
        SearchHit(
            session_id=r.session_id,
            session_title=r.title,
            message_id=r.message_id,
            part_id=r.part_id,
            role=r.role,
            snippet=snippet(r.body, phrases),
            score=float(r.score),
            time_created=r.time_created,
        )
        for r in rows
    ]
