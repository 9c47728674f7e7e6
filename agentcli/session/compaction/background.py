"""Background compaction (``"compaction": {"background": true}``, the default; docs/compaction.md).

Once a finished step's window is close enough to the usable window for the summary to be ready in
time (``pace``: at the latest at ``compaction.background_at`` of it), the summary of the older part
(everything before a cut chosen as a compaction would choose its kept tail) is asked for on a thread
of its own while the turn goes on. Its request is built on the loop's thread (the same request a
compaction at that point would send: the cache-riding one by default, anchored on the previous
summary); only the model call runs in the background, and it writes into a scratch store, never the
session's. When compaction becomes due (``CompactionStep``) the summary ready by then is swapped in
(``Compactor.process(ready=…)``); one still being written is waited for, only for what remains. A
hard overflow compacts synchronously as before, and so does a background summary that failed (said
once) or whose history changed under it (an undo, a manual compaction: ``swap``), which is discarded.

A summarizer slower than the window's refill after a swap needs the next summary asked for while
one is still being written (``pace``): up to ``IN_FLIGHT`` per session, each covering everything
before its own cut. At a due point the newest one ready is taken; older ones still being written are
superseded (it covers what they cover), newer ones kept for the next due points. After its swap the
ones still in flight are rebased (``swapped``): what it summarised is no longer theirs to replace,
and their own summary covers it anyway.
"""

from __future__ import annotations

import atexit
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentcli.bus import Bus
from agentcli.llm.events import ChatRequest
from agentcli.session.compaction import plan, send, swap
from agentcli.session.compaction.compactor import Attempts, Compactor
from agentcli.session.compaction.hooks import hook_output
from agentcli.session.compaction.pace import Pace
from agentcli.session.request.sizes import window_tokens
from agentcli.store.records import SessionInfo, StepFinishPart, StepStartPart, WithParts
from agentcli.store.store import Store

IN_FLIGHT = 3  # background summaries per session at most (a bound on what a slow summarizer costs)


@dataclass
class Job:
    """One background summary: asked for, and once ``done`` either ``ready`` or ``failure``."""

    session_id: str
    tail_start_id: str
    head_ids: tuple[str, ...]
    request_tokens: int
    head_tokens: int = 0  # the summarised part's size: about what its swap frees
    started: float = 0.0  # on the runtime's clock
    seconds: float | None = None  # how long the summary took to write, once ready
    abort: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    ready: swap.Ready | None = None
    failure: str | None = None  # why it failed, in a few words

    def matches(self, visible: list[str]) -> bool:
        """Whether the history it summarises is still there as it was (``visible``: the window's
        ``swap.visible_ids``)."""
        return swap.head_of(visible, self.tail_start_id) == self.head_ids


def _cancel_at_exit(ref: weakref.ref[Background]) -> None:
    """No background summary goes on writing at exit (nor is asked for again)."""
    background = ref()
    if background is not None:
        background.cancel_all()


