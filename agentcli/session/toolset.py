"""The tools a step offers: the built-in and plugin tools, then the MCP tools that are ready, less
those the config's ``tools`` key turns off (OpenCode's ``"tools": {"github_*": false}``), then the
agent's own ``tools`` (which may turn one back on for that agent only)."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from agentcli.session.agents.registry import NOT_FOR_SUBAGENTS, Agent, apply, withheld
from agentcli.session.permission import PermissionPolicy

if TYPE_CHECKING:
    from agentcli.session.loop import LoopOptions, SessionLoop


def enabled(name: str, *rule_sets: Mapping[str, bool]) -> bool:
    """Each key is a tool name or a glob; the last one matching decides, as in permission patterns.
    A later rule set decides over an earlier one wherever one of its keys matches."""
    on = True
    for rules in rule_sets:
        for pattern, value in rules.items():
            if fnmatch.fnmatchcase(name, pattern):
                on = value
    return on


def offered(
    base: Mapping[str, Any], mcp: Any | Iterable[Any], *rule_sets: Mapping[str, bool]
) -> dict[str, Any]:
    """``base``: name → Tool; ``mcp``: an MCP host or several (None: none configured). A built-in
    tool keeps its name should a server's tool be called the same."""
    tools = dict(base)
    hosts = mcp if isinstance(mcp, list | tuple) else [mcp]
    for host in hosts:
        if host is not None:
            for tool in host.tools():
                tools.setdefault(tool.name, tool)
    rule_sets = tuple(r for r in rule_sets if r)
    if not rule_sets:
        return tools
    return {name: tool for name, tool in tools.items() if enabled(name, *rule_sets)}


def agent_host(options: LoopOptions, agent: Agent) -> Any:
    """``agent``'s own MCP servers (``options``: the loop's), started the first time it runs; None
    when it has none or nothing can start them."""
    if not agent.mcp or options.agent_mcp is None:
        return None
    hosts = options.agent_hosts
    with options.hosts_lock:
        if agent.name not in hosts:
            hosts[agent.name] = options.agent_mcp(agent.name, agent.mcp)
        return hosts[agent.name]


def tools_for(loop: SessionLoop, agent: Agent, *, child: bool, start: bool = True) -> dict[str, Any]:
    """The tools ``agent`` is offered by ``loop`` (``child``: in a task's session): the loop's
    tools, the task tool where there are subagents, the MCP servers' and the agent's own, less what
    the config's and the agent's ``tools`` turn off. ``start``: start the agent's own servers now."""
    from agentcli.session.agents.subagent import task_tool

    options = loop.options
    base = dict(options.tools or {})
    if child:  # a task's session: no todo list of its own, no tasks unless its rules name them
        for name in NOT_FOR_SUBAGENTS:
            base.pop(name, None)
    if (not child or "task" in agent.permission) and (task := task_tool(loop)) is not None:
        base["task"] = task
    own = agent_host(options, agent) if start else options.agent_hosts.get(agent.name)
    tools = offered(base, [options.mcp, own], loop.config.tools, agent.tools)
    return withheld(tools, policy_of(loop, agent, child=child))


def policy_of(loop: SessionLoop, agent: Agent, *, child: bool) -> PermissionPolicy:
    """The rules ``agent`` runs under in ``loop``: the loop's own for its agent; another agent's (a
    subagent whose tools the context report counts) held to the loop's agent, as its task would be."""
    if agent is loop.agent:
        return loop.policy
    policy = dataclasses.replace(
        loop.policy, inherited=loop.policy.above() if child else loop.policy.inherited
    )
    apply(policy, agent, loop.user_rules)
    return policy
