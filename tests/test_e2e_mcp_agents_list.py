"""`agentcli mcp list` and `/mcp` show the agents' own MCP servers too, marked with their agent, and
what each server's schemas cost the parent's window: nothing for a server given to a subagent only."""

from __future__ import annotations

import json

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.terminal import PROMPT, leave, say, spawn
from tests.test_e2e_mcp import local
from tests.test_e2e_subagents import REVIEWER
from tests.workspace import Workspace


def test_mcp_list_shows_agents_own_servers_and_what_each_costs_the_parent(workspace: Workspace) -> None:
    reviewer = {**REVIEWER, "mcp": {"notes": local()}}
    workspace.write_config(
        {
            "mcp": {"t": local(), "docs": local()},
            # docs is given to the reviewer alone; t_crash is turned off everywhere.
            "tools": {"docs_*": False, "t_crash": False},
            "agent": {"reviewer": {**reviewer, "tools": {"docs_*": True}}},
        }
    )
    proc = workspace.run("mcp", "list", "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {(s["name"], s["agent"]): s for s in json.loads(proc.stdout)}
    assert set(listed) == {("t", None), ("docs", None), ("notes", "reviewer")}
    notes, t, docs = listed["notes", "reviewer"], listed["t", None], listed["docs", None]
    assert notes["status"] == "connected" and len(notes["tools"]) == 9
    assert notes["tokens"] > 0 and notes["parent_tokens"] == 0  # the reviewer's alone
    assert docs["tokens"] > 0 and docs["parent_tokens"] == 0  # turned off for the parent
    crash = next(tool["tokens"] for tool in t["tools"] if tool["name"] == "t_crash")
    assert t["parent_tokens"] == t["tokens"] - crash

    proc = workspace.run("mcp", "list")
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.strip()}
    assert rows["notes"][:4] == ["notes", "@reviewer", "local", "connected"]
    assert rows["notes"][4:7] == ["9", str(notes["tokens"]), "0"]
    assert rows["t"][:3] == ["t", "local", "connected"]  # the config's own: no agent
    assert rows["t"][3:6] == ["9", str(t["tokens"]), str(t["parent_tokens"])]
    more = notes["tokens"] + docs["tokens"] + crash
    assert (
        f"{t['parent_tokens']} tokens of MCP tool schemas in every request of @build's window" in proc.stdout
    )
    assert f"{more} more not in it: given to other agents only, or turned off by `tools`" in proc.stdout


def test_slash_mcp_shows_an_agents_server_idle_until_it_runs_then_connected(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    reviewer = {**REVIEWER, "mcp": {"notes": local()}}
    workspace.write_config({"mcp": {"t": local()}, "agent": {"reviewer": reviewer}})
    child = spawn(workspace, "chat")
    say(child, "/mcp", r"notes\s+@reviewer\s+local\s+idle", "starts when @reviewer runs")
    fake_llm.push(
        Reply(tool_calls=[ToolCall("notes_echo", {"text": "from the reviewer's server"})]),
        Reply(text="Echoed it."),
    )
    say(child, "@reviewer echo something", "Echoed it.")
    child.send("/mcp\r")
    child.expect(r"t\s+local\s+connected\s+9\s+(\d+)\s+(\d+)\s+stdio")
    assert child.match.group(1) == child.match.group(2)  # all of t's schemas are in build's window
    child.expect(r"notes\s+@reviewer\s+local\s+connected\s+9\s+\d+\s+0\s+stdio")
    child.expect(PROMPT)
    assert leave(child) == 0
