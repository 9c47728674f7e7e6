"""In-process event bus: the loop publishes what happened, the UI and plugins listen.

One Bus per running loop (no module-level subscriber list), so tests and several sessions in one
process never hear each other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

Listener = Callable[[Any], None]


class Bus:
    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def publish(self, event: Any) -> None:
        for listener in list(self._listeners):
            try:
                listener(event)
            except KeyboardInterrupt:
                raise
            except Exception:  # a broken listener must not break the turn
                log.exception("event listener failed on %s", type(event).__name__)
