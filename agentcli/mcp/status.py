"""What `agentcli mcp list` and `/mcp` show about each server: plain data, no SDK types."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

Status = Literal["starting", "connected", "failed", "stopped", "disabled"]


class ToolInfo(BaseModel):
    name: str  # as the model sees it: <server>_<tool>
    tokens: int  # what its schema costs in every request that offers it


class ServerStatus(BaseModel):
    name: str
    kind: Literal["local", "remote"]
    status: Status
    error: str = ""
    transport: str = ""  # stdio, streamable-http or sse
    tools: list[ToolInfo] = []
    restarts: int = 0
    start_ms: int | None = None  # from being started to its tools listed

    @property
    def tokens(self) -> int:
        return sum(t.tokens for t in self.tools)
