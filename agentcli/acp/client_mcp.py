"""The editor's MCP servers (``mcpServers`` of ``session/new`` and ``session/load``) as agentcli's
`mcp` entries, to be joined to the config's for that session.

They are the user's own (the editor's settings, sent by the editor), so unlike a project's servers
they need no workspace trust. A server the editor names like a config server replaces it for the
session: the editor sent it for this very session, and a project's config must not be able to swap
out a server the user's editor runs. stdio servers become ``local`` entries, ``http`` and ``sse``
servers ``remote`` ones over that one transport; ACP's own transport (``acp``, unstable) is not
served, and a server left out is one line for the user.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer
from pydantic import BaseModel, ValidationError

from agentcli.config import McpLocal, McpRemoteOver

log = logging.getLogger(__name__)
TIMEOUT_ENV = "AGENTCLI_MCP_TIMEOUT"  # ms an editor's server gets to start (an editor has no such knob)
DEFAULT_TIMEOUT = 5000  # ms, OpenCode's default for a config entry


@dataclass
class ClientServers:
    entries: dict[str, BaseModel] = field(default_factory=dict)  # name → McpLocal | McpRemoteOver
    problems: list[str] = field(default_factory=list)  # one line per server left out


def start_timeout(environ: Mapping[str, str]) -> int:
    """The editor's servers' start deadline in ms: ``AGENTCLI_MCP_TIMEOUT``, else OpenCode's 5 s."""
    raw = environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        log.warning("%s=%r is not a positive number of ms; using %d", TIMEOUT_ENV, raw, DEFAULT_TIMEOUT)
        return DEFAULT_TIMEOUT
    return value


def _entry(server: Any, timeout: int) -> BaseModel:
    """One server as an entry; raises ValueError (or ValidationError) with why it cannot be."""
    if isinstance(server, McpServerStdio):
        return McpLocal.model_validate(
            {
                "type": "local",
                "command": [server.command, *server.args],
                "environment": {e.name: e.value for e in server.env},
                "timeout": timeout,
            }
        )
    if isinstance(server, HttpMcpServer | SseMcpServer):
        return McpRemoteOver.model_validate(
            {
                "type": "remote",
                "url": server.url,
                "headers": {h.name: h.value for h in server.headers},
                "timeout": timeout,
                "transport": "sse" if isinstance(server, SseMcpServer) else "streamable-http",
            }
        )
    if isinstance(server, AcpMcpServer):
        raise ValueError("the acp transport is not supported")
    raise ValueError(f"unknown kind of server ({type(server).__name__})")


def _why(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else first["msg"]
    return str(exc)


def convert(servers: Sequence[Any] | None, *, timeout: int) -> ClientServers:
    """The editor's servers as entries by name; a later server of the same name replaces an earlier one."""
    out = ClientServers()
    for server in servers or ():
        name = str(getattr(server, "name", "") or "").strip()
        if not name:
            out.problems.append("mcp: the editor sent a server without a name; it is not started")
            continue
        try:
            out.entries[name] = _entry(server, timeout)
        except (ValueError, ValidationError) as exc:
            out.problems.append(f"mcp server {name} (from the editor) is not started: {_why(exc)}")
    return out


def replaced(config_servers: Mapping[str, Any], client: ClientServers) -> list[str]:
    """The config's servers the editor's replace for this session (by name), for the log."""
    return sorted(name for name in client.entries if name in config_servers)
