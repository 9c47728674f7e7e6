"""webfetch: fetch a URL and return it as markdown, text or raw HTML (http/https only)."""

from __future__ import annotations

import base64
import ipaddress
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from urllib.parse import urlsplit

from pydantic import Field

from agentcli.store.records import Attachment
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import ask
from agentcli.tools.params import ToolParams

if TYPE_CHECKING:
    import httpx

MAX_RESPONSE_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 120
_TOO_LARGE = "Response too large (exceeds 5MB limit)"
MAX_REDIRECTS = 10
T = TypeVar("T")

_ACCEPT = {
    "markdown": "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, text/html;q=0.7, */*;q=0.1",
    "text": "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
    "html": "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, text/markdown;q=0.7, */*;q=0.1",
}

DESCRIPTION = """Fetch content from a URL and return it as markdown (default), plain text or HTML.

Usage:
- url must be a full http:// or https:// URL.
- format: "markdown" or "text" convert HTML pages; "html" returns the page as it came.
- timeout is in seconds (default 30, at most 120).
- Responses over 5 MB are refused. Images come back as attachments.
- The tool only reads: it cannot log in, fill forms or run scripts.
- Large results may be cut; the full content is then saved to a file you can read or grep."""


def _read_capped(response: httpx.Response) -> bytes:
    length = response.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_RESPONSE_BYTES:
        raise ToolError(_TOO_LARGE)
    body = bytearray()
    for chunk in response.iter_bytes():
        body.extend(chunk)
        if len(body) > MAX_RESPONSE_BYTES:
            raise ToolError(_TOO_LARGE)
    return bytes(body)


@dataclass
class _Hop:
    status: int
    content_type: str = ""
    encoding: str = "utf-8"
    body: bytes = b""
    location: str | None = None  # the absolute URL a redirect points to


def _get(client: httpx.Client, url: str, private_ok: bool) -> _Hop:
    """One request, redirects not followed: the caller checks each new host before going on."""
    with client.stream("GET", url) as response:
        if not private_ok and not _proxied(url):  # through a proxy the peer is the proxy
            _check_peer(response)
        if response.is_redirect and response.headers.get("location"):
            return _Hop(response.status_code, location=str(response.url.join(response.headers["location"])))
        if response.status_code >= 400:
            return _Hop(response.status_code)
        body = _read_capped(response)
        return _Hop(
            response.status_code, response.headers.get("content-type", ""), response.encoding or "utf-8", body
        )


def _proxied(url: str) -> bool:
    from urllib.request import getproxies, proxy_bypass  # the environment's proxies, as httpx reads them

    parts = urlsplit(url)
    return parts.scheme in getproxies() and not proxy_bypass(parts.hostname or "")


def _check_peer(response: httpx.Response) -> None:
    """The address actually connected to: a name that resolved to a public address for the check
    and to a private one for the request (DNS rebinding) is refused before its body is read."""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if peer and _ip_reason(ipaddress.ip_address(str(peer[0]).split("%")[0])):
        raise ToolError(
            f"Refused: {response.url.host} connected to a private address ({peer[0]}) after it was checked"
        )


def _until_abort(fn: Callable[[], T], ctx: ToolContext) -> T:
    """Run blocking network I/O in a helper thread so an abort returns within a poll, whatever the
    server does; the abandoned thread ends at its own timeout."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed back to the caller
            box["error"] = exc

    worker = threading.Thread(target=target, name="agentcli-webfetch", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.05)
        if ctx.abort.is_set():
            raise ToolError("The request was aborted")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _check_host(ctx: ToolContext, url: str) -> bool:
    """Ask (permission private_network) before reaching a loopback, link-local, private or
    .internal host, judged by what its name resolves to now. True when such a host was allowed."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    reason = private_reason(host, urlsplit(url).port)
    if reason:
        ask(
            ctx, "private_network", f"webfetch {url} ({host} is {reason})", [host], {"url": url, "host": host}
        )
    return reason is not None


