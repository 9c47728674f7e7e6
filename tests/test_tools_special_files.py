"""Tools never block on a FIFO, socket or device, and stop when the call is aborted."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agentcli.store.records import AssistantMessage, ToolPart
from agentcli.tools.base import ToolError
from agentcli.tools.grep import GrepTool
from agentcli.tools.registry import run_tool
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_tools_support import call, make_ctx
from tests.workspace import Workspace


def test_a_fifo_read_by_the_model_returns_at_once(workspace: Workspace, fake_llm: FakeLLM) -> None:
    os.mkfifo(workspace.project / "pipe")
    (workspace.project / "notes.txt").write_text("needle here\n")
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("read", {"filePath": "pipe"}),
                ToolCall("grep", {"pattern": "needle"}),  # the walk passes the FIFO
                ToolCall("grep", {"pattern": "needle", "path": "pipe"}),
                ToolCall("glob", {"pattern": "*"}),
            ]
        ),
        Reply(text="done"),
    )
    started = time.monotonic()
    proc = workspace.run("run", "read the pipe", timeout=90)  # before the fix this hung forever
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 60
    store = workspace.store()
    [session] = store.list_sessions()
    parts = [
        p
        for m in store.messages(session.id)
        if isinstance(m.info, AssistantMessage)
        for p in m.parts
        if isinstance(p, ToolPart)
    ]
    assert [p.state.status for p in parts] == ["error", "completed", "error", "completed"]
    assert "FIFO" in (parts[0].state.error or "") and "FIFO" in (parts[2].state.error or "")
    assert "needle here" in parts[1].state.output
    assert "pipe" in parts[3].state.output  # glob only names it


def test_sockets_and_devices_are_refused(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    sock_path = ctx.directory / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(sock_path))
        with pytest.raises(ToolError, match="a socket"):
            call(ctx, "read", {"filePath": str(sock_path)})
    ctx.project = Path("/")  # /dev is inside this "project": only the special-file check applies
    with pytest.raises(ToolError, match="a character device"):
        call(ctx, "read", {"filePath": "/dev/zero"})


def test_read_and_grep_of_a_large_file_stop_on_abort(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    big = ctx.directory / "big.log"
    big.write_text("line of a large log file\n" * 400_000)
    ctx.abort.set()
    with pytest.raises(ToolError, match="aborted"):
        call(ctx, "read", {"filePath": "big.log"})
    with pytest.raises(ToolError, match="aborted"):
        run_tool(GrepTool(use_ripgrep=False), {"pattern": "nothing-matches"}, ctx)
    with pytest.raises(ToolError, match="aborted"):
        call(ctx, "glob", {"pattern": "*.log"})


@pytest.fixture
def hanging_server() -> Iterator[str]:
    release = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            release.wait(60)  # never answers while the test runs

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/slow"
    release.set()
    httpd.shutdown()
    httpd.server_close()


def test_webfetch_returns_soon_after_abort_while_the_server_hangs(
    tmp_path: Path, hanging_server: str
) -> None:
    ctx, _ = make_ctx(tmp_path)
    threading.Timer(0.3, ctx.abort.set).start()
    started = time.monotonic()
    with pytest.raises(ToolError, match="aborted"):
        call(ctx, "webfetch", {"url": hanging_server, "timeout": 60})
    assert time.monotonic() - started < 10  # the server would hold it for 60 s
