"""Turns loop events into terminal output: streamed markdown, one line per tool call, notices for
retries, pruning and compaction, and the context gauge after the turn."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.live import Live
from rich.spinner import Spinner
from rich.text import Text

from agentcli.session import events
from agentcli.ui import theme
from agentcli.ui.fmt import format_cost, format_tokens
from agentcli.ui.gauge import Gauge, GaugeData
from agentcli.ui.oneline import OneLine
from agentcli.ui.tool_detail import tool_detail
from agentcli.ui.tool_line import tool_line, tool_spinner
from agentcli.ui.wrap import Wrapped

if TYPE_CHECKING:  # rendering markdown (markdown-it, pygments) loads only when a terminal shows it
    from agentcli.ui.markdown_stream import MarkdownStream


@dataclass
class TurnNotes:
    """What happened during a turn that the gauge reports."""

    pruned_tokens: int = 0
    compacted: bool = False
    already_compacted: bool = False  # another agent compacted the session while this one waited
    errors: list[str] = field(default_factory=list)
    text: str = ""  # the visible answer text of the turn's last step


class TurnRenderer:
    """A bus listener. ``raw_stdout``: write answer text unrendered (``run`` piped to a file)."""

    def __init__(
        self,
        console: Console,
        err: Console,
        *,
        cwd: Path,
        raw_stdout: bool = False,
        show_reasoning: bool = True,
        tool_details: bool = False,
    ) -> None:
        self.console = console
        self.tool_details = tool_details  # bash output's first lines, the todo checklist (the chat)
        self.err = err
        self.cwd = cwd
        self.raw_stdout = raw_stdout
        self.show_reasoning = show_reasoning
        self.notes = TurnNotes()
        self._stream: MarkdownStream | None = None
        self._stream_id: str | None = None
        self._summary = False  # the step streaming now writes a compaction summary
        self._spinner: Live | None = None
        self._spin_key: str | None = None
        self._spin_shown: Any = None  # what the live spinner shows, to bring it back after a question
        self._lock = threading.RLock()

    def reset(self) -> None:
        self.notes = TurnNotes()

    def pause(self) -> None:
        """Finish any live region (before a question is asked, or the turn ends)."""
        with self._lock:
            self._stop_spinner()
            self._finish_stream()

    def hold(self) -> Callable[[], None]:
        """Pause for a question; the returned function brings back the spinner that was showing (the
        tool asking runs on once answered, and a slow command must not leave the screen still)."""
        with self._lock:
            held = (self._spin_shown, self._spin_key) if self._spinner is not None else None
            self.pause()

        def resume() -> None:
            with self._lock:
                if (
                    held is not None
                    and held[1] is not None
                    and self._spinner is None
                    and self._stream is None
                ):
                    self._spin(held[0], held[1])

        return resume

    def waiting(self) -> None:
        """The "waiting for the model…" spinner, before the step starts (from Enter on)."""
        with self._lock:
            self._spin(_waiting_spinner(), "step")

    def _finish_stream(self) -> None:
        if self._stream is not None:
            self._stream.finish()
        self._stream = None
        self._stream_id = None

    def _spin(self, renderable: Any, key: str) -> None:
        """A transient one-line spinner on stderr while nothing else moves (terminal only)."""
        if self._spinner is not None and self._spin_key == key:
            self._spinner.update(renderable)
            self._spin_shown = renderable
            return
        self._stop_spinner()
        if self.err.is_terminal and not self.raw_stdout:
            self._spinner = Live(renderable, console=self.err, transient=True, refresh_per_second=10)
            self._spinner.start()
            self._spin_key = key
            self._spin_shown = renderable

    def _stop_spinner(self) -> None:
        if self._spinner is not None:
            self._spinner.stop()
            self._spinner = None
            self._spin_key = None
            self._spin_shown = None

    def __call__(self, event: Any) -> None:
        with self._lock:
            self._handle(event)

    def _handle(self, event: Any) -> None:
        if isinstance(event, events.ToolUpdated) and event.part.state.status in ("pending", "running"):
            # Arguments streaming, then the tool running: one spinner line, updated in place.
            self._finish_stream()
            self._spin(tool_spinner(event.part, cwd=self.cwd), event.part.id)
            return
        if not isinstance(event, events.StepStarted):
            self._stop_spinner()  # any other event ends the spinner line (a step start continues it)
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    # --- one method per event type (``_HANDLERS``) ---------------------------------------------

    def _step_started(self, event: events.StepStarted) -> None:
        self._summary = event.message.summary
        self._finish_stream()
        self._spin(_waiting_spinner(), "step")  # continues a spinner started at Enter

    def _text_delta(self, event: events.TextDelta) -> None:
        if self._summary:
            # A summary streaming is progress, not the answer: dimmed, on stderr.
            self._append(event.part_id, event.text, self.err, reasoning=True)
        elif event.reasoning and not self.show_reasoning:
            return
        elif self.raw_stdout:
            if not event.reasoning:
                sys.stdout.write(event.text)
                sys.stdout.flush()
        else:
            self._append(event.part_id, event.text, self.console, reasoning=event.reasoning)

    def _append(self, part_id: str, text: str, console: Console, *, reasoning: bool) -> None:
        if self._stream_id != part_id:
            self.pause()
            from agentcli.ui.markdown_stream import MarkdownStream, ReasoningStream

            cls = ReasoningStream if reasoning else MarkdownStream
            self._stream = cls(console)
            self._stream_id = part_id
        assert self._stream is not None
        self._stream.append(text)  # O(new text): the stream keeps what came before

    def _text_ended(self, event: events.TextEnded) -> None:
        if self._summary:
            self.pause()
            return
        if not event.reasoning:
            self.notes.text = event.text
        if self._stream_id == event.part_id:
            self.pause()
        elif self.raw_stdout and not event.reasoning and event.text:
            sys.stdout.write("\n")
            sys.stdout.flush()

    def _tool_updated(self, event: events.ToolUpdated) -> None:
        if event.part.state.status in ("completed", "error"):
            self.pause()
            self.err.print(tool_line(event.part, cwd=self.cwd))
            if self.tool_details and (detail := tool_detail(event.part)) is not None:
                self.err.print(detail)

    def _subagent_tool(self, event: events.SubagentToolUpdated) -> None:
        """A task's own tool calls, one dim line each under the running task."""
        self.pause()
        line = Text.assemble((f"  ↳ @{event.agent} ", theme.META), tool_line(event.part, cwd=self.cwd).text)
        self.err.print(OneLine(line))

    def _permission_refused(self, event: events.PermissionRefused) -> None:
        self.pause()
        self._say(Text.assemble(("permission: ", "yellow"), event.hint))

    def _retrying(self, event: events.Retrying) -> None:
        self.pause()
        self._say(
            Text(f"retrying in {event.delay:.1f}s (attempt {event.attempt}): {event.error}", theme.META)
        )

    def _error(self, event: events.ErrorOccurred) -> None:
        self.pause()
        if self._summary:
            return  # a failed summary is told in one line naming it (CompactionFailed)
        self.notes.errors.append(event.message)
        if event.kind != "context_overflow":
            self._say(Text.assemble(("error:", theme.ERROR), " ", event.message))
        else:
            self._say(Text.assemble(("context overflow:", "yellow"), " ", event.message))

    def _window_learned(self, event: events.WindowLearned) -> None:
        self.pause()
        self._say(Text(event.line, theme.META))

    def _pruned(self, event: events.Pruned) -> None:
        self.notes.pruned_tokens += event.tokens
        self._say(
            f"[{theme.META}]pruned {format_tokens(event.tokens)} tokens of old tool output"
            f" ({event.parts} results)[/]"
        )

    def _compaction_started(self, event: events.CompactionStarted) -> None:
        self.pause()
        self._say(f"[cyan]{event.said()}[/]")

    def _compaction_finished(self, event: events.CompactionFinished) -> None:
        self.pause()
        self._summary = False
        self.notes.compacted = True
        how = event.how()
        self._say(
            f"[cyan]compacted{how}:[/] {format_tokens(event.tokens_before)}"
            f" → {format_tokens(event.tokens_after)} tokens"
            f" · summary cost {format_cost(event.cost)}"
        )

    def _compaction_failed(self, event: events.CompactionFailed) -> None:
        self.pause()
        self._summary = False
        self._say(Text(f"compaction: {event.message}", "yellow"))

    def _compaction_skipped(self, event: events.CompactionSkipped) -> None:
        self.pause()
        self.notes.already_compacted = True
        self._say(Text(event.message))

    def _step_limit(self, event: events.StepLimitReached) -> None:
        self.pause()
        self._say(
            f"[yellow]step limit reached ({event.max_steps} steps):[/]"
            " asking the model to wrap up without tools"
        )

    def _interrupted_closed(self, event: events.InterruptedClosed) -> None:
        calls = f"{event.tool_calls} tool call{'s' if event.tool_calls != 1 else ''}"
        self._say(
            f"[{theme.META}]closed {calls} and {event.messages} step(s) an earlier agentcli process left"
            " unfinished (shown to the model as interrupted)[/]"
        )

    def _say(self, message: Text | str) -> None:
        """A notice on stderr: one line, wrapped between words with a hanging indent when too wide."""
        self.err.print(Wrapped(message), soft_wrap=True)  # it wraps itself

    def _turn_finished(self, event: events.TurnFinished) -> None:
        self.pause()


