"""OpenCode's two resource tools, offered while a connected server declares the resources capability:
``list_mcp_resources`` (every such server's resources and URI templates, or one server's) and
``read_mcp_resource`` (one resource by server and URI). Both are asked as ``read`` of
``mcp:<server>:<uri>`` (OpenCode's permission and pattern), allowed unless configured otherwise.

A text resource is the tool's output (cut like any other); a binary one that is an image or a PDF
becomes an attachment (whether the model gets it is the request's business, as with a tool's
image), a text-typed blob is decoded, and anything else is one line saying what was left out."""

from __future__ import annotations

import base64
import binascii
import json
import threading
from typing import Any, Protocol

from pydantic import Field

from agentcli.mcp.state import ServerState
from agentcli.store.records import Attachment
from agentcli.tools.base import PermissionDenied, PermissionRequest, Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import DENIED_MESSAGE
from agentcli.tools.params import ToolParams

LIST_TOOL = "list_mcp_resources"
READ_TOOL = "read_mcp_resource"
MAX_BLOB_BYTES = 10 * 1024 * 1024  # OpenCode's bound on a binary resource taken as an attachment
ATTACHABLE = {"application/pdf", "image/gif", "image/jpeg", "image/png", "image/webp"}  # OpenCode's
TEXT_LIKE = ("text/", "application/json", "application/xml", "application/javascript", "application/yaml")


class Requester(Protocol):
    def connected(self) -> list[ServerState]: ...

    def request(self, server: str, what: str, make: Any, abort: threading.Event | None) -> Any: ...


class ListParams(ToolParams):
    server: str | None = Field(
        None,
        description="Optional MCP server name. When omitted, lists resources from every connected server.",
    )


class ReadParams(ToolParams):
    server: str = Field(description="MCP server name exactly as returned by list_mcp_resources.")
    uri: str = Field(
        description="Resource URI to read. Use the exact URI string returned by list_mcp_resources "
        "(or one built from a listed URI template)."
    )


def _ask(ctx: ToolContext, tool: str, patterns: list[str], metadata: dict[str, Any], title: str) -> None:
    request = PermissionRequest(tool="read", title=title, patterns=patterns, metadata=metadata)
    if ctx.ask(request) == "deny":
        raise PermissionDenied(DENIED_MESSAGE)


def _servers(host: Requester) -> list[str]:
    return sorted(s.name for s in host.connected() if s.resources)


async def _all_pages(method: Any) -> list[Any]:
    from agentcli.mcp.server import all_pages  # the host's thread has imported the SDK already

    return await all_pages(
        method,
        lambda page: getattr(page, "resources", None) or getattr(page, "resourceTemplates", None) or [],
    )


def _templates(session: Any) -> Any:
    return _all_pages(session.list_resource_templates)


def _described(item: Any, server: str) -> dict[str, Any]:
    data = item.model_dump(mode="json", exclude_none=True, exclude={"meta", "annotations", "icons"})
    return {**data, "server": server}


class ListMcpResources(Tool[ListParams]):
    name = LIST_TOOL
    description = (
        "Lists resources provided by connected MCP servers. Resources provide context such as files, "
        "database schemas, or application-specific information. URI templates show resources that "
        "are read by filling in their {placeholders}."
    )
    params = ListParams

    def __init__(self, host: Requester) -> None:
        self.host = host

    def execute(self, args: ListParams, ctx: ToolContext) -> ToolResult:
        servers = _servers(self.host)
        if args.server and args.server not in servers:
            known = f" Available resource servers: {', '.join(servers)}" if servers else ""
            raise ToolError(f'MCP server "{args.server}" does not support resources.{known}')
        chosen = [args.server] if args.server else servers
        patterns = [f"mcp:{s}:*" for s in chosen]
        _ask(ctx, self.name, patterns, {"server": args.server} if args.server else {}, "list MCP resources")
        resources: list[dict[str, Any]] = []
        templates: list[dict[str, Any]] = []
        for server in chosen:
            listed = self.host.request(
                server, "resources/list", lambda s: _all_pages(s.list_resources), ctx.abort
            )
            resources += [_described(r, server) for r in listed]
            try:
                shaped = self.host.request(server, "resources/templates/list", _templates, ctx.abort)
            except ToolError:  # a server without templates may refuse the method: its resources stand
                shaped = []
            templates += [_described(t, server) for t in shaped]
        resources.sort(key=lambda r: (r["server"], r.get("name", ""), r.get("uri", "")))
        body: dict[str, Any] = {"resources": resources}
        if templates:
            body["resourceTemplates"] = templates
        return ToolResult(
            output=json.dumps(body, ensure_ascii=False, indent=2),
            title=f"MCP resources: {args.server}" if args.server else "MCP resources",
            metadata={"count": len(resources), "servers": chosen},
        )


