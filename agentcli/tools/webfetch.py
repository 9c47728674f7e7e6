"""webfetch: fetch a URL and return it as markdown, text or raw HTML (http/https only)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from agentcli.store.records import Attachment
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import ask
from agentcli.tools.html_convert import html_to_markdown, html_to_text

if TYPE_CHECKING:
    import httpx

MAX_RESPONSE_BYTES = 5 * 1024 * 1024
DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 120
_TOO_LARGE = "Response too large (exceeds 5MB limit)"

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


def _read_capped(response: httpx.Response, ctx: ToolContext) -> bytes:
    length = response.headers.get("content-length")
    if length and length.isdigit() and int(length) > MAX_RESPONSE_BYTES:
        raise ToolError(_TOO_LARGE)
    body = bytearray()
    for chunk in response.iter_bytes():
        if ctx.abort.is_set():
            raise ToolError("The request was aborted")
        body.extend(chunk)
        if len(body) > MAX_RESPONSE_BYTES:
            raise ToolError(_TOO_LARGE)
    return bytes(body)


class WebFetchTool(Tool):
    name = "webfetch"
    description = DESCRIPTION
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The URL to fetch content from"},
            "format": {
                "type": "string",
                "enum": ["text", "markdown", "html"],
                "description": "The format to return the content in (text, markdown, or html). Defaults to markdown.",
            },
            "timeout": {"type": "number", "description": "Optional timeout in seconds (max 120)"},
        },
        "required": ["url"],
        "additionalProperties": False,
    }

    def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url: str = args["url"].strip()
        fmt: str = args.get("format") or "markdown"
        if not url.startswith(("http://", "https://")):
            raise ToolError("URL must start with http:// or https://")
        timeout = args.get("timeout")
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
        try:
            with (
                httpx.Client(follow_redirects=True, timeout=seconds, headers=headers) as client,
                client.stream("GET", url) as response,
            ):
                if response.status_code >= 400:
                    raise ToolError(f"Request failed with status code: {response.status_code}")
                body = _read_capped(response, ctx)
                content_type = response.headers.get("content-type", "")
                encoding = response.encoding or "utf-8"
        except httpx.TimeoutException:
            raise ToolError(f"Request timed out after {seconds:g} seconds: {url}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"Request failed: {type(exc).__name__}: {exc}") from None

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
        if fmt == "markdown" and is_html:
            text = html_to_markdown(text)
        elif fmt == "text" and is_html:
            text = html_to_text(text)
        return ToolResult(
            output=text, title=title, metadata={"contentType": content_type, "bytes": len(body)}
        )
