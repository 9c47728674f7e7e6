"""The session loop (OpenCode's runLoop): store the user's message, then step until the model stops
calling tools — compacting when the context overflows, pruning old tool outputs after the turn.

Every iteration rebuilds what the model sees from the records: the window is read newest-first from
SQL and stops at the last completed compaction, so a turn's cost follows the window, not the session's age.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache, partial
from pathlib import Path
from typing import Any

from agentcli.bus import Bus
from agentcli.config import Config
from agentcli.llm.stream import ChatRequest
from agentcli.plugins.api import ContextFigures, PluginContext
from agentcli.plugins.host import SessionHost
from agentcli.plugins.host import start as start_plugins
from agentcli.plugins.manager import Plugins
from agentcli.project_layout import SKILL_DIRS, escapes
from agentcli.redact import redact_messages
from agentcli.session import events, recovery, step_limit, title, toolset
from agentcli.session import window as model_window
from agentcli.session.agents.registry import Agent, AgentRegistry, effective_rules, system_head
from agentcli.session.attached import store_attached
from agentcli.session.compaction import carryover, overflow, prune
from agentcli.session.compaction.compactor import Compactor
from agentcli.session.compaction.step import CompactionGuard, CompactionStep
from agentcli.session.model import ModelInfo, resolve_model
from agentcli.session.notices import record as note_on_session
from agentcli.session.options import LoopOptions
from agentcli.session.permission import PermissionPolicy
from agentcli.session.processor import Outcome, Processor, StepPolicy
from agentcli.session.request import system
from agentcli.session.request.history import Latest, completes_compaction, filter_compacted, latest, turn_done
from agentcli.session.request.input_size import check_input
from agentcli.session.request.view import RequestView, View
from agentcli.session.toolrunner import ToolRunner, window_room
from agentcli.session.usage import step_cost
from agentcli.store import clean, ids
from agentcli.store.artifacts import Carryover
from agentcli.store.records import AssistantMessage, TextPart, UserMessage, WithParts
from agentcli.store.store import Store


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
    store: Store
    config: Config
    model: ModelInfo
    options: LoopOptions
    bus: Bus = field(default_factory=Bus)
    plugins: Plugins | None = None
    policy: PermissionPolicy = field(default_factory=PermissionPolicy)
    small_model: ModelInfo | None = None
    compaction_model: ModelInfo | None = None
    title_thread: threading.Thread | None = None
    agents: AgentRegistry | None = None  # None: the config's (agentcli.session.agents.registry)
    agent: Agent | None = None  # the session's agent; None: the default one
    plugin_context: PluginContext | None = field(default=None, init=False)
    session_host: SessionHost = field(init=False)
    view: View = field(init=False)

    def __post_init__(self) -> None:
        self.session_host = SessionHost(self.context_figures, self.ledger)
        if self.plugins is None:
            self.plugins = Plugins(self.bus)
        confine = None if self.options.project_trusted else self.project_root()
        self.view = View(
            self.options.directory, self.config, self.plugins, self.options.global_config_dir, confine
        )
        if self.options.tools is None:
            from agentcli.tools.registry import all_tools

            self.options.tools = {t.name: t for t in all_tools(self.skill_dirs(), skill_confine=confine)}
        if self.agents is None:
            self.agents = AgentRegistry.from_config(self.config)
        self.chosen_model = self.model  # the model of an agent that names none
        self.user_rules = dict(self.policy.rules)  # each agent's rules start from these
        self._remembered: dict[str, set[tuple[str, str]]] = {}  # "always" answers, per agent
        self._apply_agent(self.agent or self.agents.default())

    # --- the agent ---------------------------------------------------------------------------

    def switch_agent(self, name: str, session_id: str | None = None) -> Agent:
        """Make ``name`` (a primary agent) the one that answers from now on; with ``session_id``, the
        session records it. Raises AgentError (one line) for an unknown agent or a subagent."""
        assert self.agents is not None
        agent = self.agents.require_primary(name)
        self._apply_agent(agent)
        if session_id is not None:
            self._record_agent(session_id)
        return agent

    def _apply_agent(self, agent: Agent) -> None:
        self.model = self.model_for(agent)
        self.agent = agent
        self.policy.rules = effective_rules(agent, self.user_rules)
        self.policy.agent = agent.name if agent.native and agent.name == "plan" else None
        self.policy.remembered = self._remembered.setdefault(agent.name, set())
        self.view.head = system_head(agent, child=self.options.child)

    def model_for(self, agent: Agent) -> ModelInfo:
        """The agent's own model, unless it names none or the user chose one."""
        if not agent.model or self.options.model_pinned:
            return self.chosen_model
        if self.options.resolve_model is not None:
            return self.options.resolve_model(agent.model)
        return resolve_model(agent.model, self.config.providers_dict())

    def _record_agent(self, session_id: str) -> None:
        assert self.agent is not None
        if self.store.get_session(session_id).agent != self.agent.name:
            info = self.store.update_session(session_id, agent=self.agent.name)
            self.bus.publish(events.SessionUpdated(session_id, info))

    @property
    def max_steps(self) -> int:
        return (self.agent.steps if self.agent else None) or self.options.max_steps

    def agent_host(self, agent: Agent) -> Any:
        """The agent's own MCP servers, started the first time the agent runs (None: it has none)."""
        return toolset.agent_host(self.options, agent)

    # --- settings ------------------------------------------------------------------------

    @property
    def compaction_cfg(self) -> Any:
        return self.config.compaction

    def usable(self) -> int:
        cfg = self.compaction_cfg
        return overflow.usable(self.model.limits, cfg.reserved, self.config.output_token_max)

    def overflows(self, tokens: Any) -> bool:
        cfg = self.compaction_cfg
        return overflow.is_overflow(
            tokens,
            self.model.limits,
            auto=cfg.auto,
            reserved=cfg.reserved,
            output_token_max=self.config.output_token_max,
        )

    def max_tokens(self) -> int | None:
        # Only when the limit is known: a guessed cap can break small local models.
        if not self.model.limits.output:
            return None
        return overflow.max_output_tokens(self.model.limits, self.config.output_token_max)

    def project_root(self) -> Path:
        return system.find_root(self.options.directory) or self.options.directory

    def skill_dirs(self) -> list[Path]:
        """Project skill folders, then global ones. An untrusted project's folder that itself links
        outside it is left out: tools may read inside skill folders without asking."""
        root = self.project_root()
        dirs = [
            root / sub for sub in SKILL_DIRS if self.options.project_trusted or not escapes(root / sub, root)
        ]
        if self.options.global_config_dir:
            dirs += [self.options.global_config_dir / "skill", self.options.global_config_dir / "skills"]
        return dirs

    def start_plugins(self) -> PluginContext:
        """Once, before the first turn: plugins get their context and add their tools."""
        if self.plugin_context is None:
            tools = self.options.tools if self.options.tools is not None else {}
            self.plugin_context, added = start_plugins(
                self.plugins,  # type: ignore[arg-type]
                directory=self.options.directory,
                project_root=self.project_root(),
                config=self.config,
                store=self.store,
                session=self.session_host,
                builtin=set(tools),
            )
            tools.update(added)
            self.options.tools = tools
        return self.plugin_context

    def context_figures(self, session_id: str) -> ContextFigures:
        """The session's window as last measured (stored, so a continued session has it from the start)."""
        limits = self.model.limits
        return ContextFigures(
            session_id=session_id,
            model=self.model.name,
            tokens=self.store.get_session(session_id).context_tokens,
            context_limit=limits.context,
            input_limit=limits.input,
            output_limit=limits.output,
            usable=self.usable(),
        )

    def ledger(self, session_id: str) -> Carryover:
        """The ledger now: the last compaction's carryover merged with the window since."""
        window = filter_compacted(self.store.stream(session_id))
        return carryover.current(window, directory=str(self.options.directory))

    # --- entry points ------------------------------------------------------------------------

    def prompt(
        self, session_id: str, text: str, abort: threading.Event | None = None, attached: Sequence[Any] = ()
    ) -> AssistantMessage | None:
        """``attached``: parts that follow the text in the user's message (files the user mentioned);
        their ids are given here. InputTooLarge, with nothing written, for a message that cannot fit."""
        check_input(self, session_id, text, attached)
        self.start_plugins()
        text = clean.text(text)  # as the store keeps it: the title and the plugins see what is stored
        # The lease is taken before the user message is written: an agent that is not running the
        # session's turn must not add a question the running one would pick up and answer too.
        with self.store.lease(session_id, on_wait=self.options.on_busy):
            return self._prompt(session_id, text, abort, attached)

    def _prompt(
        self, session_id: str, text: str, abort: threading.Event | None, attached: Sequence[Any]
    ) -> AssistantMessage | None:
        session = self.store.get_session(session_id)
        if session.messages == 0:
            self.bus.publish(events.SessionCreated(session_id, session))
        agent = self.agent.name  # type: ignore[union-attr]
        user = UserMessage(id=ids.ascending("msg"), session_id=session_id, model=self.model.name, agent=agent)
        part = TextPart(id=ids.ascending("prt"), session_id=session_id, message_id=user.id, text=text)
        out = self.plugins.trigger(
            "chat_message",
            input={"session_id": session_id, "model": self.model.name},  # type: ignore[union-attr]
            output={"message": user, "parts": [part]},
        )
        user = out["message"] if isinstance(out.get("message"), UserMessage) else user
        self.store.put_message(user)
        for part in out.get("parts") or []:
            self.store.put_part(part.model_copy(update={"session_id": session_id, "message_id": user.id}))
        store_attached(self.store, session_id, user.id, attached)
        self.bus.publish(events.MessageUpdated(session_id, user))
        if not session.title:
            session = self.store.update_session(
                session_id, title=title.provisional(text), model=self.model.name
            )
            self.bus.publish(events.SessionUpdated(session_id, session))
            self.title_thread = title.generate(self.store, session_id, self.small_model or self.model, text)
        elif session.model != self.model.name:
            session = self.store.update_session(session_id, model=self.model.name)
            self.bus.publish(events.SessionUpdated(session_id, session))
        self._record_agent(session_id)
        return self.run(session_id, abort)

    def compact(
        self, session_id: str, focus: str | None = None, abort: threading.Event | None = None
    ) -> bool:
        """A manual compaction (``agentcli compact``, ``/compact``): no continue message follows."""
        self.start_plugins()
        self.plugins.new_turn()  # type: ignore[union-attr]
        out = self.plugins.trigger(
            "command_execute_before",
            input={"command": "compact", "session_id": session_id},  # type: ignore[union-attr]
            output={"arguments": focus or ""},
        )
        focus = str(out.get("arguments") or "") or None
        before = self._newest_compaction(session_id)
        with self.store.lease(session_id, on_wait=self.options.on_busy):
            if self._newest_compaction(session_id) != before:
                # Another agent compacted this session while this one waited for it: one is enough.
                said = f"already compacted: another agent compacted session {session_id} just now"
                self.bus.publish(events.CompactionSkipped(session_id, said))
                return False
            if (
                self.compactor(abort or threading.Event()).create(
                    session_id, auto=False, overflow=False, focus=focus
                )
                is None
            ):
                return False
            self.run(session_id, abort)
            return True

    def _newest_compaction(self, session_id: str) -> str | None:
        """The id of the session's newest completed summary (its window starts there)."""
        window = filter_compacted(self.store.stream(session_id))
        return max((m.id for m in window if completes_compaction(m)), default=None)

    def compactor(self, abort: threading.Event) -> Compactor:
        return Compactor(
            store=self.store,
            bus=self.bus,
            plugins=self.plugins,  # type: ignore[arg-type]
            config=self.config,
            model=self.compaction_model or self.model,
            session_model=self.model,
            usable=self.usable(),
            abort=abort,
            view=self.view,
        )

    # --- the loop ----------------------------------------------------------------------------

    def run(self, session_id: str, abort: threading.Event | None = None) -> AssistantMessage | None:
        """Step until the model stops calling tools (DESIGN.md, "The path of one turn")."""
        turn = self._start_turn(session_id, abort or threading.Event())
        try:
            while not turn.abort.is_set():
                window = filter_compacted(self.store.stream(session_id))  # 1. the window
                now = latest(window)
                # The step's tools first (a turn's first step waits for MCP servers still starting).
                turn.runner.tools = self.step_tools(session_id, first=turn.steps == 0, abort=turn.abort)
                built = cache(partial(self.build_request, session_id, window, turn.runner))
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
            if self.config.compaction.prune:
                self.prune(session_id)  # 6. after the turn
            self.bus.publish(events.TurnFinished(session_id, turn.last))
        return turn.last

    def _start_turn(self, session_id: str, abort: threading.Event) -> _Turn:
        self.start_plugins()
        self.plugins.new_turn()  # type: ignore[union-attr]
        self.view.new_turn(session_id)  # instruction files as they are now, for the whole turn
        self.adopt_window(model_window.session_window(self.store, session_id, self.model))
        # No turn of this session runs now (this process starts one): close what a killed one left open.
        if closed := recovery.close_interrupted(self.store, session_id):
            self.bus.publish(events.InterruptedClosed(session_id, closed.messages, closed.tool_calls))
        compaction = CompactionStep(
            compactor=self.compactor(abort),
            guard=CompactionGuard(usable=self.usable()),
            session_id=session_id,
            is_overflow=self.overflows,
            too_big=self.preflight_overflows,
            queued=self.session_host.take,
        )
        return _Turn(abort, Processor(self.store, self.bus, abort), self._runner(abort), compaction)

    def _count_step(self, turn: _Turn) -> bool:
        """One more step of the turn; False (said once) past the turn's step limit."""
        turn.steps += 1
        if turn.steps <= self.max_steps:
            return True
        message = f"stopped after {self.max_steps} steps (max steps)"
        self.bus.publish(events.ErrorOccurred(turn.compaction.session_id, message, "max_steps"))
        return False

    def _new_step(self, session_id: str, now: Latest) -> AssistantMessage:
        parent = now.user.id  # type: ignore[union-attr]  (a turn that is not done has a user message)
        agent = self.agent.name  # type: ignore[union-attr]
        msg = AssistantMessage(
            id=ids.ascending("msg"),
            session_id=session_id,
            parent_id=parent,
            model=self.model.name,
            agent=agent,
            mode=agent,
        )
        self.store.put_message(msg)
        return msg

    def _step_request(self, turn: _Turn, built: RequestView) -> tuple[ChatRequest, StepPolicy]:
        """The step's request and policy; the turn's last step offers no tools and asks to wrap up."""
        session_id = turn.compaction.session_id
        request, policy = (
            self.request(session_id, built, turn.runner),
            self.step_policy(turn.runner, session_id),
        )
        if turn.steps == self.max_steps:
            self.bus.publish(events.StepLimitReached(session_id, turn.steps))
            request, policy = step_limit.last_step(request, policy, turn.runner, turn.steps)
        return request, policy

    def prune(self, session_id: str) -> int:
        return prune.prune(self.store, self.bus, session_id)

    # --- requests ----------------------------------------------------------------------------

    def _runner(self, abort: threading.Event) -> ToolRunner:
        cfg = self.config.tool_output
        return ToolRunner(
            store=self.store,
            bus=self.bus,
            plugins=self.plugins,  # type: ignore[arg-type]
            tools=self.offered_tools(),
            policy=self.policy,
            directory=self.options.directory,
            output_dir=self.options.data_dir / "tool-output",
            abort=abort,
            max_lines=cfg.max_lines,
            max_bytes=cfg.max_bytes,
            skill_dirs=tuple(self.skill_dirs()),
            room=partial(window_room, self.usable(), self.store),
        )

    def step_tools(self, session_id: str, *, first: bool, abort: threading.Event) -> dict[str, Any]:
        """The tools of the next step; a turn's first step waits for MCP servers still starting.
        A server that failed or died since is noted on the session (``sessions show``)."""
        own = self.agent_host(self.agent)  # type: ignore[arg-type]
        hosts = [h for h in (self.options.mcp, own) if h is not None]
        for host in hosts:
            host.prepare_step(first=first, abort=abort)
        note_on_session(self.store, session_id, hosts)
        return self.offered_tools()

    def offered_tools(self) -> dict[str, Any]:
        """What the next step offers: built-in, plugin and ready MCP tools (the agent's own servers'
        too), the task tool when there are subagents, less those the config and the agent turn off."""
        assert self.agent is not None
        return self.tools_for(self.agent, child=self.options.child)

    def tools_for(self, agent: Agent, *, child: bool, start: bool = True) -> dict[str, Any]:
        """The tools ``agent`` is offered (``child``: in a task's session); ``start``: start its own
        MCP servers if they are not yet (else only those already running count)."""
        return toolset.tools_for(self, agent, child=child, start=start)

    def system_prompt(self, session_id: str) -> list[str]:
        return self.view.system(session_id, self.model.name)

    def build_request(
        self, session_id: str, window: list[WithParts], runner: ToolRunner | None = None
    ) -> RequestView:
        """The next step's request, sized once (``agentcli.session.request.view``)."""
        return self.view.request(
            session_id,
            window,
            model=self.model.name,
            litellm_model=self.model.route.litellm_model,
            tools=runner.schemas() if runner is not None else None,
        )

    def request(self, session_id: str, built: RequestView, runner: ToolRunner) -> ChatRequest:
        agent = self.agent
        assert agent is not None
        params = self.plugins.trigger(  # type: ignore[union-attr]
            "chat_params",
            input={"session_id": session_id, "model": self.model.name, "agent": agent.name},
            output={"temperature": agent.temperature, "top_p": agent.top_p, "options": {}},
        )
        kwargs = self.model.request_kwargs(session_id)
        extra = {**kwargs.pop("extra", {}), **(params.get("options") or {})}
        if params.get("top_p") is not None:
            extra["top_p"] = params["top_p"]
        messages = (
            redact_messages(built.messages) if self.config.redact.model_requests else built.messages
        )  # opt-in
        return ChatRequest(
            messages=messages,
            tools=runner.schemas() or None,
            max_tokens=self.max_tokens(),
            temperature=params.get("temperature"),
            extra=extra,
            **kwargs,
        )

    def step_policy(self, runner: ToolRunner, session_id: str = "") -> StepPolicy:
        return StepPolicy(
            cost=partial(step_cost, self.model.route.litellm_model),
            is_overflow=self.overflows,
            auto_compact=self.config.compaction.auto,
            run_tools=runner,
            learn_window=partial(self.learn_window, session_id) if session_id else None,
            watch_truncation=self.model.window_source.startswith("Ollama"),
        )

    def learn_window(self, session_id: str, tokens: int, source: str) -> None:
        """The provider told the model's window: used from now on, kept (agentcli.session.window)."""
        self.adopt_window(model_window.learn(self, session_id, tokens, source))

    def adopt_window(self, model: ModelInfo | None) -> None:
        """Use ``model`` (this model with a window learned since) from now on."""
        if model is not None and model is not self.model:
            self.chosen_model = model if self.chosen_model is self.model else self.chosen_model
            self.model = model

    def preflight_overflows(self, built: RequestView) -> bool:
        return overflow.preflight(built.tokens, self.model.limits, auto=self.config.compaction.auto)