@dataclass
class Background:
    """A runtime's background summaries: per session, those in flight, oldest first."""

    jobs: dict[str, list[Job]] = field(default_factory=dict)
    threads: list[threading.Thread] = field(default_factory=list)
    paces: dict[str, Pace] = field(default_factory=dict)  # what each session showed of its pace
    clock: Callable[[], float] = time.monotonic  # seconds (a bench replays on a virtual one)

    def __post_init__(self) -> None:
        atexit.register(_cancel_at_exit, weakref.ref(self))

    def job(self, session_id: str) -> Job | None:
        """The session's newest background summary."""
        jobs = self.jobs.get(session_id)
        return jobs[-1] if jobs else None

    def in_flight(self, session_id: str) -> list[Job]:
        return list(self.jobs.get(session_id, ()))

    def discard_stale(self, session_id: str, window: list[WithParts]) -> None:
        """Cancel the summaries whose history changed under them (an undo, a compaction meanwhile)."""
        visible = swap.visible_ids(window)  # once for all of them: this runs after every step
        for job in self.in_flight(session_id):
            if not job.matches(visible):
                self._drop(job)

    def pace(self, session_id: str) -> Pace:
        return self.paces.setdefault(session_id, Pace())

    def start(
        self, compactor: Compactor, window: list[WithParts], parent_id: str, grows: int = 0
    ) -> Job | None:
        """Ask for the summary of ``window``'s older part in the background. None when there is no
        older part to summarise (the whole window would be the kept tail) or it cannot be sent.
        ``grows``: the tokens the turn is expected to add while it is written (``Compactor.prepare``)."""
        prep = compactor.prepare(window, parent_id=parent_id, overflow=False, grows=grows)
        cut = prep.selection.tail_start_id
        if cut is None or not prep.selection.head:
            return None
        attempts = Attempts()
        request = compactor.next_summary_request(prep, hook_output(), attempts)
        summarised = swap.head_ids(prep.history, cut)
        newer = all(j.tail_start_id != cut for j in self.in_flight(prep.sid))
        if request is None or summarised is None or not newer:
            return None  # nothing to send, or nothing newer to summarise than a summary in flight
        # What its swap frees: the head's share of the window, at the window's size as last reported.
        estimated = window_tokens(prep.system_blocks, prep.converted)
        head_tokens = prep.sized.tokens(0, len(prep.selection.head)) * prep.tokens_before // max(1, estimated)
        job = Job(prep.sid, cut, summarised, attempts.request_tokens, head_tokens, started=self.clock())
        riding = compactor.rides(prep)
        thread = threading.Thread(
            target=self._write,
            args=(job, compactor, request, riding),
            name="agentcli-background-summary",
            daemon=True,  # an exit never waits for it (it is cancelled at exit)
        )
        self.jobs.setdefault(prep.sid, []).append(job)
        self.threads = [t for t in self.threads if t.is_alive()] + [thread]
        thread.start()
        return job

    def _write(self, job: Job, compactor: Compactor, request: ChatRequest, riding: bool) -> None:
        """The thread: the summary request, answered into a scratch store; never raises."""
        try:
            with tempfile.TemporaryDirectory(prefix="agentcli-summary-") as tmp:
                scratch = Store(Path(tmp) / "summary.db")
                try:
                    self._ask(scratch, job, compactor, request, riding)
                    job.seconds = self.clock() - job.started
                    if job.ready is not None:
                        job.ready = replace(job.ready, seconds=job.seconds)
                finally:
                    scratch.close()
        except Exception as exc:  # whatever went wrong: said once, then compacted as before
            job.failure = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
        finally:
            job.done.set()

    @staticmethod
    def _ask(scratch: Store, job: Job, compactor: Compactor, request: ChatRequest, riding: bool) -> None:
        sid = job.session_id
        scratch.put_session(SessionInfo(id=sid, model=compactor.model.name))
        message = send.summary_message(sid, job.tail_start_id, compactor.model)
        scratch.put_message(message)
        outcome = send.summary(scratch, Bus(), job.abort, message, request, compactor.model, riding=riding)
        if job.abort.is_set():
            job.failure = "cancelled"
        elif outcome == "ok":
            parts = [p for p in scratch.get_message(message.id).parts if not isinstance(p, StepStartPart)]
            finish = next((p for p in parts if isinstance(p, StepFinishPart)), None)
            job.ready = swap.Ready(
                parts=parts,
                tail_start_id=job.tail_start_id,
                head_ids=job.head_ids,
                cost=message.cost,
                tokens=finish.tokens if finish else message.tokens,
                request_tokens=job.request_tokens,
            )
        else:
            job.failure = "the request was too long" if outcome == "overflow" else plan.failure_cause(message)

    def wait(self, session_id: str, abort: threading.Event) -> Job | None:
        """The background summary to swap in now, taken out: the newest one ready (the older ones,
        superseded, are cancelled), else the oldest one, once done (waiting only for what remains).
        None when there is none, or ``abort`` was set while waiting (the job is left to be cancelled)."""
        jobs = self.jobs.get(session_id)
        if not jobs:
            return None
        # The newest one ready frees the most; the older ones are superseded (it covers what they
        # cover), the newer ones stay in flight for the next due points.
        ready = [j for j in jobs if j.done.is_set() and j.ready is not None]
        job = ready[-1] if ready else jobs[0]
        while not job.done.wait(0.05):
            if abort.is_set():
                return None
        for older in jobs[: jobs.index(job)]:
            self._drop(older)
        self._drop(job)
        if job.ready is not None:  # what it replaces now (``swapped`` rebased it since it was asked for)
            job.ready = replace(job.ready, head_ids=job.head_ids)
            if job.seconds is not None:
                self.pace(session_id).summary_s = job.seconds
        return job

    def swapped(self, session_id: str, taken: Job) -> None:
        """``taken`` was swapped in: the summaries still in flight (each covering everything before
        its later cut) now replace only what follows it; one that covers no more is cancelled."""
        n = len(taken.head_ids)
        for job in self.in_flight(session_id):
            if job.head_ids[:n] == taken.head_ids and len(job.head_ids) > n:
                job.head_ids = job.head_ids[n:]
                job.head_tokens = max(0, job.head_tokens - taken.head_tokens)
            else:
                self._drop(job)

    def _drop(self, job: Job) -> None:
        jobs = self.jobs.get(job.session_id, [])
        if job in jobs:
            jobs.remove(job)
        if not jobs:
            self.jobs.pop(job.session_id, None)
        if not job.done.is_set():
            job.abort.set()

    def cancel(self, session_id: str) -> None:
        """Drop the session's background summaries (cancelled if still being written)."""
        for job in self.in_flight(session_id):
            self._drop(job)

    def keep_only(self, session_id: str) -> None:
        """A turn of ``session_id`` starts: another session's background summary is no use now."""
        for other in [sid for sid in self.jobs if sid != session_id]:
            self.cancel(other)

    def cancel_all(self) -> None:
        for sid in list(self.jobs):
            self.cancel(sid)
