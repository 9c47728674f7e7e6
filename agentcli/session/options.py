"""What a session is given besides its store, config and model: where it works, its limits, and the
hooks its caller supplies (MCP servers, model resolution, the busy notice). Fixed once given: what a
session changes as it runs (its agent, model, tools, started servers) is its runtime's
(``agentcli.session.runtime``); a task's child session gets a copy (``dataclasses.replace``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.session.model import ModelInfo

if TYPE_CHECKING:  # only named: the options are built before any tool is loaded
    from agentcli.tools.base import ToolHost

DEFAULT_MAX_STEPS = 200


@dataclass(frozen=True)
class LoopOptions:
    directory: Path
    data_dir: Path
    global_config_dir: Path | None = None
    max_steps: int = DEFAULT_MAX_STEPS
    on_busy: Callable[[str], None] | None = None  # told once when the session's turn runs elsewhere
    # The user trusts this project folder (`agentcli.trust`); until then its skills and instruction
    # files linking outside it are left out.
    project_trusted: bool = False
    # The user trusted this folder outright (``agentcli trust``): the project's own programs may run
    # as formatters (``tools.formatters``).
    folder_trusted: bool = False
    mcp: ToolHost | None = None  # the MCP servers (agentcli.mcp.host.McpHost); None: none configured
    # Starts an agent's own MCP servers (name, its `mcp` entries) → a host; None: they are not started.
    agent_mcp: Callable[[str, Mapping[str, Any]], ToolHost | None] | None = None
    # A model by name, with the caller's checks (the CLI's: routable, key present); None: resolve_model.
    resolve_model: Callable[[str], ModelInfo] | None = None
    model_pinned: bool = False  # the user chose the model (--model, /model): an agent's does not replace it
    child: bool = False  # the session of a task (a subagent's): its prompt says only the answer goes back
    depth: int = 0  # how many tasks deep this session runs (0: the user's own session)
