"""A turn runs in a worker thread so the main thread stays free for Ctrl-C (which sets the abort
event instead of tearing through whatever the turn was doing) and for questions to the user.

A cancelled turn gets ``ABORT_GRACE`` seconds to wind down. One that has not after
``WIND_DOWN_NOTICE`` (a hook or tool that ignores the abort) is said to be so, and a second Ctrl-C
gives up on it at once, as Claude Code's does: the command then leaves (or the chat goes on) without it."""

from __future__ import annotations

import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agentcli.cli.common import say
from agentcli.tools.base import PermissionAnswer, PermissionRequest

T = TypeVar("T")
ABORT_GRACE = 10.0  # seconds to wait for a cancelled turn to wind down before giving up on it
WIND_DOWN_NOTICE = 1.0  # seconds after Ctrl-C before saying the turn is still winding down
STILL_WINDING_DOWN = "the turn is still winding down; Ctrl-C again to leave it now"


@dataclass
class Question:
    request: PermissionRequest
    answered: threading.Event = field(default_factory=threading.Event)
    answer: PermissionAnswer = "deny"


class Turn:
    def __init__(self, grace: float = ABORT_GRACE, tell: Callable[[str], None] | None = None) -> None:
        self.abort = threading.Event()
        self.questions: queue.Queue[Question] = queue.Queue()
        self.cancelled = False
        self.abandoned = False  # given up on while still running (see the module's docstring)
        self.grace = grace
        self.tell = tell or _to_stderr
        self._cancelled_at: float | None = None
        self._told = False

    def ask(self, request: PermissionRequest) -> PermissionAnswer:
        """Called from the worker: hand the question to the main thread and wait for its answer."""
        question = Question(request)
        self.questions.put(question)
        while not question.answered.wait(0.1):
            if self.abort.is_set():
                return "deny"
        return question.answer

    def run(
        self,
        fn: Callable[[threading.Event], T],
        answer: Callable[[PermissionRequest], PermissionAnswer] | None = None,
        escape: Callable[[], bool] | None = None,
    ) -> T | None:
        """Run ``fn(abort)`` in the worker; the main thread answers its questions (``answer``; one that
        raises KeyboardInterrupt cancels the turn) and cancels it on Ctrl-C or when ``escape()``
        says Esc was pressed."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["value"] = fn(self.abort)
            except BaseException as exc:  # handed to the main thread
                box["error"] = exc

        worker = threading.Thread(target=target, name="agentcli-turn", daemon=True)
        restore = _sigterm_as_interrupt()
        try:
            self._wait(worker, answer, escape)
        finally:
            restore()
        worker.join(timeout=0.5)
        self.abandoned = worker.is_alive()
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def _wait(
        self,
        worker: threading.Thread,
        answer: Callable[[PermissionRequest], PermissionAnswer] | None,
        escape: Callable[[], bool] | None,
    ) -> None:
        worker.start()
        while worker.is_alive():
            try:
                if escape is not None and self._cancelled_at is None and escape():
                    raise KeyboardInterrupt  # Esc: as Ctrl-C
                try:
                    question = self.questions.get(timeout=0.05)
                except queue.Empty:
                    if self._given_up():
                        break
                    continue
                question.answer = answer(question.request) if answer else "deny"
                question.answered.set()
            except KeyboardInterrupt:
                if self._cancelled_at is not None:  # Ctrl-C again: leave the turn to itself now
                    break
                self.cancelled = True
                self.abort.set()
                self._cancelled_at = time.monotonic()

    def _given_up(self) -> bool:
        """While a cancelled turn winds down: say so once it takes a while; True once the grace is over."""
        if self._cancelled_at is None:
            return False
        waited = time.monotonic() - self._cancelled_at
        if waited > WIND_DOWN_NOTICE and not self._told:
            self._told = True
            self.tell(STILL_WINDING_DOWN)
        return waited > self.grace


def _to_stderr(line: str) -> None:
    say(f"agentcli: {line}")


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _sigterm_as_interrupt() -> Callable[[], None]:
    """While a turn runs, SIGTERM cancels it the way Ctrl-C does (records closed, nothing half-made
    left behind) instead of ending the process mid-write. Returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)

    def undo() -> None:
        signal.signal(signal.SIGTERM, previous)

    return undo
