"""What a session's turns share: the store, bus, plugins and config, the model and the agent that
answer, the tools, the permission policy and the request view. The loop (``loop``) runs turns on a
runtime; the helpers carved out of the loop (the toolset, subagents, the input check, the context
report) are handed the runtime, never the loop, so none of them imports it.

A subagent's task runs in a child runtime (``subagents.child_runtime``) with a loop of its own, made
by ``loop_for`` (the loop sets it: the class that runs turns, without this module naming it).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from agentcli.bus import Bus
from agentcli.config import Config
from agentcli.config.paths import truthy
from agentcli.llm.events import ChatRequest
from agentcli.plugins.api import ContextFigures, PluginContext
from agentcli.plugins.host import SessionHost
from agentcli.plugins.host import start as start_plugins
from agentcli.plugins.manager import Plugins
from agentcli.project_layout import SKILL_DIRS, escapes
from agentcli.session import events
from agentcli.session import window as model_window
from agentcli.session.agents.registry import (
    Agent,
    AgentRegistry,
    plans_folder,
    system_head,
    with_data_plans,
)
from agentcli.session.agents.registry import apply as apply_agent_rules
from agentcli.session.capabilities import media_accepted
from agentcli.session.compaction import carryover, overflow
from agentcli.session.compaction.background import Background
from agentcli.session.compaction.compactor import Compactor
from agentcli.session.model import ModelInfo, resolve_model
from agentcli.session.options import LoopOptions
from agentcli.session.permission import PermissionPolicy
from agentcli.session.request import system
from agentcli.session.request.figure import figure
from agentcli.session.request.history import filter_compacted
from agentcli.session.request.view import RequestView, View
from agentcli.session.toolrunner import ToolRunner, sandboxing, window_room
from agentcli.store.artifacts import Carryover
from agentcli.store.records import AssistantMessage, WithParts
from agentcli.store.store import Store
from agentcli.tools.base import ToolHost
from agentcli.tools.formatters import Formatters, oxfmt_flag


class Turns(Protocol):
    """What runs turns on a runtime (the session loop): a task's child session is prompted by one."""

    def prompt(
        self, session_id: str, text: str, abort: threading.Event | None = None, attached: Sequence[Any] = ()
    ) -> AssistantMessage | None: ...


