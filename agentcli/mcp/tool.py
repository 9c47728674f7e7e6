"""An MCP server's tool as the loop sees it: named ``<server>_<tool>``, asked through the
permission policy under its own name (allowed unless configured, as in OpenCode), its output cut and
spilled like any other (``agentcli.tools.registry.run_tool``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from agentcli.mcp.results import to_tool_result
from agentcli.tools.base import PermissionDenied, PermissionRequest, Tool, ToolContext, ToolResult
from agentcli.tools.common import DENIED_MESSAGE
from agentcli.tools.params import JsonObject

# done, total (None: unknown), message: a server's `notifications/progress` for a call in flight
Progress = Callable[[float, float | None, str | None], None]


class Caller(Protocol):
    def call(
        self, server: str, tool: str, args: dict[str, Any], abort: Any, progress: Progress | None = None
    ) -> Any: ...


def input_schema(schema: dict[str, Any] | None) -> dict[str, Any]:
    """The server's input schema as a function's parameters: always an object (OpenCode does the same)."""
    schema = dict(schema or {})
    return {**schema, "type": "object", "properties": schema.get("properties") or {}}


class McpTool(Tool[JsonObject]):
    # The server checks its own arguments against its schema: they are passed through as sent.
    params = JsonObject

    def __init__(
        self, name: str, server: str, remote: str, description: str, schema: Any, caller: Caller
    ) -> None:
        self.name = name
        self.server = server  # the server's config name
        self.remote = remote  # the tool's own name on the server
        self.description = description or f"{remote} (MCP server {server})"
        self.input_schema = input_schema(schema)
        self.caller = caller

    @property
    def parameters(self) -> dict[str, Any]:
        return self.input_schema

    def execute(self, params: JsonObject, ctx: ToolContext) -> ToolResult:
        args = params.root
        shown = json.dumps(args, ensure_ascii=False)
        request = PermissionRequest(
            tool=self.name,
            title=f"{self.name} {shown if len(shown) <= 200 else shown[:199] + '…'}",
            patterns=["*"],
            metadata={"server": self.server, "tool": self.remote, "input": args},
            default="allow",
        )
        if ctx.ask(request) == "deny":
            raise PermissionDenied(DENIED_MESSAGE)
        result = self.caller.call(self.server, self.remote, args, ctx.abort, ctx.progress)
        return to_tool_result(result, title=self.remote, metadata={"server": self.server})
