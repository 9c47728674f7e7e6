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

from pydantic import BaseModel, ValidationError

from agentcli.config import Config
from agentcli.plugins.store_view import StoreView
from agentcli.store.artifacts import Carryover
from agentcli.tools.base import PermissionDenied, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import DENIED_MESSAGE, check_access, refuse_special


class ContextFigures(BaseModel):
    """The current context of a session: the window's size over the model's limits."""

    session_id: str
    model: str
    tokens: int  # the window's current size (the last request's tokens, cached ones included)
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


def _untitled(schema: Any) -> Any:
    """pydantic's schema without its generated ``title`` keys: tokens the model does not need."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) if k != "properties" else {n: _untitled(p) for n, p in v.items()}
            for k, v in schema.items()
            if k != "title"
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


class AdaptedTool(Tool):
    """A ``PluginTool`` as the tool runner sees one."""

    def __init__(self, spec: PluginTool, context: PluginContext | None) -> None:
        self.spec, self.context = spec, context
        self.name, self.description = spec.name, spec.description
        params = spec.parameters
        if isinstance(params, type) and issubclass(params, BaseModel):
            self.parameters = _untitled(params.model_json_schema())
        else:
            self.parameters = dict(params) or {"type": "object", "properties": {}}

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        params = self.spec.parameters
        value: Any = args
        if isinstance(params, type) and issubclass(params, BaseModel):
            try:
                value = params.model_validate(args)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'args'}: {e['msg']}" for e in exc.errors()
                )
                raise ToolError(f"Invalid arguments for {self.name}: {problems}") from None
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
