"""What a plugin is handed: the context at load time and the shape of the tools it registers.

``PluginContext`` is OpenCode's PluginInput in Python: where the session runs, the config (a copy),
a read-only view of the store and a small session API. A plugin tool is a ``PluginTool``; the loop
offers it to the model like a built-in one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from agentcli.config import Config
from agentcli.plugins.store_view import StoreView
from agentcli.store.artifacts import Carryover
from agentcli.tools.base import PermissionDenied, Tool, ToolContext, ToolResult
from agentcli.tools.common import DENIED_MESSAGE, check_access, refuse_special
from agentcli.tools.params import JsonObject, checked_object


class ContextFigures(BaseModel):
    """The current context of a session: the window's size over the model's limits."""

    session_id: str
    model: str
    tokens: int  # the window's size now in the provider's tokens, cached ones included (the gauge's figure)
    context_limit: int  # the model's context window (0: unknown)
    input_limit: int  # its input limit, when the provider has one (0: none)
    output_limit: int
    usable: int  # what the window may reach before an automatic compaction

    @property
    def percent(self) -> int:
        return round(self.tokens * 100 / self.context_limit) if self.context_limit else 0


class SessionAPI(Protocol):
    def compact(self, session_id: str, focus: str | None = None) -> None:
        """Queue a compaction (the ``/compact`` path): it runs once the current tool call returns,
        before the next model request."""

    def context(self, session_id: str) -> ContextFigures: ...

    def ledger(self, session_id: str) -> Carryover:
        """The session's ledger (files, commands, unresolved errors, todos), the user's kept words
        and loaded skills, from the records: the last compaction's merged with the window since."""
        ...


@dataclass
class PluginContext:
    directory: Path
    project_root: Path
    config: Config  # a copy: changing it changes nothing
    store: StoreView
    session: SessionAPI


@dataclass
class ToolCallContext:
    """What a plugin tool's ``execute`` gets besides its arguments."""

    session_id: str
    message_id: str
    call_id: str
    directory: Path
    abort: threading.Event
    plugin: PluginContext | None
    tool: ToolContext | None = None  # the loop's side of this call: its permission questions

    def check_read(self, path: Path, what: str = "read") -> Path:
        """Before a plugin reads a file: the read tool's own permission checks (symlinks resolved;
        a credential store asks "read", a place outside the project "external_directory"; a FIFO or
        device is refused). Returns the real path to open; raises ``PermissionDenied`` (the model
        is told, as for a built-in tool) when the answer is no."""
        if self.tool is None:
            raise PermissionDenied(DENIED_MESSAGE)  # nobody to ask: nothing is read unchecked
        real = check_access(self.tool, path, what, reading=True)
        refuse_special(real)
        return real


@dataclass
class PluginTool:
    """``parameters``: a pydantic model (``execute`` gets an instance) or a JSON schema (a dict).
    ``execute`` returns the text the model sees (or a ``ToolResult``); raise ``ToolError`` to
    answer with an error."""

    name: str
    description: str
    parameters: type[BaseModel] | dict[str, Any]
    execute: Callable[[Any, ToolCallContext], str | ToolResult]
    metadata: dict[str, Any] = field(default_factory=dict)


class AdaptedTool(Tool[BaseModel]):
    """A ``PluginTool`` as the tool runner sees one: its pydantic model is the tool's ``params``; a
    JSON schema is sent as given and the arguments are checked against it."""

    def __init__(self, spec: PluginTool, context: PluginContext | None) -> None:
        self.spec, self.context = spec, context
        self.name, self.description = spec.name, spec.description
        given = spec.parameters
        if isinstance(given, type) and issubclass(given, BaseModel):
            self.params, self.given = given, None
        else:
            self.given = dict(given) or {"type": "object", "properties": {}}
            self.params = checked_object(self.given)

    @property
    def parameters(self) -> dict[str, Any]:
        return self.given if self.given is not None else super().parameters

    def execute(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        value: Any = args.root if isinstance(args, JsonObject) else args
        call = ToolCallContext(
            session_id=ctx.session_id,
            message_id=ctx.message_id,
            call_id=ctx.call_id,
            directory=ctx.directory,
            abort=ctx.abort,
            plugin=self.context,
            tool=ctx,
        )
        result = self.spec.execute(value, call)
        return result if isinstance(result, ToolResult) else ToolResult(output=str(result), title=self.name)
