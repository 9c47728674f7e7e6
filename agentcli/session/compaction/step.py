"""When a turn compacts: the loop's one call per iteration (``CompactionStep.step``) and the ration
of automatic compactions per user turn (``CompactionGuard``). What each compaction does is
``Compactor`` (``compaction.py``, whose docstring is the contract); the decisions are pure in
``compaction_plan``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from agentcli.bus import Bus
from agentcli.session import events
from agentcli.session.compaction.background import IN_FLIGHT, Background, Job
from agentcli.session.compaction.compactor import Compactor
from agentcli.session.compaction.pace import FLOOR, remembered
from agentcli.session.processor import Outcome
from agentcli.session.request.history import Latest, turn_done
from agentcli.session.request.view import RequestView
from agentcli.session.window import DEFAULT as GUESSED
from agentcli.store.records import AssistantMessage, CompactionPart, Tokens, WithParts

Next = Literal["continue", "stop", "proceed"]  # what the loop does after the compaction step


@dataclass
class CompactionGuard:
    """At most one automatic compaction per user turn unless the previous one made measurable
    progress; never more than MAX_PER_TURN; a compaction that leaves the context above the usable budget
    is reported once, not repeated (OpenCode loops forever here: issue #27924)."""

    usable: int
    results: list[tuple[int, int]] = field(default_factory=list)  # (tokens before, after)
    reported: bool = False
    declined: bool = False  # a plugin declined this turn's automatic compaction
    held_at: str | None = None  # a plugin delayed it after this step: not again before a newer one
    MAX_PER_TURN = 3

    def record(self, before: int, after: int, *, held: str = "", step: str | None = None) -> None:
        if held == "decline":
            self.declined = True
        elif held == "delay":
            self.held_at = step
        else:
            self.results.append((before, after))

    def allow(self, bus: Bus, session_id: str, *, hard: bool = False, step: str | None = None) -> bool:
        """``hard``: the window no longer fits (a plugin's "no" or "later" does not count then);
        ``step``: the newest finished step, whose usage asks for the compaction."""
        if not hard and (self.declined or (self.held_at is not None and step == self.held_at)):
            return False
        reason = self.refusal()
        if reason is None:
            return True
        if not self.reported:
            self.reported = True
            bus.publish(events.CompactionFailed(session_id, f"not compacting again this turn: {reason}"))
        return False

    def refusal(self) -> str | None:
        if not self.results:
            return None
        before, after = self.results[-1]
        if len(self.results) >= self.MAX_PER_TURN:
            return f"{len(self.results)} compactions already this turn"
        if self.usable and after >= self.usable:
            return f"the context is still {after:,} tokens after compacting, above the usable {self.usable:,}"
        if before - after < max(1, before // 10):
            return "the last compaction did not reduce the context measurably"
        if len(self.results) >= 2 and after >= self.results[-2][1] * 0.9:
            return "compacting again would not make progress"
        return None


def _finished(now: Latest) -> AssistantMessage | None:
    """The newest finished step."""
    info = now.finished.info if now.finished else None
    return info if isinstance(info, AssistantMessage) else None


@dataclass
class CompactionStep:
    """A turn's compaction, asked once per loop iteration before the request. In order: what plugins
    queued during the last step's tools; the last step overflowed (its usage, or the provider's
    error); a queued marker; the newest finished step over the budget; the next request certain
    not to fit (pre-flight). Automatic ones only as far as the guard allows."""

    compactor: Compactor
    guard: CompactionGuard
    session_id: str
    is_overflow: Callable[[Tokens], bool]  # a finished step reached the usable budget
    too_big: Callable[[RequestView], bool]  # the next request is certain to be rejected (pre-flight)
    queued: Callable[[], list[tuple[str, str | None]]]  # compactions plugins asked for (memory_compact)
    background: Background | None = None  # the runtime's background summaries (None: not in background)

    def step(
        self,
        window: list[WithParts],
        now: Latest,
        request: Callable[[], RequestView],
        stepped: tuple[AssistantMessage, Outcome] | None,
    ) -> Next:
        """``request``: the next request, built once when first called; ``stepped``: the step the
        previous iteration sent and its outcome (None after a "continue")."""
        queued = self.take_queued()
        if stepped is not None and stepped[1] == "compact":
            after = self._overflowed(stepped[0])
            if after is not None:
                return after
        if queued:
            return "continue"  # read the window again, with the new marker
        if turn_done(now):
            return "proceed"  # nothing more this turn: the loop ends it
        if now.tasks:
            return self._run(window, now.tasks[-1], now)
        finished = _finished(now)
        if (
            finished
            and not finished.summary
            and self.is_overflow(finished.tokens)
            and self._allowed(step=finished.id)
        ):
            self.compactor.create(self.session_id, auto=True, overflow=False)
            return "continue"
        if self.too_big(request()) and self._allowed(hard=True):
            # Certain to be rejected as too long: compact first instead of spending a failed call.
            self.compactor.create(self.session_id, auto=True, overflow=True)
            return "continue"
        self.in_background(window, now)
        return "proceed"

    def in_background(self, window: list[WithParts], now: Latest) -> None:
        """Once the summary of the older part would be ready only just in time (``pace``: at the latest
        past ``compaction.background_at`` of the usable window), it is asked for in the background
        (``background``) while the turn goes on; one whose history changed under it (an undo, a
        compaction meanwhile) is discarded first."""
        if self.background is None or self.compactor.session_model.window_source == GUESSED:
            return  # a guessed window: a summary request sent early may be what overflows it
        bg = self.background
        bg.discard_stale(self.session_id, window)
        finished = now.finished.info if now.finished else None
        if not isinstance(finished, AssistantMessage) or finished.summary or now.user is None:
            return
        pace = bg.pace(self.session_id)
        tokens = finished.tokens.count()
        pace.saw(now.user.id, bg.clock(), tokens)
        in_flight = bg.in_flight(self.session_id)
        if len(in_flight) >= IN_FLIGHT:
            return
        usable, ahead = self.compactor.usable, sum(j.head_tokens for j in in_flight)
        if pace.summary_s is None and not pace.recalled and tokens >= usable * FLOOR:
            pace.recalled = True
            pace.summary_s = remembered(self.compactor.store, self.compactor.model.name)
        if pace.start(tokens, usable, self.compactor.config.compaction.background_at, ahead):
            bg.start(self.compactor, window, now.user.id, grows=pace.growth())

    def _ready(self, task: CompactionPart) -> Job | None:
        """The background summary to swap in for ``task``, waited for if still being written. Only an
        automatic compaction of a window that reached the budget takes it: a manual one, one a plugin
        asked for and a hard overflow compact now, as before (the background one is dropped)."""
        bg = self.background
        if bg is None or bg.job(self.session_id) is None:
            return None
        if not task.auto or task.overflow or task.resume:
            bg.cancel(self.session_id)
            return None
        job = bg.wait(self.session_id, self.compactor.abort)
        if job is None:  # Ctrl-C while waiting: the compaction is cancelled, and the job with the turn
            return None
        if job.failure is not None:
            said = f"the background summary failed ({job.failure}); summarising now"
            self.compactor.bus.publish(events.CompactionFailed(self.session_id, said))
            return None
        return job

    def take_queued(self) -> bool:
        """Queue the compactions a plugin asked for during a tool call (memory_compact); they run
        before the next request, and the turn goes on after them as after an automatic one."""
        queued = self.queued()
        for sid, focus in queued:
            self.compactor.create(sid, auto=False, overflow=False, focus=focus, resume=True)
        return bool(queued)

    def _allowed(self, *, hard: bool = False, step: str | None = None) -> bool:
        return self.guard.allow(self.compactor.bus, self.session_id, hard=hard, step=step)

    def _overflowed(self, msg: AssistantMessage) -> Next | None:
        """The last step overflowed: its usage reached the budget (it finished), or the provider
        rejected its request as too long (it did not). None: go on as if it had not."""
        if self._allowed(hard=not msg.finish, step=msg.id):
            self.compactor.create(self.session_id, auto=True, overflow=not msg.finish)
            return "continue"
        if msg.finish:
            return None
        message = "the provider still rejects the request as too long after compacting; stopping this turn"
        self.compactor.bus.publish(events.ErrorOccurred(self.session_id, message, "context_overflow"))
        return "stop"

    def _run(self, window: list[WithParts], task: CompactionPart, now: Latest) -> Next:
        assert now.user is not None  # a marker is a user message: there is one
        if task.message_id != now.user.id:
            self.compactor.requeue(window, task)
            return "continue"
        job = self._ready(task)
        ready = job.ready if job else None
        started = self.background.clock() if self.background else 0.0
        result = self.compactor.process(
            window, parent_id=task.message_id, auto=task.auto, overflow=task.overflow, ready=ready
        )
        if self.background is not None and result.tokens_after < result.tokens_before:
            if job is not None and ready is not None:
                self.background.swapped(self.session_id, job)
            else:  # a summary the turn waited for: how long the next one may take (``pace``)
                self.background.pace(self.session_id).summary_s = self.background.clock() - started
        # A plugin's "no" or "later" is not a compaction that failed to make progress.
        step = now.finished.id if now.finished else None
        self.guard.record(result.tokens_before, result.tokens_after, held=result.held, step=step)
        return "stop" if result.outcome == "stop" else "continue"
