"""The rows of ``agentcli mcp list`` and ``/mcp``: the config's MCP servers, then each agent's own
(marked with that agent), and what their schemas cost the parent's window — the primary agent's, which
never carries a server given to a subagent only."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from agentcli.mcp.status import ServerStatus
from agentcli.session.agents.registry import Agent
from agentcli.session.toolset import enabled

if TYPE_CHECKING:
    from agentcli.mcp.host import McpHost


def with_agents(agents: list[Agent]) -> list[Agent]:
    """The agents that have MCP servers of their own, by name."""
    return sorted((a for a in agents if a.mcp), key=lambda a: a.name)


def _not_running(agent: Agent) -> list[ServerStatus]:
    """An agent's servers with no host: not started yet, or none of them enabled."""
    return [
        ServerStatus(
            name=name,
            kind=str(entry.type),
            status="idle" if entry.enabled else "disabled",
            agent=agent.name,
        )
        for name, entry in agent.mcp.items()
    ]


def parent_tokens(status: ServerStatus, parent: Agent | None, config_tools: Mapping[str, bool]) -> int:
    """The tokens ``status``'s tools add to each request of ``parent`` (the tools it is offered)."""
    name = parent.name if parent is not None else None
    if status.status != "connected" or (status.agent is not None and status.agent != name):
        return 0  # not running, or given to another agent only
    own = parent.tools if parent is not None else {}
    return sum(t.tokens for t in status.tools if enabled(t.name, config_tools, own))


def rows(
    host: McpHost | None,
    agent_hosts: Mapping[str, McpHost | None],
    agents: list[Agent],
    *,
    parent: Agent | None,
    config_tools: Mapping[str, bool],
) -> list[ServerStatus]:
    """``host``: the config's servers (None: none); ``agent_hosts``: the agents' own that were started
    (a None host: that agent has none enabled)."""
    out: list[ServerStatus] = list(host.statuses()) if host is not None else []
    for agent in with_agents(agents):
        own = agent_hosts.get(agent.name)
        out += own.statuses() if own is not None else _not_running(agent)
    for status in out:
        status.parent_tokens = parent_tokens(status, parent, config_tools)
    return out