class TaskCount:
    """How many tasks one user turn has started, all its nested sessions together (``tasks.max_per_turn``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = 0

    def take(self, limit: int) -> bool:
        """One more task, if the turn has not started ``limit`` already."""
        with self._lock:
            if self.started >= limit:
                return False
            self.started += 1
            return True

    def reset(self) -> None:
        with self._lock:
            self.started = 0


@dataclass
class SessionRuntime:
    store: Store
    config: Config
    model: ModelInfo  # the model that answers now (the agent's own, or the one chosen)
    options: LoopOptions
    bus: Bus = field(default_factory=Bus)
    plugins: Plugins | None = None  # None: none loaded (a Plugins on this bus)
    policy: PermissionPolicy = field(default_factory=PermissionPolicy)
    small_model: ModelInfo | None = None
    compaction_model: ModelInfo | None = None
    agents: AgentRegistry | None = None  # None: the config's (agentcli.session.agents.registry)
    agent: Agent | None = None  # the session's agent; None: the default one
    tools: dict[str, Any] | None = None  # name → Tool (plugins add theirs); None: the built-in set
    # The agents' own MCP servers, by agent, started the first time each runs; shared with tasks,
    # whose parallel runs of one agent start them once (the lock).
    agent_hosts: dict[str, ToolHost | None] = field(default_factory=dict)
    hosts_lock: Any = field(default_factory=threading.Lock)
    loop_for: Callable[[SessionRuntime], Turns] | None = None  # set by the loop that runs turns here
    # The next step's chat request for a window, as the loop sends it (set by the loop; the summary
    # request rides it: ``compaction.cached``).
    next_request: Callable[[str, list[WithParts]], ChatRequest] | None = None
    # Tasks started in the user's current turn, across every session it nests (shared with tasks).
    tasks_started: TaskCount = field(default_factory=lambda: TaskCount())
    plugin_context: PluginContext | None = field(default=None, init=False)
    session_host: SessionHost = field(init=False)
    view: View = field(init=False)
    # Summaries being written in the background (``compaction.background``); a child runtime (a
    # task's session) gets its own.
    background: Background = field(init=False)

    def __post_init__(self) -> None:
        self.session_host = SessionHost(self.context_figures, self.ledger)
        self.background = Background()
        if self.plugins is None:
            self.plugins = Plugins(self.bus)
        confine = None if self.options.project_trusted else self.project_root()
        self.view = View(
            self.options.directory, self.config, self.plugins, self.options.global_config_dir, confine
        )
        if self.tools is None:
            from agentcli.tools.registry import all_tools

            self.tools = {t.name: t for t in all_tools(self.skill_dirs(), skill_confine=confine)}
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
            self.record_agent(session_id)
        return agent

    def _apply_agent(self, agent: Agent) -> None:
        agent = with_data_plans(agent, self.options.data_dir)
        self.model = self.model_for(agent)
        self.agent = agent
        apply_agent_rules(self.policy, agent, self.user_rules)
        self.policy.remembered = self._remembered.setdefault(agent.name, set())
        plans = plans_folder(self.project_root(), self.options.data_dir)
        self.view.head = system_head(agent, child=self.options.child, plans=plans)

    def model_for(self, agent: Agent) -> ModelInfo:
        """The agent's own model, unless it names none or the user chose one."""
        if not agent.model or self.options.model_pinned:
            return self.chosen_model
        if self.options.resolve_model is not None:
            return self.options.resolve_model(agent.model)
        return resolve_model(agent.model, self.config.providers_dict())

    def record_agent(self, session_id: str) -> None:
        """The session records the agent that answers it now."""
        assert self.agent is not None
        if self.store.get_session(session_id).agent != self.agent.name:
            info = self.store.update_session(session_id, agent=self.agent.name)
            self.bus.publish(events.SessionUpdated(session_id, info))

    @property
    def max_steps(self) -> int:
        return (self.agent.steps if self.agent else None) or self.options.max_steps

    def agent_host(self, agent: Agent, *, start: bool = True) -> Any:
        """``agent``'s own MCP servers, started the first time it runs (``start`` False: only if they
        already are); None when it has none or nothing can start them."""
        if not start:
            return self.agent_hosts.get(agent.name)
        if not agent.mcp or self.options.agent_mcp is None:
            return None
        with self.hosts_lock:
            if agent.name not in self.agent_hosts:
                self.agent_hosts[agent.name] = self.options.agent_mcp(agent.name, agent.mcp)
            return self.agent_hosts[agent.name]

    # --- the window --------------------------------------------------------------------------

    def usable(self) -> int:
        cfg = self.config.compaction
        return overflow.usable(self.model.limits, cfg.reserved, self.config.output_token_max)

    def overflows(self, tokens: Any) -> bool:
        cfg = self.config.compaction
        return overflow.is_overflow(
            tokens,
            self.model.limits,
            auto=cfg.auto,
            reserved=cfg.reserved,
            output_token_max=self.config.output_token_max,
        )

    def preflight_overflows(self, built: RequestView) -> bool:
        return overflow.preflight(built.tokens, self.model.limits, auto=self.config.compaction.auto)

    def learn_window(self, session_id: str, tokens: int, source: str) -> None:
        """The provider told the model's window: used from now on, kept (agentcli.session.window)."""
        self.adopt_window(model_window.learn(self, session_id, tokens, source))

    def adopt_window(self, model: ModelInfo | None) -> None:
        """Use ``model`` (this model with a window learned since) from now on."""
        if model is not None and model is not self.model:
            self.chosen_model = model if self.chosen_model is self.model else self.chosen_model
            self.model = model

    def max_tokens(self) -> int | None:
        # Only when the limit is known: a guessed cap can break small local models.
        if not self.model.limits.output:
            return None
        return overflow.max_output_tokens(self.model.limits, self.config.output_token_max)

    def context_figures(self, session_id: str) -> ContextFigures:
        """The session's window as last measured (stored, so a continued session has it from the start)."""
        limits = self.model.limits
        return ContextFigures(
            session_id=session_id,
            model=self.model.name,
            tokens=figure(self.store, session_id).tokens,
            context_limit=limits.context,
            input_limit=limits.input,
            output_limit=limits.output,
            usable=self.usable(),
        )

    def ledger(self, session_id: str) -> Carryover:
        """The ledger now: the last compaction's carryover merged with the window since."""
        window = filter_compacted(self.store.stream(session_id))
        return carryover.current(window, directory=str(self.options.directory))

    # --- the project -------------------------------------------------------------------------

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
            tools = self.tools if self.tools is not None else {}
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
            self.tools = tools
        return self.plugin_context

    # --- what a step is built from -----------------------------------------------------------

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
            chat=self.next_request,
            clock=self.background.clock,
        )

    def runner(self, abort: threading.Event, tools: dict[str, Any]) -> ToolRunner:
        """A tool runner offering ``tools`` (``toolset.offered_tools``: the step's)."""
        cfg = self.config.tool_output
        return ToolRunner(
            store=self.store,
            bus=self.bus,
            plugins=self.plugins,  # type: ignore[arg-type]
            tools=tools,
            policy=self.policy,
            directory=self.options.directory,
            output_dir=self.options.data_dir / "tool-output",
            abort=abort,
            max_lines=cfg.max_lines,
            max_bytes=cfg.max_bytes,
            skill_dirs=tuple(self.skill_dirs()),
            room=partial(window_room, self.usable(), self.store),
            sandbox=sandboxing(self.config.sandbox),
            formatters=Formatters.from_config(
                self.config.formatter,
                trusted=self.options.folder_trusted,
                oxfmt=oxfmt_flag(os.environ, truthy),
            ),
        )

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
            tools=runner.schemas() if runner is not None else None,
            media=media_accepted(self.config, self.model.route),
        )
