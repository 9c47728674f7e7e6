"""MCP in the chat (a real pseudo-terminal): the prompt shows without waiting for the servers, a
server that fails says so in one line, `/mcp` lists them, the model calls their tools, and `/context`
counts their schemas apart."""

from __future__ import annotations

import io
import re

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.terminal import PROMPT, leave, say, spawn
from tests.test_e2e_mcp import local, tool_parts
from tests.workspace import Workspace

SLOW_TIMEOUT = 12000  # ms; the prompt is up well before (it does not wait), the first turn waits to it


def test_the_chat_starts_servers_in_the_background_and_shows_them(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # "slow" sleeps past its timeout: it is still starting when the prompt is up, and the first
    # turn waits for it only until that timeout, then goes on without it.
    slow = local("--slow", "60", timeout=SLOW_TIMEOUT)
    workspace.write_config({"mcp": {"t": local(), "broken": local("--fail-start"), "slow": slow}})
    child = spawn(workspace, "chat")
    seen = io.StringIO()
    child.logfile_read = seen
    child.send("/mcp\r")
    child.expect(r"slow\s+local\s+starting")  # the prompt did not wait for it
    child.expect(PROMPT)

    fake_llm.push(Reply(tool_calls=[ToolCall("t_add", {"a": 40, "b": 2})]), Reply(text="It is 42."))
    # The turn waited for "slow" up to its timeout; the line saying it failed comes before the next prompt.
    slow_failed = f"mcp server slow failed to start: did not start within {SLOW_TIMEOUT // 1000} s"
    say(child, "what is 40 + 2?", "It is 42", slow_failed)
    child.send("/mcp\r")
    child.expect(r"t\s+local\s+connected\s+8\s+\d+\s+stdio")
    child.expect(r"broken\s+local\s+failed")
    child.expect(r"slow\s+local\s+failed")
    child.expect(PROMPT)
    say(child, "/context", r"MCP tool schemas\s+\d")
    assert leave(child) == 0
    # Told once, in one line, whenever it happened (above the prompt, or before the next one).
    assert seen.getvalue().count("mcp server broken failed to start:") == 1
    assert re.search(r"mcp server broken failed to start: .*missing API token", seen.getvalue())
    [part] = tool_parts(workspace)
    assert part.state.output == "42"
    request = fake_llm.chat_requests()[-1].body
    names = {t["function"]["name"] for t in request["tools"]}
    assert "t_add" in names and not any(n.startswith("slow_") for n in names)
