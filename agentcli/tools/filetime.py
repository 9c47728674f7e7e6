"""When did this session last read a file? Edits refuse files changed on disk since then.

``MemoryFileTimes`` is the default (and what tests use); the loop passes a persistent
implementation backed by the database so the guard survives a restart.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

from agentcli.tools.base import FileTimes, ToolError

# File systems and editors can report the same mtime with float noise; smaller gaps are "unchanged".
_TOLERANCE_S = 0.001


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class MemoryFileTimes:
    """FileTimes kept in a dict: path → the file's mtime when the session last read it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads: dict[str, float] = {}

    def record_read(self, path: Path) -> None:
        mtime = _mtime(path)
        if mtime is None:
            return
        with self._lock:
            self._reads[str(path)] = mtime

    def last_read(self, path: Path) -> float | None:
        with self._lock:
            return self._reads.get(str(path))


def _stamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds).isoformat(timespec="seconds")


def assert_fresh(times: FileTimes, path: Path) -> None:
    """Refuse to change an existing file the session has not read, or that changed since it did."""
    read = times.last_read(path)
    if read is None:
        raise ToolError(f"You must read file {path} before overwriting it. Use the read tool first.")
    current = _mtime(path)
    if current is not None and abs(current - read) > _TOLERANCE_S:
        raise ToolError(
            f"File {path} has been modified since it was last read. "
            f"Last modification: {_stamp(current)}; last read: {_stamp(read)}. "
            "Read the file again before modifying it."
        )
