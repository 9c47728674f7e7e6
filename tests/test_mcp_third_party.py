"""Real third-party MCP servers, configured as their READMEs say, through `agentcli run`: PyPI's
mcp-server-time, mcp-server-git and mcp-server-fetch, npm's @modelcontextprotocol/server-everything.
`.ci/run` installs them (a venv of their own in .ci/cache/mcp-servers, an npm install in .ci/cache/npm);
AGENTCLI_TEST_MCP_SERVERS / AGENTCLI_TEST_NPM_DIR point elsewhere. A test skips, with its reason, only
when its server is not installed."""

from __future__ import annotations

import http.server
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_mcp import offered, tool_parts
from tests.workspace import Workspace

CACHE = Path(__file__).resolve().parent.parent / ".ci" / "cache"
START = 60_000  # ms: the listing's bound once started; a loaded machine starts Python slowly


def python_server(name: str) -> str:
    folder = Path(os.environ.get("AGENTCLI_TEST_MCP_SERVERS", CACHE / "mcp-servers")) / "bin"
    found = folder / name if (folder / name).exists() else shutil.which(name)
    if not found:
        pytest.skip(f"{name} is not installed (.ci/run installs it from PyPI into {folder.parent})")
    return str(found)


def test_mcp_server_time_answers_through_run(workspace: Workspace, fake_llm: FakeLLM) -> None:
    command = [python_server("mcp-server-time"), "--local-timezone", "UTC"]
    workspace.write_config({"mcp": {"time": {"type": "local", "command": command, "timeout": START}}})
    call = ToolCall(
        "time_convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    )
    fake_llm.push(Reply(tool_calls=[call]), Reply(text="It is 21:00 in Tokyo."))
    proc = workspace.run("run", "--yes", "noon UTC in Tokyo?")
    assert proc.returncode == 0, proc.stderr
    assert {"time_get_current_time", "time_convert_time"} <= set(offered(fake_llm.chat_requests()[0].body))
    [part] = tool_parts(workspace)
    assert part.state.status == "completed", part.state.error
    assert "21:00" in part.state.output and "Asia/Tokyo" in part.state.output


def test_mcp_server_git_reads_the_project_repository(workspace: Workspace, fake_llm: FakeLLM) -> None:
    command = [python_server("mcp-server-git"), "--repository", str(workspace.project)]
    shutil.rmtree(workspace.project / ".git")
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(workspace.project)], check=True)
    (workspace.project / "new.txt").write_text("hello\n")
    workspace.write_config({"mcp": {"git": {"type": "local", "command": command, "timeout": START}}})
    call = ToolCall("git_git_status", {"repo_path": str(workspace.project)})
    fake_llm.push(Reply(tool_calls=[call]), Reply(text="one untracked file"))
    proc = workspace.run("run", "--yes", "status?")
    assert proc.returncode == 0, proc.stderr
    [part] = tool_parts(workspace)
    assert part.state.status == "completed", part.state.error
    assert "trunk" in part.state.output and "new.txt" in part.state.output


def test_mcp_server_fetch_reads_a_local_page(workspace: Workspace, fake_llm: FakeLLM) -> None:
    """mcp-server-fetch as its README configures it, fetching a page from a server on 127.0.0.1 (no
    internet): the model gets the page as markdown."""
    page = (
        b"<html><head><title>Notes</title></head><body><h1>Release notes</h1><p>Version 7 adds a "
        b"<b>compact</b> mode.</p></body></html>"
    )

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            found = self.path == "/notes.html"
            self.send_response(200 if found else 404)
            self.send_header("Content-Type", "text/html" if found else "text/plain")
            self.end_headers()
            self.wfile.write(page if found else b"no")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/notes.html"
        # Its own flag for a page on this machine (it refuses loopback addresses by default).
        command = [python_server("mcp-server-fetch"), "--allow-private-ips"]
        workspace.write_config({"mcp": {"fetch": {"type": "local", "command": command, "timeout": START}}})
        fake_llm.push(Reply(tool_calls=[ToolCall("fetch_fetch", {"url": url})]), Reply(text="Version 7."))
        proc = workspace.run("run", "--yes", "what is new?")
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    [part] = tool_parts(workspace)
    assert part.state.status == "completed", part.state.error
    assert "Release notes" in part.state.output and "**compact**" in part.state.output


def everything() -> dict[str, object]:
    """npm's server-everything as a local entry (its README's `npx … stdio`, from the local install)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the npm server cannot run")
    folder = Path(os.environ.get("AGENTCLI_TEST_NPM_DIR", CACHE / "npm"))
    script = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if not script.exists():
        pytest.skip(
            f"@modelcontextprotocol/server-everything is not installed (.ci/run: npm install in {folder})"
        )
    return {"type": "local", "command": [node, str(script), "stdio"], "timeout": START}


def test_server_everything_from_npm(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"everything": everything()}})
    fake_llm.push(Reply(tool_calls=[ToolCall("everything_echo", {"message": "hi there"})]), Reply(text="ok"))
    proc = workspace.run("run", "--yes", "echo")
    assert proc.returncode == 0, proc.stderr
    [part] = tool_parts(workspace)
    assert part.state.status == "completed", part.state.error
    assert "hi there" in part.state.output
