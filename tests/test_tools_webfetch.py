from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from agentcli.tools.base import PermissionDenied, ToolError
from tests.test_tools_support import call, make_ctx

PAGE = (
    "<html><head><title>T</title><script>var x = 1;</script></head><body>"
    "<h1>Title</h1><p>Hello <a href='/docs'>docs</a> and <strong>bold</strong>.</p>"
    "<ul><li>one</li><li>two</li></ul><pre>code\n  indented</pre></body></html>"
)
ROUTES: dict[str, tuple[int, str, bytes]] = {
    "/page": (200, "text/html; charset=utf-8", PAGE.encode()),
    "/plain": (200, "text/plain", b"just text"),
    "/img": (200, "image/png", b"\x89PNG\r\n\x1a\n"),
    "/big": (200, "text/plain", b"x" * (5 * 1024 * 1024 + 1)),
    "/missing": (404, "text/plain", b"nope"),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/plain")
            self.end_headers()
            return
        status, ctype, body = ROUTES.get(self.path, (404, "text/plain", b""))
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if self.path != "/big":  # no length: the size cap must work while streaming
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_markdown_text_and_html(tmp_path, server):
    ctx, asker = make_ctx(tmp_path)
    md = call(ctx, "webfetch", {"url": f"{server}/page", "format": "markdown"})
    assert "# Title" in md.output
    assert "Hello [docs](/docs) and **bold**." in md.output
    assert "- one\n- two" in md.output
    assert "```\ncode\n  indented\n```" in md.output
    assert "var x" not in md.output
    req, local = asker.asked
    assert req.tool == "webfetch" and req.patterns == [f"{server}/page"]
    assert local.tool == "private_network" and local.patterns == ["127.0.0.1"]  # the test server is loopback

    text = call(ctx, "webfetch", {"url": f"{server}/page", "format": "text"})
    assert "Title" in text.output and "Hello docs and bold." in text.output
    assert "[" not in text.output and "var x" not in text.output
    html = call(ctx, "webfetch", {"url": f"{server}/page", "format": "html"})
    assert html.output == PAGE
    assert call(ctx, "webfetch", {"url": f"{server}/redirect"}).output == "just text"


def test_image_attachment(tmp_path, server):
    ctx, _ = make_ctx(tmp_path)
    res = call(ctx, "webfetch", {"url": f"{server}/img", "format": "markdown"})
    assert res.output == "Image fetched successfully"
    assert res.attachments[0].url.startswith("data:image/png;base64,")


def test_errors(tmp_path, server):
    ctx, asker = make_ctx(tmp_path)
    with pytest.raises(ToolError, match="URL must start with http:// or https://"):
        call(ctx, "webfetch", {"url": "file:///etc/passwd", "format": "text"})
    assert asker.asked == []
    with pytest.raises(ToolError, match="Request failed with status code: 404"):
        call(ctx, "webfetch", {"url": f"{server}/missing", "format": "text"})
    with pytest.raises(ToolError, match="exceeds 5MB limit"):
        call(ctx, "webfetch", {"url": f"{server}/big", "format": "text"})
    with pytest.raises(ToolError, match="Invalid arguments for webfetch: format must be one of"):
        call(ctx, "webfetch", {"url": f"{server}/plain", "format": "pdf"})
    with pytest.raises(ToolError, match="Request failed"):
        call(ctx, "webfetch", {"url": "http://127.0.0.1:1/", "format": "text"})


def test_denied(tmp_path, server):
    ctx, _ = make_ctx(tmp_path, answer="deny")
    with pytest.raises(PermissionDenied):
        call(ctx, "webfetch", {"url": f"{server}/plain", "format": "text"})
