"""MCP in the chat (a real pseudo-terminal): the prompt shows without waiting for the servers, a
server that fails says so in one line, `/mcp` lists them, the model calls their tools, and `/context`
counts their schemas apart."""

from __future__ import annotations

import io
import re
import threading

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.terminal import PROMPT, leave, say, spawn
from tests.test_e2e_mcp import local, offered, tool_parts
from tests.workspace import Workspace


def test_the_chat_starts_servers_in_the_background_and_shows_them(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # "slow" serves only once the test creates its gate: it is still starting when the prompt is up,
    # and the first turn waits for it (the gate opens while the turn waits) and offers its tools.
    gate = workspace.project / "slow-may-start"
    workspace.write_config(
        {"mcp": {"t": local(), "broken": local("--fail-start"), "slow": local("--wait-for", str(gate))}}
    )
    child = spawn(workspace, "chat")
    seen = io.StringIO()
    child.logfile_read = seen
    child.send("/mcp\r")
    child.expect(r"slow\s+local\s+starting")  # the prompt did not wait for it
    child.expect(PROMPT)

    fake_llm.push(Reply(tool_calls=[ToolCall("t_add", {"a": 40, "b": 2})]), Reply(text="It is 42."))
    opener = threading.Timer(0.5, gate.touch)  # while the turn waits (or, on a slow machine, before)
    opener.start()
    say(child, "what is 40 + 2?", "It is 42")
    opener.join()
    child.send("/mcp\r")
    child.expect(r"t\s+local\s+connected\s+9\s+\d+\s+\d+\s+stdio")
    child.expect(r"broken\s+local\s+failed")
    child.expect(r"slow\s+local\s+connected")
    child.expect(PROMPT)
    say(child, "/context", r"MCP tool schemas\s+\d")
    assert leave(child) == 0
    # Told once, in one line, whenever it happened (above the prompt, or before the next one).
    assert seen.getvalue().count("mcp server broken failed to start:") == 1
    assert re.search(r"mcp server broken failed to start: .*missing API token", seen.getvalue())
    [part] = tool_parts(workspace)
    assert part.state.output == "42"
    first = offered(fake_llm.chat_requests()[0].body)
    assert "t_add" in first and "slow_add" in first  # the first request waited for "slow"
