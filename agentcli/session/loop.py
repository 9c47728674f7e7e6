"""The session loop (OpenCode's runLoop): store the user's message, then step until the model stops
calling tools — compacting when the context overflows, pruning old tool outputs after the turn.

Every iteration rebuilds what the model sees from the records: the window is read newest-first from
SQL and stops at the last completed compaction, so a turn's cost follows the window, not the session's age.
What the turns share (store, bus, plugins, model and agent, tools, policy, view) is the runtime's
(``runtime``); the loop is what a turn does with it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any

from agentcli.llm.stream import ChatRequest
from agentcli.redact import redact_messages
from agentcli.session import events, recovery, step_limit, title
from agentcli.session import window as model_window
from agentcli.session.attached import store_attached
from agentcli.session.capabilities import agent_temperature
from agentcli.session.compaction import prune
from agentcli.session.compaction.step import CompactionGuard, CompactionStep
from agentcli.session.notices import record as note_on_session
from agentcli.session.processor import Outcome, Processor, StepPolicy
from agentcli.session.request.history import Latest, completes_compaction, filter_compacted, latest, turn_done
from agentcli.session.request.input_size import check_input
from agentcli.session.request.view import RequestView
from agentcli.session.runtime import SessionRuntime
from agentcli.session.toolrunner import ToolRunner
from agentcli.session.toolset import offered_tools
from agentcli.session.usage import step_cost
from agentcli.store import clean, ids
from agentcli.store.records import AssistantMessage, TextPart, UserMessage, WithParts


@dataclass
class _Turn:
    """One run of the loop: what it uses and how far it got."""

    abort: threading.Event
    processor: Processor
    runner: ToolRunner
    compaction: CompactionStep
    steps: int = 0
    last: AssistantMessage | None = None  # the newest step sent
    stepped: tuple[AssistantMessage, Outcome] | None = None  # ... and its outcome, for the compaction step


@dataclass
class SessionLoop:
    """Runs turns on ``runtime`` (what the session's turns share); ``title_thread``: the title being
    written for a new session (``run`` waits a moment for it before it exits)."""

    runtime: SessionRuntime
    title_thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self.runtime.loop_for = SessionLoop  # a task's child session runs in a loop of its own
        self.runtime.next_request = self.next_request

    # --- entry points ------------------------------------------------------------------------

    def prompt(
        self, session_id: str, text: str, abort: threading.Event | None = None, attached: Sequence[Any] = ()
    ) -> AssistantMessage | None:
        """``attached``: parts that follow the text in the user's message (files the user mentioned);
        their ids are given here. InputTooLarge, with nothing written, for a message that cannot fit."""
        rt = self.runtime
        check_input(rt, session_id, text, attached)
        rt.start_plugins()
        text = clean.text(text)  # as the store keeps it: the title and the plugins see what is stored
        # The lease is taken before the user message is written: an agent that is not running the
        # session's turn must not add a question the running one would pick up and answer too.
        with rt.store.lease(session_id, on_wait=rt.options.on_busy):
            return self._prompt(session_id, text, abort, attached)

    def _prompt(
        self, session_id: str, text: str, abort: threading.Event | None, attached: Sequence[Any]
    ) -> AssistantMessage | None:
        rt, store, bus = self.runtime, self.runtime.store, self.runtime.bus
        session = store.get_session(session_id)
        if session.messages == 0:
            bus.publish(events.SessionCreated(session_id, session))
        agent = rt.agent.name  # type: ignore[union-attr]
        user = UserMessage(id=ids.ascending("msg"), session_id=session_id, model=rt.model.name, agent=agent)
        part = TextPart(id=ids.ascending("prt"), session_id=session_id, message_id=user.id, text=text)
        out = rt.plugins.trigger(  # type: ignore[union-attr]
            "chat_message",
            input={"session_id": session_id, "model": rt.model.name},
            output={"message": user, "parts": [part]},
        )
        user = out["message"] if isinstance(out.get("message"), UserMessage) else user
        store.put_message(user)
        for part in out.get("parts") or []:
            store.put_part(part.model_copy(update={"session_id": session_id, "message_id": user.id}))
        store_attached(store, session_id, user.id, attached)
        bus.publish(events.MessageUpdated(session_id, user))
        if not session.title:
            session = store.update_session(session_id, title=title.provisional(text), model=rt.model.name)
            bus.publish(events.SessionUpdated(session_id, session))
            self.title_thread = title.generate(store, session_id, rt.small_model or rt.model, text)
        elif session.model != rt.model.name:
            session = store.update_session(session_id, model=rt.model.name)
            bus.publish(events.SessionUpdated(session_id, session))
        rt.record_agent(session_id)
        return self.run(session_id, abort)

    def compact(
        self, session_id: str, focus: str | None = None, abort: threading.Event | None = None
    ) -> bool:
        """A manual compaction (``agentcli compact``, ``/compact``): no continue message follows."""
        rt = self.runtime
        rt.start_plugins()
        rt.plugins.new_turn()  # type: ignore[union-attr]
        if not rt.options.child:
            rt.tasks_started.reset()  # a new user turn: its tasks are counted afresh
        out = rt.plugins.trigger(  # type: ignore[union-attr]
            "command_execute_before",
            input={"command": "compact", "session_id": session_id},
            output={"arguments": focus or ""},
        )
        focus = str(out.get("arguments") or "") or None
        before = self._newest_compaction(session_id)
        with rt.store.lease(session_id, on_wait=rt.options.on_busy):
            if self._newest_compaction(session_id) != before:
                # Another agent compacted this session while this one waited for it: one is enough.
                said = f"already compacted: another agent compacted session {session_id} just now"
                rt.bus.publish(events.CompactionSkipped(session_id, said))
                return False
            compactor = rt.compactor(abort or threading.Event())
            if compactor.create(session_id, auto=False, overflow=False, focus=focus) is None:
                return False
            self.run(session_id, abort)
            return True

    def _newest_compaction(self, session_id: str) -> str | None:
        """The id of the session's newest completed summary (its window starts there)."""
        window = filter_compacted(self.runtime.store.stream(session_id))
        return max((m.id for m in window if completes_compaction(m)), default=None)

    # --- the loop ----------------------------------------------------------------------------

    def run(self, session_id: str, abort: threading.Event | None = None) -> AssistantMessage | None:
        """Step until the model stops calling tools (docs/architecture.md, "The path of one turn")."""
        rt = self.runtime
        turn = self._start_turn(session_id, abort or threading.Event())
        try:
            while not turn.abort.is_set():
                window = filter_compacted(rt.store.stream(session_id))  # 1. the window
                now = latest(window)
                # The step's tools first (a turn's first step waits for MCP servers still starting).
                turn.runner.tools = self.step_tools(session_id, first=turn.steps == 0, abort=turn.abort)
                built = cache(partial(rt.build_request, session_id, window, turn.runner))
                stepped, turn.stepped = turn.stepped, None
                step = turn.compaction.step(window, now, built, stepped)  # 2. the compaction step
                if step == "continue":
                    continue
                if step == "stop" or turn_done(now) or not self._count_step(turn):
                    break
                msg = self._new_step(session_id, now)  # 3. the request
                request, policy = self._step_request(turn, built())
                outcome = turn.processor.process(msg, request, policy)  # 4. the stream; 5. its tools
                turn.last, turn.stepped = msg, (msg, outcome)
                if outcome == "stop":
                    break
            turn.compaction.take_queued()  # what a plugin asked for during the turn's last tools
        finally:
            if turn.abort.is_set():  # Ctrl-C: nothing of this turn goes on in the background
                rt.background.cancel(session_id)
            if rt.config.compaction.prune:
                self.prune(session_id)  # 6. after the turn
            rt.bus.publish(events.TurnFinished(session_id, turn.last))
        return turn.last

    def _start_turn(self, session_id: str, abort: threading.Event) -> _Turn:
        rt = self.runtime
        rt.start_plugins()
        rt.plugins.new_turn()  # type: ignore[union-attr]
        rt.view.new_turn(session_id)  # instruction files as they are now, for the whole turn
        rt.adopt_window(model_window.session_window(rt.store, session_id, rt.model))
        # No turn of this session runs now (this process starts one): close what a killed one left open.
        if closed := recovery.close_interrupted(rt.store, session_id):
            rt.bus.publish(events.InterruptedClosed(session_id, closed.messages, closed.tool_calls))
        compaction = CompactionStep(
            compactor=rt.compactor(abort),
            guard=CompactionGuard(usable=rt.usable()),
            session_id=session_id,
            is_overflow=rt.overflows,
            too_big=rt.preflight_overflows,
            queued=rt.session_host.take,
            background=rt.background if rt.config.compaction.background else None,
        )
        rt.background.keep_only(session_id)  # a switch to another session: its summary is no use
        runner = rt.runner(abort, offered_tools(rt))
        return _Turn(abort, Processor(rt.store, rt.bus, abort), runner, compaction)

    def _count_step(self, turn: _Turn) -> bool:
        """One more step of the turn; False (said once) past the turn's step limit."""
        turn.steps += 1
        limit = self.runtime.max_steps
        if turn.steps <= limit:
            return True
        message = f"stopped after {limit} steps (max steps)"
        self.runtime.bus.publish(events.ErrorOccurred(turn.compaction.session_id, message, "max_steps"))
        return False

    def _new_step(self, session_id: str, now: Latest) -> AssistantMessage:
        assert now.user is not None and self.runtime.agent is not None  # a turn not done has a question
        parent, agent = now.user.id, self.runtime.agent.name
        msg = AssistantMessage(
            id=ids.ascending("msg"),
            session_id=session_id,
            parent_id=parent,
            model=self.runtime.model.name,
            agent=agent,
            mode=agent,
        )
        self.runtime.store.put_message(msg)
        return msg

    def _step_request(self, turn: _Turn, built: RequestView) -> tuple[ChatRequest, StepPolicy]:
        """The step's request and policy; the turn's last step offers no tools and asks to wrap up."""
        session_id = turn.compaction.session_id
        request, policy = (
            self.request(session_id, built, turn.runner),
            self.step_policy(turn.runner, session_id),
        )
        if turn.steps == self.runtime.max_steps:
            self.runtime.bus.publish(events.StepLimitReached(session_id, turn.steps))
            request, policy = step_limit.last_step(request, policy, turn.runner, turn.steps)
        return request, policy

    def prune(self, session_id: str) -> int:
        return prune.prune(self.runtime.store, self.runtime.bus, session_id)

    # --- requests ----------------------------------------------------------------------------

    def step_tools(self, session_id: str, *, first: bool, abort: threading.Event) -> dict[str, Any]:
        """The tools of the next step; a turn's first step waits for MCP servers still starting.
        A server that failed or died since is noted on the session (``sessions show``)."""
        rt = self.runtime
        own = rt.agent_host(rt.agent)  # type: ignore[arg-type]
        hosts = [h for h in (rt.options.mcp, own) if h is not None]
        for host in hosts:
            host.prepare_step(first=first, abort=abort)
        note_on_session(rt.store, session_id, hosts)
        return offered_tools(rt)

    def next_request(self, session_id: str, window: list[WithParts]) -> ChatRequest:
        """The request the next step would send for ``window`` (the summary request rides it)."""
        runner = self.runtime.runner(threading.Event(), offered_tools(self.runtime))
        return self.request(session_id, self.runtime.build_request(session_id, window, runner), runner)

    def request(self, session_id: str, built: RequestView, runner: ToolRunner) -> ChatRequest:
        rt = self.runtime
        agent = rt.agent
        assert agent is not None
        params = rt.plugins.trigger(  # type: ignore[union-attr]
            "chat_params",
            input={"session_id": session_id, "model": rt.model.name, "agent": agent.name},
            output={
                "temperature": agent_temperature(rt.config, rt.model, agent),
                "top_p": agent.top_p,
                "options": {},
            },
        )
        kwargs = rt.model.request_kwargs(session_id)
        extra = {**kwargs.pop("extra", {}), **(params.get("options") or {})}
        if params.get("top_p") is not None:
            extra["top_p"] = params["top_p"]
        opt_in = rt.config.redact.model_requests
        messages = redact_messages(built.messages) if opt_in else built.messages
        return ChatRequest(
            messages=messages,
            tools=runner.schemas() or None,
            max_tokens=rt.max_tokens(),
            temperature=params.get("temperature"),
            extra=extra,
            **kwargs,
        )

    def step_policy(self, runner: ToolRunner, session_id: str = "") -> StepPolicy:
        rt = self.runtime
        return StepPolicy(
            cost=partial(step_cost, rt.model.route.litellm_model),
            is_overflow=rt.overflows,
            auto_compact=rt.config.compaction.auto,
            run_tools=runner,
            learn_window=partial(rt.learn_window, session_id) if session_id else None,
            watch_truncation=rt.model.window_source.startswith("Ollama"),
        )
