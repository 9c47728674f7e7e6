"""`agentcli acp` with the editor's MCP servers: the client passes them in session/new (as Zed passes
its context servers), real FastMCP servers (tests/mcp_server.py) serve them, the scripted model calls
their tools, and the test checks what reached the model, what the editor was shown, and that no
server outlives the agent."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from acp.schema import AcpMcpServer, EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from tests.acp_client import Editor, every_line_is_json_rpc, run, running_agent
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_mcp import START, http_servers, local, offered, tool_results  # noqa: F401
from tests.workspace import Workspace

SERVER = Path(__file__).with_name("mcp_server.py")


def stdio(name: str, *args: str, **env: str) -> McpServerStdio:
    """A stdio server as an editor sends it: the executable, its arguments, its environment."""
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=[str(SERVER), *args],
        env=[EnvVariable(name=k, value=v) for k, v in env.items()],
    )


def generous_start(ws: Workspace) -> None:
    # A loaded CI machine starts Python slowly: give the editor's servers what the config ones get.
    ws.extra_env["AGENTCLI_MCP_TIMEOUT"] = str(START)


def pids(marker: Path) -> list[int]:
    return [int(line) for line in marker.read_text().split()] if marker.exists() else []


def assert_gone(pid: int) -> None:
    """The process has exited (an MCP server must not outlive the agent)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError(f"MCP server {pid} outlived agentcli acp")


def notices(editor: Editor) -> list[str]:
    return [line for line in editor.text().splitlines() if line.startswith("_mcp")]


