"""``@server:uri`` in a chat message attaches that MCP resource, as OpenCode's prompt does with a
resource picked from its ``@`` menu: read from the server now (the user's own action: not asked),
its text in the message ("Reading MCP resource: …", then the contents), an image or PDF as an
attachment. A word whose part before ``:`` names no configured server stays a word."""

from __future__ import annotations

from typing import Any

from agentcli.app.attach import MENTION, AttachRefused
from agentcli.store.records import FilePart, FileSource, TextPart
from agentcli.tools.base import ToolError


def mcp_mentions(text: str, host: Any) -> list[tuple[str, str]]:
    """(server, uri) for each ``@server:uri`` naming a configured server, in order, once each."""
    states = getattr(host, "states", None) or {}
    out: list[tuple[str, str]] = []
    for match in MENTION.finditer(text):
        server, colon, uri = match.group(1).partition(":")
        if colon and uri and server in states and (server, uri) not in out:
            out.append((server, uri))
    return out


def mcp_attachments(mentions: list[tuple[str, str]], host: Any) -> list[Any]:
    """The parts the mentioned resources add; AttachRefused (one line) for the first that cannot go.
    A server still starting is waited for, to its deadline, as a turn's first step waits."""
    from agentcli.mcp.resources import contents, read

    if not mentions:
        return []
    host.prepare_step(True)
    parts: list[Any] = []
    for server, uri in mentions:
        try:
            result = read(host, server, uri, None)
        except ToolError as exc:
            raise AttachRefused(f"cannot attach {server}:{uri}: {exc}") from None
        text, files = contents(server, uri, result.contents)
        parts.append(
            TextPart(id="", session_id="", message_id="", synthetic=True, text=_told(server, uri, text))
        )
        parts += [
            FilePart(
                id="",
                session_id="",
                message_id="",
                mime=f.mime,
                filename=f.filename,
                url=f.url,
                source=FileSource(type="resource", path=f"{server}:{uri}"),
            )
            for f in files
        ]
    return parts


def _told(server: str, uri: str, text: str) -> str:
    return f"Reading MCP resource: {uri} (from {server}, attached by the user)\n{text}"
