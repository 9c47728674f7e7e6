"""Time-ordered identifiers: ``<prefix>_`` + 14 hex (ms * 0x1000 + counter) + 12 random base62.

Lexicographic order of ids is creation order, also for ids made within one millisecond
(the counter), so id order is history order everywhere. OpenCode's id.ts keeps only the low
48 bits of the same value, which wraps every ~2.2 years; 14 hex digits do not wrap.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Literal

Prefix = Literal["ses", "msg", "prt"]

_BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


class _Clock:
    """The one owner of the last-timestamp/counter state; guarded for threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = 0
        self._counter = 0

    def next(self) -> int:
        with self._lock:
            now = int(time.time() * 1000)
            if now <= self._last_ms:
                # Same millisecond (or a clock step back): keep ascending via the counter.
                now = self._last_ms
                self._counter += 1
                if self._counter >= 0x1000:  # counter exhausted: borrow the next millisecond
                    now += 1
                    self._counter = 1
            else:
                self._counter = 1
            self._last_ms = now
            return now * 0x1000 + self._counter


_clock = _Clock()


def _random(n: int) -> str:
    return "".join(secrets.choice(_BASE62) for _ in range(n))


def ascending(prefix: Prefix) -> str:
    return f"{prefix}_{_clock.next():014x}{_random(12)}"


def timestamp_ms(identifier: str) -> int:
    """The creation time (ms) encoded in an id made by ``ascending``."""
    _, _, rest = identifier.partition("_")
    return int(rest[:14], 16) // 0x1000
