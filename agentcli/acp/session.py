"""One ACP session: agentcli's own session (same id, same store) and the SessionLoop that serves it,
built the way the CLI builds one (``cli/setup.py``: config, trust, permissions, plugins,
compaction), with the client as the one who answers permission questions and, when it offers, as
the holder of the project's files.

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

from agentcli.acp.capabilities import accepts_images
from agentcli.acp.commands import Slash
from agentcli.acp.prompt import PromptInput
from agentcli.acp.updates import TurnUpdates
from agentcli.cli import custom_commands
from agentcli.config import global_config_dir
from agentcli.session import events
from agentcli.session.loop import SessionLoop
from agentcli.store.records import AssistantMessage, SessionInfo
from agentcli.store.store import Store
from agentcli.tools.base import PermissionAnswer, PermissionRequest
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

    def load_commands(self) -> None:
        trust = self.loaded.trust
        trusted = trust is None or trust.trusted
        self.custom = custom_commands.load(self.directory, global_config_dir(), trusted=trusted)

    # --- the loop ----------------------------------------------------------------------------

    def build(self, asker: Asker, publish: Callable[[Any], None]) -> SessionLoop:
        """The loop, as every command builds one; ``publish`` hears its events (worker thread)."""
        from agentcli.cli.setup import build_loop

        loop = build_loop(
            self.loaded,
            self.store,
            model=self.model,
            api_base=self.api_base,
            yes=False,
            asker=asker,
            directory=self.directory,
        )

        def listen(event: Any) -> None:
            if getattr(event, "session_id", self.id) == self.id:
                publish(event)
                if isinstance(event, events.StepLimitReached):
                    self.step_limit = True

        loop.bus.subscribe(listen)
        self.loop = loop
        return loop

    def stored(self) -> SessionInfo | None:
        from agentcli.store.store import NotFound

        try:
            return self.store.get_session(self.id)
        except NotFound:
            return None

    def ensure_stored(self) -> None:
        """A new ACP session becomes a stored one with its first message (no empty sessions)."""
        if self.stored() is None:
            assert self.loop is not None
            self.store.put_session(
                SessionInfo(id=self.id, directory=str(self.directory), model=self.loop.model.name)
            )

    def usage(self) -> UsageUpdate | None:
        """The context figures now: tokens in the window, the window's size, the session's cost."""
        info = self.stored()
        if self.loop is None or info is None:
            return None
        limits = self.loop.model.limits
        size = limits.context or limits.input
        if not size:
            return None
        return UsageUpdate(
            session_update="usage_update",
            used=info.context_tokens,
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
        self.step_limit = False
        self.updates.new_turn()
        return self.loop.prompt(self.id, given.text, abort, attached=given.parts)

    def slash(self, command: Slash, abort: threading.Event) -> str | None:
        """Run a slash command; the line to tell the user, or None when it ran as a turn (its events
        told everything). Raises CliError for a refusal."""
        from agentcli.cli.actions import apply_undo, context_renderable_for, undo_compaction

        assert self.loop is not None
        if self.stored() is None:
            return "nothing in this session yet"
        self.updates.new_turn()
        if command.name in ("undo", "redo"):
            return apply_undo(self.store, self.id, again=command.name == "redo")
        if command.name == "context":
            return self._draw(context_renderable_for(self.loop, self.id))
        if command.arguments == "undo":
            return undo_compaction(self.loop, self.id)
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
