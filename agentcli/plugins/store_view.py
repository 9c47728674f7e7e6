"""A read-only view of the session store for plugins: sessions, messages with their parts, the
compactions of a session and full-text search. Nothing here writes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentcli.store.artifacts import Carryover
from agentcli.store.compactions import completed_compactions
from agentcli.store.records import CompactionPart, SessionInfo, WithParts
from agentcli.store.store import Store


@dataclass(frozen=True)
class Compaction:
    """One completed compaction: its marker, the summary message and the summary's text."""

    marker: WithParts
    summary: WithParts

    @property
    def part(self) -> CompactionPart:
        part = self.marker.compaction()
        assert part is not None
        return part

    @property
    def text(self) -> str:
        return self.summary.text().strip()

    @property
    def carryover(self) -> Carryover | None:
        """What it carried past its summary from the records (None: made before carryovers)."""
        return self.summary.carryover()


class StoreView:
    def __init__(self, store: Store) -> None:
        self._store = store

    def sessions(self, limit: int | None = None, directory: str | None = None) -> list[SessionInfo]:
        if directory is None:
            return self._store.list_sessions(limit)
        # Filtered after reading: list_sessions has no directory filter and sessions are few rows.
        rows = [s for s in self._store.list_sessions() if s.directory == directory]
        return rows[:limit] if limit else rows

    def children(self, session_id: str) -> list[SessionInfo]:
        return [s for s in self._store.list_sessions() if s.parent_id == session_id]

    def session(self, session_id: str) -> SessionInfo:
        return self._store.find_session(session_id)

    def messages(self, session_id: str) -> list[WithParts]:
        """The whole session, oldest first, every compaction and pruned output included."""
        return self._store.messages(session_id)

    def recent(self, session_id: str) -> Any:
        """Messages newest first, read a page at a time (stop early to read less)."""
        return self._store.stream(session_id)

    def message(self, message_id: str) -> WithParts:
        return self._store.get_message(message_id)

    def compactions(self, session_id: str) -> list[Compaction]:
        return [
            Compaction(marker, summary)
            for marker, summary in completed_compactions(self.messages(session_id))
        ]

    def search(
        self, query: str, *, limit: int = 20, session_id: str | None = None, directory: str | None = None
    ) -> list[Any]:
        """Ranked full-text search over message text (``Store.search``): ``SearchHit`` rows."""
        return self._store.search(query, limit=limit, session_id=session_id, directory=directory)