def test_the_editors_stdio_server_is_joined_to_the_configs_and_wins_by_name(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    generous_start(workspace)
    editor_pids, config_pids, shadowed = (workspace.root / n for n in ("editor", "config", "shadowed"))
    workspace.write_config(
        {
            "mcp": {
                # Named like the editor's server: the editor's replaces it, so it never starts.
                "notes": local("--marker", str(shadowed)),
                "extra": local("--marker", str(config_pids)),
            }
        }
    )
    fake_llm.push(
        Reply(tool_calls=[ToolCall("notes_env", {"name": "NOTE"})]),
        Reply(tool_calls=[ToolCall("extra_add", {"a": 2, "b": 3})]),
        Reply(text="Both servers answered."),
    )
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            init = await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
            mcp = init.agent_capabilities.mcp_capabilities
            assert (mcp.http, mcp.sse) == (True, True)
            servers = [stdio("notes", "--marker", str(editor_pids), NOTE="from the editor")]
            sid = (await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=servers)).session_id
            assert (await agent.say(sid, "ask both servers")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        assert "Traceback" not in agent.stderr()

    run(session())
    first, second, last = fake_llm.chat_requests()[-3:]
    assert {"notes_echo", "notes_env", "extra_add", "read"} <= set(offered(first.body))
    # The editor's environment reached its server, which runs in the project; the result the model.
    assert tool_results(second.body) == [f"from the editor in {workspace.project}"]
    assert tool_results(last.body)[-1] == "5"
    assert not shadowed.exists()

    # Each call showed in the editor as any tool call does: announced, then updated to its end.
    starts = editor.of_kind("tool_call")
    assert [s.kind for s in starts] == ["other", "other"]
    env_id = starts[0].tool_call_id
    env_updates = [u for u in editor.of_kind("tool_call_update") if u.tool_call_id == env_id]
    assert [u.status for u in env_updates] == ["in_progress", "completed"]
    assert env_updates[-1].title.startswith("notes_env")
    assert "from the editor" in env_updates[-1].content[0].content.text
    assert not editor.asked and not notices(editor)

    # Both servers ran, and both were stopped when the agent ended.
    started = pids(editor_pids) + pids(config_pids)
    assert len(started) == 2
    for pid in started:
        assert_gone(pid)


def test_a_broken_editor_server_is_one_notice_and_the_session_works(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    generous_start(workspace)
    workspace.write_config()
    fake_llm.push(Reply(text="Working without it."), Reply(text="Still working."))
    editor = Editor()
    servers = [
        stdio("broken", "--fail-start"),
        AcpMcpServer(name="inproc", server_id="s1", type="acp"),  # ACP's own transport: not served
    ]

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
            sid = (await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=servers)).session_id
            assert (await agent.say(sid, "hello")).stop_reason == "end_turn"
            assert (await agent.say(sid, "again")).stop_reason == "end_turn"
        every_line_is_json_rpc(agent.stdout_lines)
        assert "Traceback" not in agent.stderr()

    run(session())
    broken, inproc = sorted(notices(editor))  # one line each
    assert broken.startswith("_mcp server broken failed to start: ")
    assert broken.endswith("cannot start: missing API token_")  # the server's own last words on stderr
    assert inproc == (
        "_mcp server inproc (from the editor) is not started: the acp transport is not supported_"
    )
    assert "Working without it.Still working." in editor.text().replace("\n", "")
    tools = offered(fake_llm.chat_requests()[-1].body)
    assert "read" in tools and not any(t.startswith(("broken_", "inproc_")) for t in tools)


def test_the_editors_servers_need_no_trust_but_the_projects_do(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    generous_start(workspace)
    project_marker = workspace.root / "project-server"
    # The provider in the user's global config (always trusted); the project's config adds a server,
    # which needs the folder trusted. The editor answers the trust question "not now".
    global_dir = workspace.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    workspace.write_config()
    (global_dir / "opencode.json").write_text((workspace.project / "opencode.json").read_text())
    (workspace.project / "opencode.json").write_text(
        json.dumps({"mcp": {"repo": local("--marker", str(project_marker))}})
    )
    workspace.extra_env["AGENTCLI_TRUST_ALL"] = ""
    fake_llm.push(Reply(tool_calls=[ToolCall("notes_echo", {"text": "no trust needed"})]), Reply(text="ok"))
    editor = Editor(answers=["not-now"])

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
            servers = [stdio("notes")]
            sid = (await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=servers)).session_id
            assert (await agent.say(sid, "echo")).stop_reason == "end_turn"

    run(session())
    [asked] = editor.asked  # the trust question, answered "not now"
    assert "mcp.repo" in editor.of_kind("tool_call")[0].content[0].content.text
    first, last = fake_llm.chat_requests()[-2:]
    tools = offered(first.body)
    assert "notes_echo" in tools and not any(t.startswith("repo_") for t in tools)
    assert tool_results(last.body) == ["no trust needed"]
    assert not project_marker.exists()


def test_the_editors_http_and_sse_servers_each_over_their_transport(
    workspace: Workspace,
    fake_llm: FakeLLM,
    http_servers: dict[str, str],  # noqa: F811
) -> None:
    generous_start(workspace)
    workspace.write_config()
    fake_llm.push(
        Reply(
            tool_calls=[ToolCall("web_echo", {"text": "over http"}), ToolCall("old_add", {"a": 1, "b": 1})]
        ),
        Reply(text="done"),
    )
    editor = Editor()
    servers = [
        HttpMcpServer(
            name="web",
            url=http_servers["streamable-http"],
            headers=[HttpHeader(name="X-Team", value="a")],
            type="http",
        ),
        SseMcpServer(name="old", url=http_servers["sse"], headers=[], type="sse"),
    ]

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
            sid = (await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=servers)).session_id
            assert (await agent.say(sid, "use both")).stop_reason == "end_turn"

    run(session())
    assert tool_results(fake_llm.chat_requests()[-1].body) == ["over http", "2"]
    assert not notices(editor)


def test_loading_the_session_again_stops_the_servers_of_the_earlier_load(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    generous_start(workspace)
    workspace.write_config()
    first_run, second_run = workspace.root / "first", workspace.root / "second"
    fake_llm.push(
        Reply(tool_calls=[ToolCall("notes_echo", {"text": "one"})]),
        Reply(text="first"),
        Reply(tool_calls=[ToolCall("notes_echo", {"text": "two"})]),
        Reply(text="second"),
    )
    editor = Editor()

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
            servers = [stdio("notes", "--marker", str(first_run))]
            sid = (await agent.conn.new_session(cwd=str(workspace.project), mcp_servers=servers)).session_id
            assert (await agent.say(sid, "echo one")).stop_reason == "end_turn"
            [earlier] = pids(first_run)
            again = [stdio("notes", "--marker", str(second_run))]
            await agent.conn.load_session(cwd=str(workspace.project), session_id=sid, mcp_servers=again)
            assert_gone(earlier)  # while the agent goes on serving
            assert (await agent.say(sid, "echo two")).stop_reason == "end_turn"
            assert agent.process.returncode is None

    run(session())
    assert tool_results(fake_llm.chat_requests()[-1].body)[-1] == "two"
    [later] = pids(second_run)
    assert_gone(later)