def private_reason(host: str, port: int | None = None) -> str | None:
    if not host:
        return None
    if host == "localhost" or host.endswith(".localhost"):
        return "a loopback address"
    if host.endswith(".internal"):
        return "an internal name"
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port or 80, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return None  # unresolvable: the request itself will fail
    for info in infos:
        reason = _ip_reason(ipaddress.ip_address(str(info[4][0]).split("%")[0]))
        if reason:
            return reason
    return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052: an IPv4 address behind a NAT64 gateway


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one reaches in the end (mapped, 6to4, Teredo, NAT64), if any."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _ip_reason(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why reaching ``ip`` needs the private-network question, or None for a public address.

    By construction, not by list: anything IANA does not call globally reachable (``is_global``:
    private, shared 100.64/10 where cloud metadata can live, benchmarking, documentation, reserved,
    …) is private, and an IPv6 address counts as the IPv4 address it embeds."""
    if isinstance(ip, ipaddress.IPv6Address) and (inner := _embedded_v4(ip)) is not None:
        return _ip_reason(inner)
    if ip.is_loopback:
        return "a loopback address"
    if ip.is_link_local:
        return "a link-local address (cloud metadata lives here)"
    if ip.is_multicast or not ip.is_global:
        return f"a private-range address ({ip})"
    return None


class WebFetchParams(ToolParams):
    url: str = Field(description="The URL to fetch content from")
    format: Literal["text", "markdown", "html"] | None = Field(
        None,
        description="The format to return the content in (text, markdown, or html). Defaults to markdown.",
    )
    timeout: float | None = Field(None, description="Optional timeout in seconds (max 120)")


class WebFetchTool(Tool[WebFetchParams]):
    name = "webfetch"
    description = DESCRIPTION
    params = WebFetchParams

    def execute(self, args: WebFetchParams, ctx: ToolContext) -> ToolResult:
        url = args.url.strip()
        fmt = args.format or "markdown"
        if not url.startswith(("http://", "https://")):
            raise ToolError("URL must start with http:// or https://")
        timeout = args.timeout
        if timeout is not None and timeout <= 0:
            raise ToolError(
                f"Invalid timeout value: {timeout}. Timeout must be a positive number of seconds."
            )
        seconds = min(float(timeout or DEFAULT_TIMEOUT_S), MAX_TIMEOUT_S)
        ask(ctx, "webfetch", url, [url], {"url": url, "format": fmt, "timeout": seconds})

        import httpx  # imported when used: building the tool list should stay cheap

        headers = {
            "User-Agent": "agentcli (+webfetch)",
            "Accept": _ACCEPT[fmt],
            "Accept-Language": "en-US,en;q=0.9",
        }
        current = url
        try:
            with httpx.Client(follow_redirects=False, timeout=seconds, headers=headers) as client:
                for _ in range(MAX_REDIRECTS + 1):
                    private_ok = _check_host(ctx, current)
                    hop = _until_abort(lambda url=current, ok=private_ok: _get(client, url, ok), ctx)  # type: ignore[misc]
                    if hop.location is None:
                        break
                    if not hop.location.startswith(("http://", "https://")):
                        raise ToolError(f"Redirect to a non-http URL refused: {hop.location}")
                    current = hop.location
                else:
                    raise ToolError(f"Too many redirects (more than {MAX_REDIRECTS})")
        except httpx.TimeoutException:
            raise ToolError(f"Request timed out after {seconds:g} seconds: {current}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Request failed: {type(exc).__name__}: {exc}") from None
        if hop.status >= 400:
            raise ToolError(f"Request failed with status code: {hop.status}")
        body, content_type, encoding = hop.body, hop.content_type, hop.encoding

        mime = content_type.split(";")[0].strip().lower()
        title = f"{url} ({content_type})" if content_type else url
        if mime.startswith("image/") and mime != "image/svg+xml":
            data = base64.b64encode(body).decode("ascii")
            return ToolResult(
                output="Image fetched successfully",
                title=title,
                attachments=[Attachment(mime=mime, url=f"data:{mime};base64,{data}")],
            )
        text = body.decode(encoding, errors="replace")
        is_html = "html" in mime
        if is_html and fmt in ("markdown", "text"):
            from agentcli.tools import html_convert  # the stdlib's HTML parser: loaded with the first page

            convert = html_convert.html_to_markdown if fmt == "markdown" else html_convert.html_to_text
            text = convert(text)
        return ToolResult(
            output=text, title=title, metadata={"contentType": content_type, "bytes": len(body)}
        )
