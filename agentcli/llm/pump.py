"""The worker-thread half of a stream: a provider call runs in a daemon thread and hands lists of
events (or the exception that ended it) to the consumer through a queue, so the consumer can honour
an abort at once, even while the provider is silent."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from agentcli.llm.events import ChatRequest, Event


@dataclass
class End:
    provider_finished: bool  # False when the provider itself sent no finish reason
    clean: bool = False  # the provider closed the stream properly ([DONE]) whatever it sent before


Item = list[Event] | BaseException | End

WORKER_NAME = "llm-stream"  # the worker thread's name (tests wait for it: the whole response was read)


class Pump:
    """Subclasses implement ``_run``: put event lists, then ``End`` or an exception, into ``items``,
    and call ``alive()`` whenever bytes arrive (keep-alive comments included), so the consumer can tell
    a silent provider from a slow one."""

    def __init__(self, req: ChatRequest) -> None:
        self.req = req
        self.items: queue.SimpleQueue[Item] = queue.SimpleQueue()
        self.received_any = False
        self.heard_from = False  # any byte of the response body arrived
        self.last_heard = time.monotonic()
        self.stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=WORKER_NAME, daemon=True)

    def start(self) -> None:
        self.last_heard = time.monotonic()
        self._thread.start()

    def sending(self) -> None:
        """The request is about to go: the first-byte clock starts now (not during litellm's import)."""
        self.last_heard = time.monotonic()

    def alive(self) -> None:
        self.heard_from = True
        self.last_heard = time.monotonic()

    def heard(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        """``chunks`` as they come, each a sign of life (keep-alive comments included)."""
        for chunk in chunks:
            self.alive()
            yield chunk

    def stop(self) -> None:
        """Ask the worker to close the response; it does so as soon as the next chunk (or error) comes."""
        self.stopped.set()

    def _run(self) -> None:
        raise NotImplementedError
