"""What the MCP servers went through (one failed to start, one died), noted on the session they
affected, once each, so ``sessions show`` tells it after the terminal's line has scrolled away. A
typed field of the session record: nothing here is ever part of the model's view."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentcli.store.records import SessionNotice


def record(store: Any, session_id: str, hosts: Iterable[Any]) -> list[SessionNotice]:
    """Add the hosts' notices the session does not hold yet; the ones added. The loop holds the
    session's lease, and no other writer sets ``notices``: reading then writing the list is safe."""
    new = [n for host in hosts if host is not None for n in list(getattr(host, "notices", ()))]
    if not new:
        return []
    notices = store.get_session(session_id).notices
    held = {n.key for n in notices}
    added = [n for n in new if n.key not in held]
    if added:
        store.update_session(session_id, notices=[n.model_dump(mode="json") for n in (*notices, *added)])
    return added
