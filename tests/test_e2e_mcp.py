"""MCP servers end to end: real servers written with the SDK's FastMCP (tests/mcp_server.py), started
over stdio by agentcli or over HTTP on 127.0.0.1 by the test, and `agentcli run` against the scripted
model, which calls their tools."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.store.records import ToolPart
from tests.fakellm import FakeLLM, Reply, ToolCall, unused_port
from tests.workspace import Workspace, assert_one_line_error

SERVER = Path(__file__).with_name("mcp_server.py")
START = 60_000  # ms: generous, a loaded CI machine starts Python slowly (the default is 5000)


def local(*args: str, **extra: object) -> dict[str, object]:
    return {"type": "local", "command": [sys.executable, str(SERVER), *args], "timeout": START, **extra}


def tool_parts(ws: Workspace) -> list[ToolPart]:
    store = ws.store()
    [session] = store.list_sessions()
    return [p for m in store.messages(session.id) for p in m.parts if isinstance(p, ToolPart)]


def offered(body: dict) -> dict[str, dict]:
    return {t["function"]["name"]: t["function"] for t in body.get("tools") or []}


def tool_results(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _wait_for_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the MCP test server exited"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the MCP test server did not listen")


@pytest.fixture
def http_servers() -> Iterator[dict[str, str]]:
    """One server speaking streamable HTTP and one speaking only SSE, on 127.0.0.1."""
    urls: dict[str, str] = {}
    procs = []
    for transport, path in (("streamable-http", "/mcp"), ("sse", "/sse")):
        port = unused_port()
        proc = subprocess.Popen(
            [sys.executable, str(SERVER), "--transport", transport, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        procs.append(proc)
        urls[transport] = f"http://127.0.0.1:{port}{path}"
    try:
        for proc, url in zip(procs, urls.values(), strict=True):
            _wait_for_port(int(url.rsplit(":", 1)[1].split("/")[0]), proc)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)


def test_a_local_servers_tools_are_offered_called_and_their_results_stored(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"mcp": {"notes": local(environment={"NOTE": "from the entry"})}}, images=True)
    fake_llm.push(
        Reply(tool_calls=[ToolCall("notes_echo", {"text": "hello over stdio"})]),
        Reply(tool_calls=[ToolCall("notes_env", {"name": "NOTE"})]),
        Reply(tool_calls=[ToolCall("notes_picture", {}), ToolCall("notes_document", {})]),
        Reply(text="done"),
    )
    proc = workspace.run("run", "use the notes server")
    assert proc.returncode == 0, proc.stderr
    first, second, third, last = fake_llm.chat_requests()[-4:]
    tools = offered(first.body)
    assert {"notes_echo", "notes_add", "notes_picture", "read", "bash"} <= set(tools)
    assert tools["notes_add"]["parameters"]["properties"].keys() == {"a", "b"}
    assert tools["notes_echo"]["description"] == "Return the text unchanged."
    assert tool_results(second.body) == ["hello over stdio"]
    assert tool_results(third.body)[-1] == f"from the entry in {workspace.project}"
    assert "notes from a resource" in tool_results(last.body)
    # The image reaches the model after the tool results, as a read image does.
    media = [m for m in last.body["messages"] if m["role"] == "user" and isinstance(m["content"], list)]
    assert any(c.get("type") == "image_url" for m in media for c in m["content"])

    parts = {p.tool: p for p in tool_parts(workspace)}
    assert all(p.state.status == "completed" for p in parts.values())
    assert parts["notes_echo"].state.output == "hello over stdio"
    assert parts["notes_picture"].state.attachments[0].mime == "image/png"
    assert parts["notes_document"].state.output == "notes from a resource"


def test_remote_servers_over_streamable_http_and_sse(
    workspace: Workspace, fake_llm: FakeLLM, http_servers: dict[str, str]
) -> None:
    workspace.write_config(
        {
            "mcp": {
                "web": {"type": "remote", "url": http_servers["streamable-http"], "headers": {"X-Team": "a"}},
                # An SSE-only server: the streamable HTTP attempt is refused, SSE is tried next.
                "old": {"type": "remote", "url": http_servers["sse"], "timeout": START},
            }
        }
    )
    fake_llm.push(
        Reply(tool_calls=[ToolCall("web_add", {"a": 2, "b": 3}), ToolCall("old_echo", {"text": "via sse"})]),
        Reply(text="5, and via sse"),
    )
    proc = workspace.run("run", "add and echo")
    assert proc.returncode == 0, proc.stderr
    assert tool_results(fake_llm.chat_requests()[-1].body) == ["5", "via sse"]


def test_a_large_result_is_spilled_like_bash_output(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"t": local()}, "tool_output": {"max_lines": 50}})
    fake_llm.push(Reply(tool_calls=[ToolCall("t_lines", {"count": 400})]), Reply(text="long"))
    proc = workspace.run("run", "many lines")
    assert proc.returncode == 0, proc.stderr
    [part] = tool_parts(workspace)
    assert part.state.metadata["truncated"] is True
    spilled = Path(part.state.metadata["outputPath"])
    assert spilled.read_text().count("\n") == 399 and (spilled.stat().st_mode & 0o777) == 0o600
    assert "line 49" in part.state.output and "line 399" not in part.state.output


def test_tools_and_permission_keys_apply_to_mcp_tools_by_glob(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(
        {
            "mcp": {"t": local()},
            "tools": {"t_*": False, "t_echo": True, "t_add": True},
            "permission": {"t_add": "deny"},
        }
    )
    fake_llm.push(
        Reply(tool_calls=[ToolCall("t_add", {"a": 1, "b": 2}), ToolCall("t_echo", {"text": "allowed"})]),
        Reply(tool_calls=[ToolCall("t_fail", {})]),
        Reply(text="ok"),
    )
    proc = workspace.run("run", "try them")
    assert proc.returncode == 0, proc.stderr
    first = fake_llm.chat_requests()[-3].body
    # t_add is turned on, but its permission denies it whole: not offered (as in OpenCode).
    assert {n for n in offered(first) if n.startswith("t_")} == {"t_echo"}
    parts = {p.tool: p for p in tool_parts(workspace)}
    assert parts["t_add"].state.status == "error" and "Unknown tool" in parts["t_add"].state.error
    assert parts["t_echo"].state.output == "allowed"
    assert parts["t_fail"].state.status == "error" and "Unknown tool" in parts["t_fail"].state.error


def test_a_tool_error_is_the_tool_parts_error(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"t": local()}})
    fake_llm.push(Reply(tool_calls=[ToolCall("t_fail", {})]), Reply(text="it failed"))
    proc = workspace.run("run", "fail")
    assert proc.returncode == 0, proc.stderr
    [part] = tool_parts(workspace)
    assert part.state.status == "error" and "the tool failed on purpose" in part.state.error


def test_a_crashing_server_is_one_line_the_other_tools_work_and_it_restarts_once(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"mcp": {"good": local(), "flaky": local()}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("flaky_crash", {})]),
        Reply(tool_calls=[ToolCall("good_echo", {"text": "still here"})]),
        Reply(tool_calls=[ToolCall("flaky_echo", {"text": "restarted"})]),
        Reply(tool_calls=[ToolCall("flaky_crash", {})]),
        Reply(tool_calls=[ToolCall("flaky_echo", {"text": "again?"})]),
        Reply(text="done"),
    )
    proc = workspace.run("run", "crash it")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "mcp server flaky" in line]
    assert lines[0] == (
        "agentcli: mcp server flaky stopped (the connection closed — crashing on purpose); "
        "it is restarted at the next step"
    ), proc.stderr
    assert lines[1].endswith("its tools are gone for this session") and len(lines) == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    crash, echo, back, crash_again, gone = tool_parts(workspace)
    assert crash.state.status == "error" and "stopped during the call" in crash.state.error
    assert echo.state.output == "still here"
    assert back.state.output == "restarted"
    assert crash_again.state.status == "error"
    assert gone.state.status == "error" and "Unknown tool 'flaky_echo'" in gone.state.error


def test_a_server_that_cannot_start_is_one_line_and_the_rest_works(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"mcp": {"broken": local("--fail-start"), "t": local()}})
    fake_llm.push(Reply(tool_calls=[ToolCall("t_echo", {"text": "fine"})]), Reply(text="ok"))
    proc = workspace.run("run", "go")
    assert proc.returncode == 0, proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "broken" in line]
    assert line.startswith("agentcli: mcp server broken failed to start: ")
    assert line.endswith("cannot start: missing API token")  # the server's own last line on stderr
    [part] = tool_parts(workspace)
    assert part.state.output == "fine"
    assert not any(n.startswith("broken_") for n in offered(fake_llm.chat_requests()[-2].body))


def test_a_server_still_starting_at_its_timeout_is_one_line_and_the_turn_goes_on_without_it(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # Its gate never opens: it never serves, so its timeout passes however loaded the machine is.
    never = local("--wait-for", str(workspace.project / "never"), timeout=1000)
    workspace.write_config({"mcp": {"slow": never, "t": local()}})
    fake_llm.push(Reply(text="answered without it"))
    proc = workspace.run("run", "go")
    assert proc.returncode == 0 and "answered without it" in proc.stdout, proc.stderr
    [line] = [line for line in proc.stderr.splitlines() if "slow" in line]
    assert line == (
        "agentcli: mcp server slow is still starting after 1 s; "
        "the turn goes on, its tools join when it is ready"
    ), proc.stderr
    names = offered(fake_llm.chat_requests()[0].body)
    assert "t_echo" in names and not any(n.startswith("slow_") for n in names)


def test_a_wrong_shaped_entry_is_one_line_naming_the_key(workspace: Workspace) -> None:
    workspace.write_config({"mcp": {"gh": {"type": "local", "command": "npx gh-server"}}})
    proc = workspace.run("run", "hi")
    line = assert_one_line_error(proc)
    assert line == (
        'agentcli: error: opencode.json: mcp.gh.command: must be a non-empty list of strings, e.g. ["npx", '
        '"-y", "some-mcp-server"]'
    )


def _untrusted(ws: Workspace, marker: Path) -> None:
    """The model's provider in the user's global config; the project config only adds a server."""
    provider = ws.write_config()
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps(provider))
    (ws.project / "opencode.json").write_text(json.dumps({"mcp": {"repo": local("--marker", str(marker))}}))
    ws.extra_env["AGENTCLI_TRUST_ALL"] = ""


def test_an_untrusted_projects_server_is_never_started(workspace: Workspace, fake_llm: FakeLLM) -> None:
    marker = workspace.root / "started"
    _untrusted(workspace, marker)
    proc = workspace.run("run", "hi")
    line = assert_one_line_error(proc)
    assert "mcp.repo" in line and "agentcli trust" in line
    time.sleep(0.5)  # a server started in the background would have written its marker by now
    assert not marker.exists()
    assert fake_llm.chat_requests() == []

    assert workspace.run("trust").returncode == 0
    fake_llm.push(Reply(tool_calls=[ToolCall("repo_echo", {"text": "trusted now"})]), Reply(text="ok"))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    assert tool_parts(workspace)[0].state.output == "trusted now"


def test_a_project_declined_trust_runs_without_its_servers(workspace: Workspace, fake_llm: FakeLLM) -> None:
    from agentcli.trusted_config import load_config, record_trust

    marker = workspace.root / "started"
    _untrusted(workspace, marker)
    loaded = load_config(workspace.project, env=workspace.env)
    assert loaded.trust is not None and loaded.trust.keys() == ["mcp.repo"]
    record_trust(loaded.trust, False, env=workspace.env)  # the user answered "no" in the chat
    fake_llm.push(Reply(text="hello"))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    assert "ignoring mcp.repo from the project config" in proc.stderr
    assert not marker.exists()
    assert not any(n.startswith("repo_") for n in offered(fake_llm.chat_requests()[-1].body))


def test_the_users_global_servers_need_no_trust(workspace: Workspace, fake_llm: FakeLLM) -> None:
    config = workspace.write_config()
    config["mcp"] = {"mine": local()}
    global_dir = workspace.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps(config))
    (workspace.project / "opencode.json").unlink()
    workspace.extra_env["AGENTCLI_TRUST_ALL"] = ""
    fake_llm.push(Reply(tool_calls=[ToolCall("mine_add", {"a": 20, "b": 22})]), Reply(text="42"))
    proc = workspace.run("run", "add")
    assert proc.returncode == 0, proc.stderr
    assert tool_parts(workspace)[0].state.output == "42"


def test_mcp_list_shows_each_servers_status_tools_and_schema_tokens(workspace: Workspace) -> None:
    workspace.write_config(
        {
            "mcp": {
                "t": local(),
                "broken": local("--fail-start"),
                "off": {**local(), "enabled": False},
            }
        }
    )
    proc = workspace.run("mcp", "list")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.strip()}
    assert "connected" in rows["t"] and " 9 " in rows["t"] and "stdio" in rows["t"]
    assert "failed" in rows["broken"] and "missing API token" in proc.stdout
    assert "disabled" in rows["off"]
    tokens = int(rows["t"].split()[rows["t"].split().index("connected") + 2])
    assert 200 < tokens < 1000  # eight small tools' schemas, as the model would be sent them
    proc = workspace.run("mcp", "list", "--json")
    listed = {s["name"]: s for s in json.loads(proc.stdout)}
    assert listed["t"]["status"] == "connected" and len(listed["t"]["tools"]) == 9
    assert listed["t"]["tokens"] == tokens


def test_a_stdio_server_gets_no_terminal_and_its_stderr_goes_to_a_private_log(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"mcp": {"loud": local()}})
    fake_llm.push(Reply(tool_calls=[ToolCall("loud_crash", {})]), Reply(text="ok"))
    proc = workspace.run("run", "crash")
    assert "crashing on purpose" not in proc.stderr.replace("— crashing on purpose", "")
    log = workspace.home / ".local" / "share" / "agentcli" / "mcp" / "loud.log"
    assert "crashing on purpose" in log.read_text()
    assert (log.stat().st_mode & 0o777) == 0o600 and (log.parent.stat().st_mode & 0o777) == 0o700


@pytest.mark.skipif(not hasattr(os, "getpgid"), reason="POSIX process groups")
def test_servers_are_stopped_when_run_exits(workspace: Workspace, fake_llm: FakeLLM) -> None:
    marker = workspace.root / "pids"
    workspace.write_config({"mcp": {"t": local("--marker", str(marker))}})
    fake_llm.push(Reply(tool_calls=[ToolCall("t_echo", {"text": "x"})]), Reply(text="ok"))
    assert workspace.run("run", "hi").returncode == 0
    pid = int(marker.read_text().split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    raise AssertionError(f"MCP server {pid} outlived agentcli run")
