"""One-line notices that come from any thread at any time (an MCP server failed to start, or died),
held until the client knows the session (after ``session/new`` answers with its id), then sent as
they come."""

from __future__ import annotations

import threading
from collections.abc import Callable


class HeldNotices:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: list[str] = []
        self._send: Callable[[str], None] | None = None

    def add(self, line: str) -> None:
        """From any thread; ``send`` only queues (the outbox), so it is called under the lock: order kept."""
        with self._lock:
            if self._send is None:
                self._held.append(line)
            else:
                self._send(line)

    def release(self, send: Callable[[str], None]) -> None:
        """The client knows the session: what was held goes out now, the rest as it comes."""
        with self._lock:
            self._send = send
            held, self._held = self._held, []
            for line in held:
                send(line)
