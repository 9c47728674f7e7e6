"""Reads and writes of sessions, messages and parts: the only place that speaks SQL.

Writes are upserts on id (a part is rewritten as it streams). Session totals are kept on the session
row as step-finish parts are first written, so listing sessions never scans history.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, delete, func, select, text

from agentcli.store import clean, fulltext, ids, lease, tables
from agentcli.store.db import StoreError, Target, open_engine, resolve
from agentcli.store.fulltext import SearchHit
from agentcli.store.lease import Lease
from agentcli.store.records import AssistantMessage, SessionInfo, StepFinishPart, ToolPart, WithParts, now_ms
from agentcli.store.rows import (
    MESSAGES,
    PARTS,
    SESSIONS,
    load,
    message_row,
    part_row,
    session_row,
    state_value,
)

PAGE = 50  # messages per page when walking history newest-first


class NotFound(StoreError):
    pass


class Store:
    """One database, named by a path or a SQLAlchemy URL (``sqlite:///…``, ``postgresql+psycopg://…``)."""

    def __init__(self, db: str | Path | Target, engine: Engine | None = None) -> None:
        self.target = db if isinstance(db, Target) else resolve(db)
        self.path = self.target.path  # the SQLite file; None on PostgreSQL
        self.engine = engine or open_engine(self.target)
        self.dialect = self.engine.dialect.name
        self._held = lease.Held()  # the leases its turns hold (their sessions' writes are checked)

    def close(self) -> None:
        self.engine.dispose()

    def _insert(self, table: Any) -> Any:
        """INSERT … ON CONFLICT for this backend (both spell the upsert the same way). The engine has
        loaded its own dialect; a SQLite user never pays for importing PostgreSQL's."""
        return importlib.import_module(f"sqlalchemy.dialects.{self.dialect}").insert(table)

    def lease(
        self,
        session_id: str,
        *,
        wait_s: float | None = None,
        ttl_s: float | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> Lease:
        """Hold the session for one turn (``with store.lease(sid): ...``): a second agent continuing
        the same session waits up to ``wait_s`` (``$AGENTCLI_SESSION_WAIT``, 60) and then gets
        ``SessionBusy``. The lease is renewed while held and lapses ``ttl_s`` after its holder dies."""
        taken = lease.acquire(self.engine, session_id, wait_s=wait_s, ttl_s=ttl_s, on_wait=on_wait)
        return self._held.add(taken)

    def abandon(self, session_id: str) -> None:
        """The turn holding ``session_id`` was left behind still running (it would not wind down):
        free the session for the next turn now, and refuse every write the old one still makes."""
        self._held.abandon(session_id)

    def _guard(self, conn: Any, session_id: str) -> None:
        """Last in a write transaction of a session this store holds the lease of: the lease must
        still be ours (``Lease.verify``), or nothing of the transaction is kept."""
        self._held.verify(conn, session_id)

    def search(
        self, query: str, *, limit: int = 20, session_id: str | None = None, directory: str | None = None
    ) -> list[SearchHit]:
        """Parts whose text, reasoning or tool input/output match ``query``, best first."""
        with self.engine.connect() as conn:
            return fulltext.search(conn, query, limit=limit, session_id=session_id, directory=directory)

    # --- sessions -----------------------------------------------------------------------

    def create_session(
        self,
        directory: str,
        model: str | None = None,
        title: str = "",
        *,
        parent_id: str | None = None,
        agent: str | None = None,
    ) -> SessionInfo:
        info = SessionInfo(
            id=ids.ascending("ses"),
            directory=directory,
            model=model,
            title=title,
            parent_id=parent_id,
            agent=agent,
        )
        self.put_session(info)
        return info

    def put_session(self, info: SessionInfo) -> None:
        row = session_row(info)
        stmt = self._insert(tables.session).values(**row)
        stmt = stmt.on_conflict_do_update(
            index_elements=["id"], set_={k: v for k, v in row.items() if k != "id"}
        )
        with self.engine.begin() as conn:
            conn.execute(stmt)
            self._guard(conn, info.id)

    @staticmethod
    def _session(row: Any) -> SessionInfo:
        return load(SESSIONS, "session", row, id=row.id)

    def get_session(self, session_id: str) -> SessionInfo:
        with self.engine.connect() as conn:
            row = conn.execute(select(tables.session).where(tables.session.c.id == session_id)).first()
        if row is None:
            raise NotFound(f"no session {session_id}")
        return self._session(row)

    def find_session(self, ref: str) -> SessionInfo:
        """A session by id or unambiguous id prefix (``ses_01a…``)."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(tables.session).where(tables.session.c.id.startswith(ref, autoescape=True)).limit(2)
            ).all()
        if not rows:
            raise NotFound(f"no session matches '{ref}' (see `agentcli sessions list`)")
        if len(rows) > 1 and rows[0].id != ref:
            raise NotFound(f"'{ref}' matches several sessions; give more of the id")
        return self._session(rows[0])

    def latest_session(self, directory: str | None = None) -> SessionInfo | None:
        query = select(tables.session).where(tables.session.c.parent_id.is_(None))
        if directory is not None:
            query = query.where(tables.session.c.directory == directory)
        query = query.order_by(tables.session.c.time_updated.desc()).limit(1)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return self._session(row) if row else None

    def list_sessions(
        self, limit: int | None = None, directory: str | None = None, *, roots: bool = False
    ) -> list[SessionInfo]:
        """Most recently updated first; ``roots``: only sessions that are no task's (no parent)."""
        query = select(tables.session).order_by(tables.session.c.time_updated.desc())
        if directory is not None:
            query = query.where(tables.session.c.directory == directory)
        if roots:
            query = query.where(tables.session.c.parent_id.is_(None))
        if limit:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return [self._session(r) for r in conn.execute(query).all()]

    def children(self, parent_ids: Iterable[str]) -> list[SessionInfo]:
        """The task sessions of these sessions, oldest first."""
        wanted = list(parent_ids)
        if not wanted:
            return []
        query = (
            select(tables.session)
            .where(tables.session.c.parent_id.in_(wanted))
            .order_by(tables.session.c.time_created)
        )
        with self.engine.connect() as conn:
            return [self._session(r) for r in conn.execute(query).all()]

    def session_ids(self) -> list[str]:
        """Every session's id, most recently updated first, without reading the sessions."""
        query = select(tables.session.c.id).order_by(tables.session.c.time_updated.desc())
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def update_session(
        self, session_id: str, *, add: dict[str, float] | None = None, **changes: Any
    ) -> SessionInfo:
        """Set fields (``title=…``) and add to counters (``add={"compactions": 1}``) in one statement."""
        with self.engine.begin() as conn:
            self._json_update(conn, session_id, changes, add or {})
            self._guard(conn, session_id)
            row = conn.execute(select(tables.session).where(tables.session.c.id == session_id)).first()
        return self._session(row)

    def _json_update(
        self, conn: Any, session_id: str, changes: dict[str, Any], add: dict[str, float]
    ) -> None:
        """One UPDATE of the JSON in place (json_set / jsonb_set), atomic against other writers (the
        background title thread, the loop, other agents). A SELECT-then-UPDATE is not: two writers
        could each overwrite the other's change with a stale copy of the row. On PostgreSQL the
        UPDATE's row lock orders concurrent writers and each re-reads the row it changes."""
        now = now_ms()
        pg = self.dialect != "sqlite"
        sets: list[tuple[str, str]] = [("updated", "to_jsonb(CAST(:now AS bigint))" if pg else ":now")]
        params: dict[str, Any] = {"now": now, "id": session_id}
        for i, (key, value) in enumerate(changes.items()):
            if key not in SessionInfo.model_fields or key in ("id", "updated"):
                raise ValueError(f"not a settable session field: {key}")
            sets.append((key, f"CAST(:s{i} AS jsonb)" if pg else f"json(:s{i})"))
            params[f"s{i}"] = clean.dump_json(
                value.model_dump(mode="json") if hasattr(value, "model_dump") else value
            )
        for i, (path, amount) in enumerate(add.items()):
            if path.split(".")[0] not in SessionInfo.model_fields:
                raise ValueError(f"not a session counter: {path}")
            if pg:
                current = f"(data::jsonb #>> '{{{path.replace('.', ',')}}}')::numeric"
                sets.append((path, f"to_jsonb(coalesce({current}, 0) + CAST(:a{i} AS numeric))"))
            else:
                sets.append((path, f"coalesce(json_extract(data, '$.{path}'), 0) + :a{i}"))
            params[f"a{i}"] = amount
        if pg:
            expr = "data::jsonb"
            for path, value in sets:
                expr = f"jsonb_set({expr}, '{{{path.replace('.', ',')}}}', {value})"
            expr += "::text"
        else:
            expr = "json_set(data, " + ", ".join(f"'$.{path}', {value}" for path, value in sets) + ")"
        result = conn.execute(
            text(f"UPDATE session SET time_updated = :now, data = {expr} WHERE id = :id"), params
        )
        if result.rowcount == 0:
            raise NotFound(f"no session {session_id}")

    # --- messages and parts -------------------------------------------------------------

    def put_message(self, msg: Any) -> None:
        now = now_ms()
        row = message_row(msg, now)
        with self.engine.begin() as conn:
            existed = conn.execute(select(tables.message.c.id).where(tables.message.c.id == msg.id)).first()
            stmt = self._insert(tables.message).values(**row)
            conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=["id"], set_={"time_updated": now, "data": row["data"]}
                )
            )
            if not existed:
                self._bump_session(conn, msg.session_id, messages=1)
            else:
                self._touch_session(conn, msg.session_id)
            self._guard(conn, msg.session_id)

    def put_part(self, part: Any) -> None:
        now = now_ms()
        row = part_row(part, now)
        with self.engine.begin() as conn:
            existed = None
            if isinstance(part, StepFinishPart):
                existed = conn.execute(select(tables.part.c.id).where(tables.part.c.id == part.id)).first()
            stmt = self._insert(tables.part).values(**row)
            conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=["id"], set_={"time_updated": now, "data": row["data"]}
                )
            )
            if isinstance(part, StepFinishPart) and not existed:
                # Totals follow step-finish parts (each written once): compaction summaries count too.
                self._bump_session(conn, part.session_id, step=part)
            self._guard(conn, part.session_id)

    def _touch_session(self, conn: Any, session_id: str) -> None:
        self._json_update(conn, session_id, {}, {})

    def _bump_session(
        self, conn: Any, session_id: str, messages: int = 0, step: StepFinishPart | None = None
    ) -> None:
        add: dict[str, float] = {"messages": messages}
        if step is not None and step.tokens.estimated:
            add["cost"] = step.cost  # an estimate is not what the provider counted: no token totals
        elif step is not None:
            tokens = step.tokens
            add.update(
                {
                    "cost": step.cost,
                    "tokens.total": tokens.total,
                    "tokens.input": tokens.input,
                    "tokens.output": tokens.output,
                    "tokens.reasoning": tokens.reasoning,
                    "tokens.cache.read": tokens.cache.read,
                    "tokens.cache.write": tokens.cache.write,
                }
            )
        self._json_update(conn, session_id, {}, add)

    @staticmethod
    def _message(row: Any) -> Any:
        return load(MESSAGES, "message", row, id=row.id, session_id=row.session_id)

    @staticmethod
    def _part(row: Any) -> Any:
        return load(PARTS, "part", row, id=row.id, session_id=row.session_id, message_id=row.message_id)

    def _with_parts(self, conn: Any, rows: Sequence[Any]) -> list[WithParts]:
        if not rows:
            return []
        ids_ = [r.id for r in rows]
        parts: dict[str, list[Any]] = {i: [] for i in ids_}
        for prow in conn.execute(
            select(tables.part)
            .where(tables.part.c.message_id.in_(ids_))
            .order_by(tables.part.c.message_id, tables.part.c.id)
        ):
            parts[prow.message_id].append(self._part(prow))
        return [WithParts(info=self._message(r), parts=parts[r.id]) for r in rows]

    def get_message(self, message_id: str) -> WithParts:
        with self.engine.connect() as conn:
            row = conn.execute(select(tables.message).where(tables.message.c.id == message_id)).first()
            if row is None:
                raise NotFound(f"no message {message_id}")
            return self._with_parts(conn, [row])[0]

    def get_part(self, part_id: str) -> Any:
        with self.engine.connect() as conn:
            row = conn.execute(select(tables.part).where(tables.part.c.id == part_id)).first()
            if row is None:
                raise NotFound(f"no part {part_id}")
            return self._part(row)

    def stream(self, session_id: str, page: int = PAGE) -> Iterator[WithParts]:
        """Messages newest first, a page at a time: a caller that stops early (at a compaction) never
        reads the rest of the session."""
        before: str | None = None
        while True:
            query = select(tables.message).where(tables.message.c.session_id == session_id)
            if before is not None:
                query = query.where(tables.message.c.id < before)
            query = query.order_by(tables.message.c.id.desc()).limit(page)
            with self.engine.connect() as conn:
                rows = conn.execute(query).all()
                batch = self._with_parts(conn, rows)
            yield from batch
            if len(rows) < page:
                return
            before = rows[-1].id

    def messages(self, session_id: str) -> list[WithParts]:
        """The whole session, oldest first (for `sessions show` and pruning)."""
        out = list(self.stream(session_id, page=500))
        out.reverse()
        return out

    def import_messages(self, messages: list[WithParts]) -> None:
        """Write whole messages in one transaction (imports, fixtures, benchmarks). Session totals are
        not touched: call ``update_session`` with what the imported history amounts to."""
        now = now_ms()
        message_rows = [message_row(m.info, now) for m in messages]
        part_rows = [part_row(p, now) for m in messages for p in m.parts]
        with self.engine.begin() as conn:
            if message_rows:
                conn.execute(self._insert(tables.message), message_rows)
            if part_rows:
                conn.execute(self._insert(tables.part), part_rows)
            for session_id in {m.info.session_id for m in messages}:
                self._guard(conn, session_id)

    def import_sessions(
        self,
        sessions: Iterable[tuple[SessionInfo, list[WithParts]]],
        states: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Write whole sessions (rows as given, totals included, and ``states[session_id]``) in one
        transaction. Rows already there are replaced by the given ones, so importing the same
        sessions again changes nothing (``sessions copy`` relies on it)."""
        now = now_ms()
        session_rows, message_rows, part_rows = [], [], []
        for info, messages in sessions:
            session_rows.append(session_row(info))
            message_rows += [message_row(m.info, now) for m in messages]
            part_rows += [part_row(p, now) for m in messages for p in m.parts]
        state_rows = [
            {"session_id": clean.text(sid), "key": clean.text(key), "value": clean.dump_json(value)}
            for sid, state in (states or {}).items()
            for key, value in state.items()
        ]
        with self.engine.begin() as conn:
            for table, rows in (
                (tables.session, session_rows),
                (tables.message, message_rows),
                (tables.part, part_rows),
            ):
                if rows:
                    stmt = self._insert(table)
                    keep = {c: stmt.excluded[c] for c in rows[0] if c not in ("id", "time_created")}
                    conn.execute(stmt.on_conflict_do_update(index_elements=["id"], set_=keep), rows)
            if state_rows:
                stmt = self._insert(tables.session_state)
                conn.execute(
                    stmt.on_conflict_do_update(
                        index_elements=["session_id", "key"], set_={"value": stmt.excluded.value}
                    ),
                    state_rows,
                )

    def ping(self) -> None:
        """Raise ``StoreError`` if the database cannot be used right now."""
        with self.engine.connect() as conn:
            conn.exec_driver_sql("SELECT 1")

    def mark_compacted(self, parts: Iterable[ToolPart], when: int | None = None) -> int:
        stamp = when or now_ms()
        count = 0
        for part in parts:
            state = part.state.model_copy(
                update={"time": part.state.time.model_copy(update={"compacted": stamp})}
            )
            self.put_part(part.model_copy(update={"state": state}))
            count += 1
        return count

    def count_parts(self, session_id: str) -> int:
        with self.engine.connect() as conn:
            return conn.execute(
                select(func.count()).select_from(tables.part).where(tables.part.c.session_id == session_id)
            ).scalar_one()

    def parts_of_type(self, session_ids: Iterable[str], type_: str, limit: int = 50) -> list[Any]:
        """These sessions' parts of one type, newest first (by the index on session and type)."""
        query = (
            select(tables.part)
            .where(tables.part.c.session_id.in_(list(session_ids)), tables.part.c.type == type_)
            .order_by(tables.part.c.time_created.desc(), tables.part.c.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [self._part(r) for r in conn.execute(query).all()]

    # --- small per-session state ----------------------------------------------------------

    def get_state(self, session_id: str, key: str, default: Any = None) -> Any:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(tables.session_state.c.value).where(
                    tables.session_state.c.session_id == session_id, tables.session_state.c.key == key
                )
            ).first()
        return state_value(session_id, key, row[0]) if row else default

    def all_state(self, session_id: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(tables.session_state.c.key, tables.session_state.c.value).where(
                    tables.session_state.c.session_id == session_id
                )
            ).all()
        return {key: state_value(session_id, key, value) for key, value in rows}

    def set_state(self, session_id: str, key: str, value: Any) -> None:
        stmt = self._insert(tables.session_state).values(
            session_id=session_id, key=clean.text(key), value=clean.dump_json(value)
        )
        with self.engine.begin() as conn:
            conn.execute(
                stmt.on_conflict_do_update(
                    index_elements=["session_id", "key"], set_={"value": stmt.excluded.value}
                )
            )
            self._guard(conn, session_id)

    def delete_messages(self, session_id: str, message_ids: Iterable[str]) -> None:
        """Remove messages and their parts: a compaction that was cancelled or compacted nothing
        leaves no record behind (its marker would otherwise fire again)."""
        doomed = list(message_ids)
        if not doomed:
            return
        with self.engine.begin() as conn:
            conn.execute(delete(tables.part).where(tables.part.c.message_id.in_(doomed)))
            gone = conn.execute(delete(tables.message).where(tables.message.c.id.in_(doomed))).rowcount
            self._json_update(conn, session_id, {}, {"messages": -gone})
            self._guard(conn, session_id)

    def delete_session(self, session_id: str) -> int:
        """Delete a session and its tasks' sessions (a task's history is part of its parent's);
        returns how many task sessions went with it."""
        doomed, level = [session_id], [session_id]
        while level:
            level = [s.id for s in self.children(level)]
            doomed += level
        with self.engine.begin() as conn:
            conn.execute(delete(tables.session).where(tables.session.c.id.in_(doomed)))
        return len(doomed) - 1


def last_assistant(messages: list[WithParts]) -> AssistantMessage | None:
    for msg in reversed(messages):
        if isinstance(msg.info, AssistantMessage):
            return msg.info
    return None
