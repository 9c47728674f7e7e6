"""In-process event bus: the loop publishes what happened, the UI and plugins listen.

One Bus per running loop (no module-level subscriber list), so tests and several sessions in one
process never hear each other.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Listener = Callable[[Any], None]


class Bus:
    """Listeners hear one event at a time, whichever thread publishes it (a turn's parallel tasks
    publish from several): a renderer or a plugin never has to be thread-safe."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.RLock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, event: Any) -> None:
        with self._lock:
            for listener in list(self._listeners):
                try:
                    listener(event)
                except KeyboardInterrupt:
                    raise
                except Exception:  # a broken listener must not break the turn
                    log.exception("event listener failed on %s", type(event).__name__)
