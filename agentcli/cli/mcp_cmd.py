"""``agentcli mcp list``: start the configured MCP servers and every agent's own, wait for each (up to
its timeout), and show how each fared, its tools, what their schemas cost, and what they cost the
parent's window (the default agent's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agentcli.app.setup import agent_mcp_starter, mcp_notes, start_mcp
from agentcli.cli.common import load_config
from agentcli.cli.mcp_rows import rows, with_agents
from agentcli.session.agents.registry import Agent, AgentError, AgentRegistry

if TYPE_CHECKING:
    from agentcli.mcp.host import McpHost


def _default(registry: AgentRegistry) -> Agent | None:
    try:
        return registry.default()
    except AgentError:  # no usable primary agent: nothing is the parent; the servers are still listed
        return None


def list_servers(*, as_json: bool) -> int:
    directory = Path.cwd()
    loaded = load_config(directory)
    registry = AgentRegistry.from_config(loaded.config)
    agents = with_agents(list(registry.agents.values()))
    quiet = lambda line: None  # noqa: E731 - the table says it all
    host = start_mcp(loaded, directory, notify=quiet)
    start_own = agent_mcp_starter(loaded, directory, quiet)
    agent_hosts: dict[str, McpHost | None] = {
        a.name: start_own(a.name, a.mcp) for a in agents
    }  # all in parallel
    hosts = [h for h in (host, *agent_hosts.values()) if h is not None]
    for running in hosts:
        running.wait_all()
    parent = _default(registry)
    statuses = rows(host, agent_hosts, agents, parent=parent, config_tools=loaded.config.tools)
    for running in hosts:
        running.close()
    if as_json:
        print(json.dumps([{**s.model_dump(), "tokens": s.tokens} for s in statuses], indent=2))
        return 0
    from agentcli.ui.mcp_table import mcp_table

    Console(highlight=False).print(
        mcp_table(statuses, mcp_notes(loaded), parent=parent.name if parent else None)
    )
    return 0
