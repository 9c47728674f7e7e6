"""MCP in the chat: ``/mcp``, and the servers' notices (one failed or died) shown without breaking
the prompt — above it when it is on screen, else before the next one."""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from agentcli.ui.wrap import Wrapped

if TYPE_CHECKING:
    from agentcli.mcp.host import McpHost


class Notices:
    def __init__(self, console: Console) -> None:
        self.console = console
        self.app: Any = None  # the prompt's Application, while it is on screen
        self._pending: list[str] = []
        self._lock = threading.Lock()

    def add(self, line: str) -> None:
        """From any thread."""
        with self._lock:
            self._pending.append(line)
        app = self.app
        if app is None or not app.is_running or app.loop is None or app.context is None:
            return  # shown before the next prompt
        with contextlib.suppress(RuntimeError):  # the prompt's loop just ended: the next flush shows it
            app.loop.call_soon_threadsafe(app.context.run, self._above_prompt)

    def _above_prompt(self) -> None:
        from prompt_toolkit.application import run_in_terminal

        run_in_terminal(self.flush)

    def flush(self) -> None:
        with self._lock:
            lines, self._pending = self._pending, []
        for line in lines:
            self.console.print(Wrapped(Text(line, "yellow")), soft_wrap=True)


def show_mcp(
    console: Console, mcp: McpHost | None, loaded: Any, *, registry: Any, agent: str, loop: Any
) -> None:
    """``/mcp``: the same table as ``agentcli mcp list``, of the servers as they are now: the config's,
    and each agent's own (started the first time that agent runs); the Parent column counts the
    window of ``agent``, the primary agent the next message goes to."""
    from agentcli.app.setup import mcp_notes
    from agentcli.cli.mcp_rows import rows
    from agentcli.ui.mcp_table import mcp_table

    started = loop.runtime.agent_hosts if loop is not None else {}
    servers = rows(
        mcp,
        started,
        list(registry.agents.values()),
        parent=registry.get(agent),
        config_tools=loaded.config.tools,
    )
    console.print(mcp_table(servers, mcp_notes(loaded), parent=agent))
