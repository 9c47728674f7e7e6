"""One ACP session: agentcli's own session (same id, same store) and the SessionLoop that serves it,
built the way the CLI builds one (``app/setup.py``: config, trust, permissions, plugins,
compaction, MCP servers), with the client as the one who answers permission questions and, when it
offers, as the holder of the project's files. Its MCP servers (the config's, joined by the editor's)
start with the loop, in the background, and stop with the session (``close``).

Everything here that blocks (building the loop, a turn, a slash command) runs in a worker thread;
``agent.py`` is the asyncio side.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.schema import Cost, SessionInfoUpdate, UsageUpdate

from agentcli.acp.commands import Slash
from agentcli.acp.notices import HeldNotices
from agentcli.acp.prompt import PromptInput
from agentcli.acp.updates import TurnUpdates
from agentcli.app import custom_commands
from agentcli.config import global_config_dir
from agentcli.session import events
from agentcli.session.agents.registry import AgentRegistry
from agentcli.session.capabilities import accepts_images
from agentcli.session.loop import SessionLoop
from agentcli.session.request.figure import figure
from agentcli.store.records import AssistantMessage, SessionInfo
from agentcli.store.store import Store
from agentcli.tools.base import PermissionAnswer, PermissionRequest, ToolHost
from agentcli.trusted_config import TrustedConfig

Asker = Callable[[PermissionRequest], PermissionAnswer]
CONTEXT_WIDTH = 100  # columns the /context table is drawn in


@dataclass
class AcpSession:
    id: str
    directory: Path
    loaded: TrustedConfig
    store: Store
    model: str | None = None  # `agentcli acp --model`, else the stored session's, else the config's
    api_base: str | None = None
    loop: SessionLoop | None = None
    updates: TurnUpdates = field(init=False)
    custom: dict[str, Any] = field(default_factory=dict)  # custom slash commands by name
    abort: threading.Event | None = None  # the running turn's; None while idle
    trust_asked: bool = False
    step_limit: bool = False  # the last turn ran into the step limit
    told_title: str = ""  # the title the client was last given
    told_usage: UsageUpdate | None = None  # the context figures the client was last given
    _usage_lock: threading.Lock = field(default_factory=threading.Lock)
    agent: str = ""  # the session's agent, the client's mode (``choose_agent``, ``switch_agent``)
    switching: threading.Lock = field(default_factory=threading.Lock)
    client_servers: dict[str, Any] = field(default_factory=dict)  # the editor's MCP entries, by name
    notices: HeldNotices = field(default_factory=HeldNotices)  # an MCP server's failure, for the client
    mcp: ToolHost | None = None  # the running MCP servers; None: none
    # Told when the commands change (an MCP server with prompts connected): the agent re-advertises
    # them, once the client knows the session (``advertised``).
    on_commands: Callable[[], None] | None = None
    advertised: bool = False

    def __post_init__(self) -> None:
        self.updates = TurnUpdates(self.directory, self.usage)
        self.load_commands()

    @property
    def busy(self) -> bool:
        return self.abort is not None

    @property
    def model_name(self) -> str | None:
        return self.model or self.loaded.config.model

    def images(self) -> bool:
        return accepts_images(self.loaded.config, self.model_name, self.api_base)

    def commands(self) -> dict[str, Any]:
        """The custom commands and the connected MCP servers' prompts (``server:prompt``)."""
        return custom_commands.with_mcp(self.custom, self.mcp)

    def _commands_changed(self) -> None:
        if self.advertised and self.on_commands is not None:
            self.on_commands()

    def load_commands(self) -> None:
        trust = self.loaded.trust
        trusted = trust is None or trust.trusted
        self.custom = custom_commands.load(
            self.directory, global_config_dir(), trusted=trusted, configured=self.loaded.config.command
        )

    # --- the loop ----------------------------------------------------------------------------

    def build(self, asker: Asker, publish: Callable[[Any], None]) -> SessionLoop:
        """The loop, as every command builds one; ``publish`` hears its events (worker thread)."""
        from agentcli.app.setup import build_loop, start_mcp

        # Started first, so they come up while the loop is built (as in the chat); the config's
        # servers are those the folder's trust allows, the editor's need none.
        self.mcp = start_mcp(
            self.loaded,
            self.directory,
            notify=self.notices.add,
            joined=self.client_servers,
            changed=self._commands_changed,
        )
        try:
            loop = build_loop(
                self.loaded,
                self.store,
                model=self.model,
                api_base=self.api_base,
                yes=False,
                asker=asker,
                directory=self.directory,
                mcp=self.mcp,
                agent=self.agent or None,
            )
        except BaseException:
            self.close()
            raise

        def listen(event: Any) -> None:
            if getattr(event, "session_id", self.id) == self.id:
                publish(event)
                if isinstance(event, events.StepLimitReached):
                    self.step_limit = True

        loop.runtime.bus.subscribe(listen)
        self.loop = loop
        return loop

    def close(self) -> None:
        """Stop the session's MCP servers (blocks a few seconds at most)."""
        mcp, self.mcp = self.mcp, None
        if mcp is not None:
            mcp.close()

    # --- the agent (the client's mode) ------------------------------------------------------

    def registry(self) -> AgentRegistry:
        if self.loop is not None and self.loop.runtime.agents is not None:
            return self.loop.runtime.agents
        return AgentRegistry.from_config(self.loaded.config)

    def choose_agent(self, requested: str | None, stored: str | None) -> None:
        """The agent the session starts with: its stored one while the config still has it as a
        primary agent, else ``agentcli acp --agent``, else the config's default. Raises AgentError."""
        registry = self.registry()
        found = registry.get(stored) if stored else None
        if found is not None and found.primary:
            self.agent = found.name
        elif requested:
            self.agent = registry.require_primary(requested, what="--agent").name
        else:
            self.agent = registry.default().name

    def switch_agent(self, name: str) -> None:
        """``name`` (a checked primary agent) answers from now on: at once when no turn runs, else
        from the next turn (a running turn keeps the rules it started with, as in the chat)."""
        self.agent = name
        if not self.busy:
            self.apply_agent()

    def apply_agent(self) -> None:
        """The loop takes the session's agent and the stored session records it (as the chat's Tab
        is recorded). Raises when the agent cannot be used (its model has no key): the loop's stays."""
        with self.switching:  # the latest choice wins, whichever thread applies it
            info = self.stored()
            if (
                self.loop is not None
                and self.loop.runtime.agent is not None
                and self.loop.runtime.agent.name != self.agent
            ):
                try:
                    self.loop.runtime.switch_agent(self.agent, self.id if info is not None else None)
                except Exception:
                    self.agent = self.loop.runtime.agent.name
                    raise
            elif info is not None and info.agent != self.agent:
                self.store.update_session(self.id, agent=self.agent)

    def stored(self) -> SessionInfo | None:
        from agentcli.store.store import NotFound

        try:
            return self.store.get_session(self.id)
        except NotFound:
            return None

    def ensure_stored(self) -> None:
        """A new ACP session is stored when it is opened, as OpenCode's, so a client can load it
        before its first prompt (Toad resumes the session it opened)."""
        if self.stored() is None:
            model = self.loop.runtime.model.name if self.loop is not None else self.model_name
            self.store.put_session(
                SessionInfo(
                    id=self.id,
                    directory=str(self.directory),
                    model=model,
                    agent=self.agent or None,
                )
            )

    def usage(self) -> UsageUpdate | None:
        """The context figures when they changed since the client was last told (None: unchanged)."""
        now = self._usage_now()
        with self._usage_lock:
            if now is None or now == self.told_usage:
                return None
            self.told_usage = now
            return now

    def _usage_now(self) -> UsageUpdate | None:
        """The context figures now: tokens in the window, the window's size, the session's cost."""
        info = self.stored()
        if self.loop is None or info is None:
            return None
        limits = self.loop.runtime.model.limits
        size = limits.context or limits.input
        if not size:
            return None
        return UsageUpdate(
            session_update="usage_update",
            used=figure(self.loop.runtime.store, info.id).tokens,
            size=size,
            cost=Cost(amount=info.cost, currency="USD"),
        )

    def title_update(self) -> SessionInfoUpdate | None:
        """The session's title when the client has not been given it yet (set with the first message,
        then by the title model in the background)."""
        info = self.stored()
        if info is None or not info.title or info.title == self.told_title:
            return None
        self.told_title = info.title
        return SessionInfoUpdate(session_update="session_info_update", title=info.title)

    # --- turns (worker thread) ----------------------------------------------------------------

    def prompt(self, given: PromptInput, abort: threading.Event) -> AssistantMessage | None:
        assert self.loop is not None
        self.ensure_stored()
        self.apply_agent()
        self.step_limit = False
        self.updates.new_turn()
        return self.loop.prompt(self.id, given.text, abort, attached=given.parts)

    def slash(self, command: Slash, abort: threading.Event) -> str | None:
        """Run a slash command; the line to tell the user, or None when it ran as a turn (its events
        told everything). Raises CliError for a refusal."""
        from agentcli.app.actions import apply_undo, context_renderable_for, undo_compaction

        assert self.loop is not None
        if self.stored() is None:
            return "nothing in this session yet"
        self.apply_agent()
        self.updates.new_turn()
        if command.name in ("undo", "redo"):
            return apply_undo(self.store, self.id, again=command.name == "redo")
        if command.name == "context":
            return self._draw(context_renderable_for(self.loop.runtime, self.id))
        if command.arguments == "undo":
            return undo_compaction(self.loop.runtime, self.id)
        if not self.loop.compact(self.id, focus=command.arguments or None, abort=abort):
            return "nothing was compacted"
        return None

    @staticmethod
    def _draw(renderable: Any) -> str:
        """A rich renderable as plain text in a code block (a client shows markdown)."""
        from rich.console import Console

        from agentcli.acp.tool_calls import fenced

        out = io.StringIO()
        Console(file=out, width=CONTEXT_WIDTH, color_system=None, highlight=False).print(renderable)
        return fenced(out.getvalue())


def refusal(exc: BaseException) -> str:
    """One line for a failure the user can act on (CliError, the config's, the store's, …)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