class ReadMcpResource(Tool[ReadParams]):
    name = READ_TOOL
    description = (
        "Read a specific resource from an MCP server using the server name and resource URI. "
        "The URI is an MCP identifier and does not need to be a file URL."
    )
    params = ReadParams

    def __init__(self, host: Requester) -> None:
        self.host = host

    def execute(self, args: ReadParams, ctx: ToolContext) -> ToolResult:
        if args.server not in {s.name for s in self.host.connected()}:
            raise ToolError(f'MCP server "{args.server}" is not connected')
        if args.server not in _servers(self.host):
            raise ToolError(f'MCP server "{args.server}" does not support resources')
        _ask(
            ctx,
            self.name,
            [f"mcp:{args.server}:{args.uri}"],
            {"server": args.server, "uri": args.uri},
            f"read MCP resource {args.uri}",
        )
        result = read(self.host, args.server, args.uri, ctx.abort)
        text, files = contents(args.server, args.uri, result.contents)
        return ToolResult(
            output=text,
            title=f"MCP resource: {args.uri}",
            metadata={"server": args.server, "uri": args.uri, "contents": len(result.contents)},
            attachments=files,
        )


def read(host: Requester, server: str, uri: str, abort: threading.Event | None) -> Any:
    from pydantic import AnyUrl

    try:
        target = AnyUrl(uri)
    except ValueError:
        raise ToolError(f"not a URI: {uri!r}") from None
    return host.request(server, f"resources/read {uri}", lambda s: s.read_resource(target), abort)


def _size(text: str) -> str:
    n = len(text) * 3 // 4
    return f"{n} B" if n < 1024 else f"{-(-n // 1024)} KB" if n < 1024 * 1024 else f"{-(-n // 1048576)} MB"


def contents(server: str, uri: str, items: list[Any]) -> tuple[str, list[Attachment]]:
    """A resource's contents as the model's text (each with its URI and type) and attachments."""
    texts: list[str] = []
    files: list[Attachment] = []
    for item in items:
        where = str(getattr(item, "uri", None) or uri)
        mime = getattr(item, "mimeType", None) or "application/octet-stream"
        text = getattr(item, "text", None)
        blob = getattr(item, "blob", None)
        if text is None and blob is not None and mime.startswith(TEXT_LIKE):
            try:  # a text resource sent as bytes (server-everything's dynamic blobs are text/plain)
                text = base64.b64decode(blob, validate=False).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                text = None
        if text is not None:
            texts.append(f"Resource: {where}\nMIME: {mime}\n{text}")
        elif blob is not None and mime in ATTACHABLE and len(blob) * 3 // 4 <= MAX_BLOB_BYTES:
            texts.append(f"[Binary MCP resource attached: {where} ({mime})]")
            files.append(Attachment(mime=mime, filename=where, url=f"data:{mime};base64,{blob}"))
        elif blob is not None:
            why = "is not a supported attachment type" if mime not in ATTACHABLE else "exceeds 10 MB"
            texts.append(f"[Binary MCP resource omitted: {where} ({mime}, {_size(blob)}) {why}]")
        else:
            texts.append(f"[MCP resource content without text or blob: {where}]")
    return "\n\n".join(texts) or f"MCP resource {uri} from {server} returned no contents.", files


def resource_tools(host: Requester) -> list[Tool[Any]]:
    return [ListMcpResources(host), ReadMcpResource(host)]
