"""``Compactor``: the I/O of a compaction — queue its marker, run the summary turn, fall back, continue
(the contract is the package's, ``agentcli.session.compaction``)."""

from __future__ import annotations

import dataclasses
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentcli.bus import Bus
from agentcli.config import Config
from agentcli.llm.stream import ChatRequest
from agentcli.llm.tokens import estimate_request, json_text
from agentcli.plugins.manager import Plugins
from agentcli.redact import redact, redact_messages
from agentcli.session import events
from agentcli.session.compaction import cached, overflow, plan, send, swap
from agentcli.session.compaction import hooks as compaction_hooks
from agentcli.session.compaction.after import AfterSummary
from agentcli.session.compaction.prepared import Attempts, Prepared, Result
from agentcli.session.model import ModelInfo
from agentcli.session.request.history import completes_compaction, filter_compacted, latest
from agentcli.session.request.sizes import Converted, window_tokens
from agentcli.session.request.view import RequestView, View, convert, model_view
from agentcli.store import ids
from agentcli.store.records import (
    AssistantMessage,
    CompactionDiagnostics,
    CompactionPart,
    StepStartPart,
    TextPart,
    ToolPart,
    UserMessage,
    WithParts,
    now_ms,
)
from agentcli.store.store import Store

# Held while a compaction is looked for and queued: requests made at once in this process join.
_QUEUEING = threading.Lock()
SUMMARY_RETRIES = 3  # smaller summary requests tried after the first one overflows


