"""MCP with OpenCode's timing, against the real test server (tests/mcp_server.py): a server still
starting when a turn begins keeps starting and joins when ready (told in one line each time); the
tool listing of a started server is bounded by its ``timeout``; every call has a limit and the turn
goes on after it; a tool that can only run as an MCP task is not offered."""

from __future__ import annotations

import sys
from pathlib import Path

from agentcli.config import Config
from agentcli.mcp.host import from_config
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_mcp import SERVER, local, offered, tool_parts
from tests.workspace import Workspace


def test_a_server_still_starting_joins_the_session_when_ready(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    entry = {
        "type": "local",
        "command": [sys.executable, str(SERVER), "--wait-for", str(gate)],
        "timeout": 1000,
    }
    told: list[str] = []
    host = from_config(
        Config.model_validate({"mcp": {"slow": entry}}).mcp,
        directory=tmp_path,
        log_dir=None,
        notify=told.append,
    )
    assert host is not None
    try:
        host.prepare_step(first=True)  # waits its timeout (1 s), then the turn goes on without it
        assert told == [
            "mcp server slow is still starting after 1 s; the turn goes on, its tools join when it is ready"
        ]
        assert host.tools() == [] and host.states["slow"].status == "starting"  # not failed at its timeout
        host.prepare_step(first=True)  # a later turn does not say it again
        assert len(told) == 1
        gate.touch()
        assert host.states["slow"].settled.wait(60)
        assert "slow_echo" in {t.name for t in host.tools()}
        assert len(told) == 2 and told[1].startswith("mcp server slow is ready (")
    finally:
        host.close()


def test_a_call_that_never_answers_is_the_tools_error_and_the_turn_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.extra_env["AGENTCLI_MCP_CALL_TIMEOUT"] = "5"
    workspace.write_config({"mcp": {"t": local()}})
    fake_llm.push(
        Reply(tool_calls=[ToolCall("t_hang", {})]),
        Reply(tool_calls=[ToolCall("t_echo", {"text": "still serving"})]),
        Reply(text="went on"),
    )
    proc = workspace.run("run", "go")
    assert proc.returncode == 0 and "went on" in proc.stdout, proc.stderr
    hang, echo = tool_parts(workspace)
    assert hang.state.status == "error"
    assert hang.state.error == "MCP tool hang of server t did not answer within 5 s"
    assert echo.state.output == "still serving", echo.state.error  # the server lives on


def test_a_tool_that_requires_mcp_tasks_is_not_offered(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"mcp": {"t": local()}})
    fake_llm.push(Reply(text="ok"))
    assert workspace.run("run", "go").returncode == 0
    names = offered(fake_llm.chat_requests()[0].body)
    assert "t_echo" in names and "t_batch" not in names
