"""What the user attached to a message (``@path`` in the chat, a file in an ACP prompt): its parts
follow the message's text, and a text file attached counts as read, so the model may edit it at once
(OpenCode counts an attachment as a read too)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from agentcli.session.toolrunner import StoredFileTimes
from agentcli.store import ids
from agentcli.store.records import FilePart
from agentcli.store.store import Store


def store_attached(store: Store, session_id: str, message_id: str, parts: Sequence[Any]) -> None:
    """Write ``parts`` (their ids given here) after the message's text; record the files read."""
    times = StoredFileTimes(store, session_id)
    for part in parts:
        store.put_part(
            part.model_copy(
                update={"id": ids.ascending("prt"), "session_id": session_id, "message_id": message_id}
            )
        )
        if isinstance(part, FilePart) and part.mime == "text/plain" and part.url.startswith("file://"):
            times.record_read(Path(unquote(urlparse(part.url).path)))