@dataclass
class Compactor:
    store: Store
    bus: Bus
    plugins: Plugins
    config: Config
    model: ModelInfo  # the summarizer: agent.compaction.model or the session's model
    session_model: ModelInfo
    usable: int
    abort: threading.Event
    view: View
    delays: int = 0  # automatic compactions plugins delayed, this turn (a compactor lives one turn)
    # The session's next chat request for a window, as the loop sends it (None: the transcript only).
    chat: Callable[[str, list[WithParts]], ChatRequest] | None = None
    clock: Callable[[], float] = time.monotonic  # the runtime's (``Background.clock``): times summaries

    # --- create ------------------------------------------------------------------------------

    def create(
        self, session_id: str, *, auto: bool, overflow: bool, focus: str | None = None, resume: bool = False
    ) -> str | None:
        """Queue a compaction: a user marker message with a compaction part. Returns its id. A
        compaction already queued and not yet done is joined: its marker's id, no second marker.
        ``resume``: asked for mid-turn (a plugin's compact()): the turn goes on after it."""
        with _QUEUEING:  # two requests at once in this process (/compact and a plugin's): one marker
            pending = latest(filter_compacted(self.store.stream(session_id))).tasks
            if pending:
                return pending[-1].message_id
            return self._queue(session_id, auto=auto, overflow=overflow, focus=focus, resume=resume)

    def _queue(self, session_id: str, *, auto: bool, overflow: bool, focus: str | None, resume: bool) -> str:
        marker = UserMessage(
            id=ids.ascending("msg"), session_id=session_id, agent="build", model=self.session_model.name
        )
        self.store.put_message(marker)
        self.store.put_part(
            CompactionPart(
                id=ids.ascending("prt"),
                session_id=session_id,
                message_id=marker.id,
                auto=auto,
                overflow=overflow,
                focus=focus,
                resume=resume,
            )
        )
        return marker.id

    def requeue(self, window: list[WithParts], task: CompactionPart) -> str | None:
        """A compaction a killed process left unfinished, with the user's newer message after it:
        its records go and it is queued again after that message (which it keeps verbatim), as an
        automatic one so the message is answered once it is done."""
        doomed = [task.message_id, *(m.id for m in window if plan.summary_of(m, task.message_id))]
        self.store.delete_messages(task.session_id, doomed)
        return self.create(task.session_id, auto=True, overflow=task.overflow, focus=task.focus)

    # --- process -----------------------------------------------------------------------------

    def prepare(
        self, messages: list[WithParts], *, parent_id: str, overflow: bool, grows: int = 0
    ) -> Prepared:
        """Everything decided before the summary request: the window converted once and sized, what
        is replayed, summarised and kept. ``grows``: what the turn adds before a background summary
        is swapped in (kept verbatim then): the tail chosen now is that much smaller."""
        parent = next((m for m in reversed(messages) if m.id == parent_id), None)
        if parent is None or parent.role != "user":
            raise ValueError(f"Compaction parent must be a user message: {parent_id}")
        sid = parent.info.session_id
        marker_part = parent.compaction()
        # A summary of this marker that never finished (the process was killed): redone from scratch.
        stale = [m.id for m in messages if plan.summary_of(m, parent_id) and not completes_compaction(m)]
        if stale:
            self.store.delete_messages(sid, stale)
            messages = [m for m in messages if m.id not in stale]

        # The one conversion of the window: sizes before, the tail, the fallback and sizes after.
        converted = self.view.window(model_view(messages), target_model=self.session_model.name)
        system_blocks = self.view.system(sid, self.session_model.name)
        tokens_before = max(
            self.store.get_session(sid).context_tokens, window_tokens(system_blocks, converted)
        )

        window = messages
        replay: WithParts | None = None
        if overflow:
            replay, before_replay = plan.choose_replay(messages, parent_id)
            if replay is not None:
                messages = before_replay
        history = (
            messages[:-1]
            if marker_part is not None and messages and messages[-1].id == parent_id
            else messages
        )
        visible = plan.hide_completed(history)
        sized = convert(visible, target_model=self.session_model.name, reuse=converted.index())
        cfg = self.config.compaction
        budget = (
            cfg.preserve_recent_tokens
            if cfg.preserve_recent_tokens is not None
            else plan.default_preserve_budget(self.usable)
        )
        budget = max(min(budget, plan.PRESERVE_MIN_TOKENS), budget - grows)
        selection = plan.select_tail(
            visible, tail_turns=cfg.tail_turns, budget=budget, sizes=sized, keep_question=True
        )
        return Prepared(
            sid=sid,
            parent=parent,
            marker_part=marker_part,
            replay=replay,
            in_progress=None if replay is not None else plan.question_in_progress(visible, selection.head),
            history=history,
            window=window,
            previous=plan.previous_summary(history),
            converted=converted,
            sized=sized,
            system_blocks=system_blocks,
            tokens_before=tokens_before,
            budget=budget,
            selection=selection,
        )

    def process(
        self,
        messages: list[WithParts],
        *,
        parent_id: str,
        auto: bool,
        overflow: bool,
        ready: swap.Ready | None = None,
    ) -> Result:
        """``ready``: a summary written in the background (``background``), swapped in instead of a
        summary request while the history it summarises is unchanged (else summarised as usual)."""
        started = self.clock()
        prep = self.prepare(messages, parent_id=parent_id, overflow=overflow)
        sid = prep.sid
        # An automatic compaction, or one asked for mid-turn, continues the turn after the summary.
        goes_on = auto or bool(prep.marker_part and prep.marker_part.resume)
        hook = compaction_hooks.hook_output()
        heard = self._ask_plugins(prep, hook, auto=auto, overflow=overflow)
        if self.abort.is_set():
            return self._cancel(prep, [])
        if heard.action == "cancel":
            return self._nothing(prep, goes_on, "a plugin blocked the compaction")
        if heard.action in ("decline", "delay"):
            wish = "declined" if heard.action == "decline" else "delayed"
            result = self._nothing(prep, True, f"a plugin {wish} the automatic compaction (blocked)")
            result.held = heard.action
            return result
        if heard.overruled:
            self.bus.publish(events.CompactionFailed(sid, f"compacting anyway: {heard.overruled}"))
        cut = self._cut(prep, ready, hook)
        prep = cut or prep
        swapped = ready if cut else None
        self.bus.publish(events.CompactionStarted(sid, auto, overflow, background=swapped is not None))

        summary = send.summary_message(sid, parent_id, self.model)
        self.store.put_message(summary)
        attempts = Attempts()
        try:
            outcome = self._first(summary, prep, hook, attempts, heard.summary, swapped)
            retries = SUMMARY_RETRIES + self.rides(prep)
            while outcome == "overflow" and attempts.count <= retries and not self.abort.is_set():
                outcome = self._summarize(summary, prep, hook, attempts)
        except BaseException:
            self._cancel(prep, [summary.id])
            raise
        if self.abort.is_set():
            return self._cancel(prep, [summary.id])

        fallback_reason: str | None = None
        changed: set[str] = set()
        tail_start_id = prep.selection.tail_start_id
        if outcome == "overflow":
            fallback_reason = (
                f"the summary request was too long even after {SUMMARY_RETRIES} smaller attempts"
            )
        elif outcome == "error":
            reason = plan.failure_cause(summary)
            if not (auto or (self.usable and prep.tokens_before >= self.usable)):
                # Under the usable budget (a manual compaction): nothing needs compacting; say so.
                self.store.delete_messages(sid, [summary.id, parent_id] if prep.marker_part else [summary.id])
                self.bus.publish(
                    events.CompactionFailed(sid, f"the summary failed ({reason}); nothing was compacted")
                )
                return Result("continue" if goes_on else "stop", prep.tokens_before, prep.tokens_before)
            fallback_reason = f"the summary failed ({reason})"
        if fallback_reason is not None:
            # Over the budget the next request must not go out with this window: compact without a model.
            changed, tail_start_id = self._fallback(summary, prep)
            self.bus.publish(
                events.CompactionFailed(
                    sid,
                    f"{fallback_reason}; made a compaction without a model "
                    "(old tool outputs cleared, oldest turns left out)",
                )
            )

        if prep.marker_part is not None:
            self.store.put_part(prep.marker_part.model_copy(update={"tail_start_id": tail_start_id}))
        after = AfterSummary(
            self.store,
            self.plugins,
            self.config,
            self.session_model.name,
            self.usable,
            str(self.view.directory),
        )
        resent = after.go_on(sid, prep.replay, prep.in_progress, overflow, tail_start_id) if goes_on else None
        after.carry(sid, summary.id, prep.history, prep.replay, tail_start_id, resent)
        tokens_after = self._tokens_after(sid, prep.system_blocks, prep.converted, changed)
        self.store.update_session(sid, context_tokens=tokens_after, add={"compactions": 1})
        took = self.clock() - started
        if prep.marker_part is not None:
            diagnostics = CompactionDiagnostics(
                tokens_before=prep.tokens_before,
                tokens_after=tokens_after,
                request_tokens=attempts.request_tokens,
                attempts=attempts.count,
                fallback=fallback_reason is not None,
                fallback_reason=fallback_reason,
                duration_ms=int(took * 1000),
                background=swapped is not None,
                summary_ms=int(1000 * ((swapped.seconds or 0.0) if swapped else took)),
                summarizer=self.model.name,
            )
            self.store.put_part(
                prep.marker_part.model_copy(
                    update={"tail_start_id": tail_start_id, "diagnostics": diagnostics}
                )
            )
        self.bus.publish(
            events.CompactionFinished(
                sid,
                auto=auto,
                overflow=overflow,
                tokens_before=prep.tokens_before,
                tokens_after=tokens_after,
                cost=summary.cost,
                summary=self.store.get_message(summary.id).text(),
                fallback=fallback_reason is not None,
                background=swapped is not None,
            )
        )
        return Result("continue", tokens_after, prep.tokens_before)

    def _ask_plugins(self, prep: Prepared, hook: dict[str, Any], *, auto: bool, overflow: bool) -> Any:
        """``session_compacting``, and what of it is heard (``compaction_hooks.hear``)."""
        limits = self.session_model.limits
        hard = overflow or compaction_hooks.over(limits.input or limits.context, prep.tokens_before)
        try:  # a plugin that raises is isolated by the plugin manager (its change dropped)
            heard = compaction_hooks.ask(self.plugins, hook, prep.sid, auto, overflow, hard, self.delays)
        except BaseException:  # Ctrl-C inside the hook: no marker left to fire again by surprise
            self._cancel(prep, [])
            raise
        self.delays += heard.action == "delay"
        return heard

    def _first(
        self,
        summary: AssistantMessage,
        prep: Prepared,
        hook: dict[str, Any],
        attempts: Attempts,
        written: str | None,
        ready: swap.Ready | None,
    ) -> str:
        """The summary: the plugin's (no request), the background one, or the first summary request."""
        if written is not None:
            return self._write_summary(summary, written)
        if ready is not None:
            attempts.count, attempts.request_tokens = 1, ready.request_tokens
            return swap.write(self.store, summary, ready)
        return self._summarize(summary, prep, hook, attempts)

    def _cut(self, prep: Prepared, ready: swap.Ready | None, hook: dict[str, Any]) -> Prepared | None:
        """``prep`` cut where ``ready`` was; None without one, when the history changed under it (it
        is discarded), when what followed its cut would fill over three quarters of the usable window
        (a summary written now keeps less), or when a plugin shapes the summary (one is written now,
        with its words)."""
        if ready is None or hook["context"] or hook["prompt"]:
            return None
        cut = swap.cut(prep.history, ready)
        if cut is None or (self.usable and prep.sized.tokens(len(cut[0].head)) > self.usable * 3 // 4):
            return None
        return dataclasses.replace(prep, selection=cut[0], in_progress=cut[1])

    def _write_summary(self, summary: AssistantMessage, text: str, *, fallback: bool = False) -> str:
        """A summary written without a summary request (a plugin's, or made without a model),
        redacted like any summary."""
        summary.error, summary.finish, summary.completed = None, "stop", now_ms()
        self.store.put_message(summary)
        part = TextPart(id=ids.ascending("prt"), session_id=summary.session_id, message_id=summary.id)
        self.store.put_part(part.model_copy(update={"text": redact(text), "fallback": fallback}))
        return "ok"

    def _nothing(self, prep: Prepared, goes_on: bool, reason: str) -> Result:
        """A compaction that will not happen: its marker goes, the history stays."""
        if prep.marker_part is not None:
            self.store.delete_messages(prep.sid, [prep.parent.id])
        self.bus.publish(events.CompactionFailed(prep.sid, f"{reason}; nothing was compacted"))
        return Result("continue" if goes_on else "stop", prep.tokens_before, prep.tokens_before)

    def _cancel(self, prep: Prepared, written: list[str]) -> Result:
        """Ctrl-C / SIGTERM during the summary: no errored summary, no marker left to fire again."""
        self.store.delete_messages(prep.sid, [*written, prep.parent.id] if prep.marker_part else written)
        self.bus.publish(
            events.CompactionFailed(prep.sid, "the summary was cancelled; nothing was compacted")
        )
        return Result("stop", prep.tokens_before, prep.tokens_before)

    def _tokens_after(
        self, sid: str, system_blocks: list[str], converted: Converted, changed: set[str]
    ) -> int:
        """The new window's size: only the records this compaction wrote (and any it changed) are
        converted; the kept tail's sizes come from the one conversion of the old window."""
        reuse = {k: v for k, v in converted.index().items() if k not in changed}
        window = model_view(filter_compacted(self.store.stream(sid)))
        return window_tokens(
            system_blocks, convert(window, target_model=self.session_model.name, reuse=reuse)
        )

    def rides(self, prep: Prepared) -> bool:
        """Whether the first summary request is the cache-riding one (``cached``): the default, when
        the summarizer is the session's model (a cache is the model's) and the window was not just
        rejected as too long."""
        return (
            self.config.compaction.request == "cache"
            and self.chat is not None
            and self.model.name == self.session_model.name
            and prep.replay is None
            and not (prep.marker_part is not None and prep.marker_part.overflow)
        )

    def _summarize(
        self, summary: AssistantMessage, prep: Prepared, hook: dict[str, Any], attempts: Attempts
    ) -> str:
        """One summary request. Returns "ok", "overflow" (too long, or a cache-riding request answered
        with a tool call and no text: retry with the transcript, smaller) or "error"."""
        first = attempts.count == 0
        request = self.next_summary_request(prep, hook, attempts)
        if request is None:
            return "overflow"
        riding = self.rides(prep) and first
        return send.summary(self.store, self.bus, self.abort, summary, request, self.model, riding=riding)

    def next_summary_request(
        self, prep: Prepared, hook: dict[str, Any], attempts: Attempts
    ) -> ChatRequest | None:
        """The summary request of the next attempt (the first: cache-riding where ``_rides``); None
        when it is certain to be rejected as too long or is the very request already rejected: not
        sent, the next attempt is smaller (or the compaction is made without a model)."""
        focus = prep.marker_part.focus if prep.marker_part else None
        rides = self.rides(prep)
        limits = self.model.limits
        max_tokens = (
            overflow.max_output_tokens(limits, self.config.output_token_max) if limits.output else None
        )
        if rides and attempts.count == 0:
            request = self.riding_request(prep, hook, focus, max_tokens)
            tokens = estimate_request(request.messages, request.tools)
        else:
            built = self.summary_request(
                prep.sid, prep.selection.head, prep.previous, hook, focus, attempts.count - rides
            )
            request = ChatRequest(
                messages=built.messages,
                tools=None,
                max_tokens=max_tokens,
                **self.model.request_kwargs(prep.sid),
            )
            tokens = built.tokens
        attempts.count += 1
        attempts.request_tokens = tokens
        digest = hashlib.sha256(json_text(request.messages).encode()).hexdigest()
        if digest in attempts.sent or overflow.preflight(tokens, limits):
            return None
        attempts.sent.add(digest)
        return request

    def riding_request(
        self, prep: Prepared, hook: dict[str, Any], focus: str | None, max_tokens: int | None
    ) -> ChatRequest:
        """The cache-riding summary request (``cached``): the next chat request plus the instruction."""
        assert self.chat is not None
        return cached.summary_request(
            self.chat(prep.sid, prep.window),
            cached.instruction(
                quote=cached.tail_quote(prep.history, prep.selection.tail_start_id),
                previous=prep.previous is not None,
                hook=hook,
                focus=focus,
            ),
            litellm_model=self.model.route.litellm_model,
            max_tokens=max_tokens,
        )

    def summary_request(
        self,
        sid: str,
        head: list[WithParts],
        previous: str | None,
        hook: dict[str, Any],
        focus: str | None,
        attempt: int,
    ) -> RequestView:
        """The summary request of ``attempt`` (0: the first; later ones smaller), through the view."""
        trimmed, cap = plan.shrink_for_retry(head, attempt)
        user_cap = plan.retry_user_text_cap(attempt)

        def build(msgs: Any) -> list[dict[str, Any]]:
            text = plan.serialize_for_summary(msgs, tool_output_max_chars=cap, user_text_max_chars=user_cap)
            # Secrets never reach the summariser (agentcli.redact); the system prompt is our own words.
            system, *rest = plan.build_summary_request(
                text, previous, list(hook.get("context") or []), focus, hook.get("prompt")
            )
            return [system, *redact_messages(rest)]

        return self.view.summary_request(
            sid,
            model=self.model.name,
            head=trimmed,
            build=build,
        )

    def _fallback(self, summary: AssistantMessage, prep: Prepared) -> tuple[set[str], str | None]:
        """Write a compaction made without a model. Returns the ids of the messages it changed
        and the first message it keeps after the summary."""
        # The summary's own records (a failed or partial reply) make way for the made-up summary.
        stale = [p for p in self.store.get_message(summary.id).parts if not isinstance(p, StepStartPart)]
        if stale:
            self.store.delete_messages(prep.sid, [summary.id])
        made = plan.fallback_compaction(
            prep.history,
            budget=prep.budget,
            tail_turns=self.config.compaction.tail_turns,
            sizes=prep.sized,
            keep_question=True,
        )
        prune_ids = set(made.prune_part_ids)
        parts = [p for m in prep.history for p in m.parts if isinstance(p, ToolPart) and p.id in prune_ids]
        if parts:
            self.store.mark_compacted(parts)
        self._write_summary(summary, made.summary_text, fallback=True)
        return {p.message_id for p in parts}, made.tail_start_id
