"""What `agentcli mcp list` and `/mcp` show about each server: plain data, no SDK types."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

# "idle": an agent's own server, not started until that agent runs (the chat's /mcp).
Status = Literal["starting", "connected", "failed", "stopped", "disabled", "idle"]


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
    agent: str | None = None  # the agent whose own server it is (None: the config's `mcp`)
    # What its schemas cost the parent's window (the primary agent's): 0 for a server given to a
    # subagent only, or whose tools the `tools` key turns off there.
    parent_tokens: int = 0

    @property
    def tokens(self) -> int:
        return sum(t.tokens for t in self.tools)
