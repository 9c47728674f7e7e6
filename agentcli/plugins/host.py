"""The loop's side of the plugin API: starting plugins with their context, the session API they
call, and the system prompt as the transform leaves it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agentcli.config import Config
from agentcli.plugins.api import AdaptedTool, ContextFigures, PluginContext, PluginTool
from agentcli.plugins.manager import Plugins
from agentcli.plugins.store_view import StoreView
from agentcli.store.artifacts import Carryover
from agentcli.store.store import Store
from agentcli.tools.base import Tool


@dataclass
class SessionHost:
    """The session API (``PluginContext.session``): compactions asked for by plugins wait here until
    the loop picks them up, right after the tool call that asked returns."""

    figures: Callable[[str], ContextFigures]
    carried: Callable[[str], Carryover] = lambda _sid: Carryover()
    pending: list[tuple[str, str | None]] = field(default_factory=list)

    def compact(self, session_id: str, focus: str | None = None) -> None:
        if (session_id, focus) not in self.pending:
            self.pending.append((session_id, focus))

    def context(self, session_id: str) -> ContextFigures:
        return self.figures(session_id)

    def ledger(self, session_id: str) -> Carryover:
        return self.carried(session_id)

    def take(self) -> list[tuple[str, str | None]]:
        queued, self.pending = self.pending, []
        return queued


def start(
    plugins: Plugins,
    *,
    directory: Path,
    project_root: Path,
    config: Config,
    store: Store,
    session: SessionHost,
    builtin: set[str],
) -> tuple[PluginContext, dict[str, Tool]]:
    """Hand every plugin its context (``setup``), the config (``config``), and collect its tools.
    A plugin tool may not replace a built-in one (it is reported and left out)."""
    context = PluginContext(
        directory=directory,
        project_root=project_root,
        config=config.model_copy(deep=True),
        store=StoreView(store),
        session=session,
    )
    plugins.trigger("setup", context=context)
    plugins.trigger("config", input={"config": config.model_copy(deep=True)}, output={})
    offered = plugins.trigger("tool", input={"directory": directory}, output={"tools": {}})
    tools: dict[str, Tool] = {}
    for key, spec in (offered.get("tools") or {}).items():
        if not isinstance(spec, PluginTool):
            plugins.report(f"agentcli: plugin tool '{key}' is not a PluginTool; skipped")
        elif spec.name in builtin:
            plugins.report(f"agentcli: plugin tool '{spec.name}' has the name of a built-in tool; skipped")
        else:
            tools[spec.name] = AdaptedTool(spec, context)
    return context, tools


def transform_system(
    plugins: Plugins, blocks: list[str], *, session_id: str, model: str, purpose: str = "chat"
) -> list[str]:
    """Run ``chat_system_transform``; then, when the first block (the agent prompt) is unchanged,
    join the rest into one block: at most two system messages, the first cacheable (OpenCode)."""
    head = blocks[0] if blocks else None
    out = plugins.trigger(
        "chat_system_transform",
        input={"session_id": session_id, "model": model, "purpose": purpose},
        output={"system": list(blocks)},
    )
    system = [b for b in out.get("system") or [] if isinstance(b, str)]
    if len(system) > 2 and system[0] == head:
        return [system[0], "\n".join(system[1:])]
    return system