# Event type → the method that shows it; events not listed only end the spinner line.
_HANDLERS: dict[type, Callable[[TurnRenderer, Any], None]] = {
    events.StepStarted: TurnRenderer._step_started,
    events.TextDelta: TurnRenderer._text_delta,
    events.TextEnded: TurnRenderer._text_ended,
    events.ToolUpdated: TurnRenderer._tool_updated,
    events.SubagentToolUpdated: TurnRenderer._subagent_tool,
    events.PermissionRefused: TurnRenderer._permission_refused,
    events.Retrying: TurnRenderer._retrying,
    events.ErrorOccurred: TurnRenderer._error,
    events.Pruned: TurnRenderer._pruned,
    events.WindowLearned: TurnRenderer._window_learned,
    events.CompactionStarted: TurnRenderer._compaction_started,
    events.CompactionFinished: TurnRenderer._compaction_finished,
    events.CompactionFailed: TurnRenderer._compaction_failed,
    events.CompactionSkipped: TurnRenderer._compaction_skipped,
    events.StepLimitReached: TurnRenderer._step_limit,
    events.InterruptedClosed: TurnRenderer._interrupted_closed,
    events.TurnFinished: TurnRenderer._turn_finished,
}


def _waiting_spinner() -> Spinner:
    return Spinner("dots", text=Text("waiting for the model…", style=theme.META))


def gauge_for(runtime: Any, session_id: str, notes: TurnNotes) -> Gauge:
    """The gauge after a turn on ``runtime`` (a SessionRuntime)."""
    from agentcli.session.request.figure import figure

    session = runtime.store.get_session(session_id)
    cache_read, request_input = last_request_cache(runtime.store, session_id)
    now = figure(runtime.store, session_id)
    return Gauge(
        GaugeData(
            used=now.tokens,
            estimated=now.estimated,
            context_limit=runtime.model.limits.context,
            usable=runtime.usable(),
            pruned_tokens=notes.pruned_tokens,
            compacted=notes.compacted,
            cost=session.cost,
            model=runtime.model.name,
            cache_read=cache_read,
            request_input=request_input,
        )
    )


def last_request_cache(store: Any, session_id: str) -> tuple[int, int]:
    """(tokens the provider's cache served, all input tokens) of the session's last request."""
    from agentcli.session.usage import last_request

    tokens = last_request(store.stream(session_id))
    if tokens is None:
        return 0, 0
    return tokens.cache.read, tokens.input + tokens.cache.read + tokens.cache.write
