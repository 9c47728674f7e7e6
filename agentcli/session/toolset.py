"""The tools a step offers: the built-in and plugin tools, then the MCP tools that are ready, less
those the config's ``tools`` key turns off (OpenCode's ``"tools": {"github_*": false}``), then the
agent's own ``tools`` (which may turn one back on for that agent only)."""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentcli.session.agents.registry import NOT_FOR_SUBAGENTS, Agent, apply, withheld
from agentcli.session.permission import PermissionPolicy

if TYPE_CHECKING:  # only named: ``enabled`` is read by `agentcli mcp`, which starts no session
    from agentcli.session.runtime import SessionRuntime
    from agentcli.tools.base import ToolHost


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
    base: Mapping[str, Any], mcp: ToolHost | None | Sequence[ToolHost | None], *rule_sets: Mapping[str, bool]
) -> dict[str, Any]:
    """``base``: name → Tool; ``mcp``: an MCP host or several (None: none configured). A built-in
    tool keeps its name should a server's tool be called the same."""
    tools = dict(base)
    hosts = mcp if isinstance(mcp, Sequence) else [mcp]
    for host in hosts:
        if host is not None:
            for tool in host.tools():
                tools.setdefault(tool.name, tool)
    rule_sets = tuple(r for r in rule_sets if r)
    if not rule_sets:
        return tools
    return {name: tool for name, tool in tools.items() if enabled(name, *rule_sets)}


def tools_for(runtime: SessionRuntime, agent: Agent, *, child: bool, start: bool = True) -> dict[str, Any]:
    """The tools ``agent`` is offered on ``runtime`` (``child``: in a task's session): the runtime's
    tools, the task tool where there are subagents, the MCP servers' and the agent's own, less what
    the config's and the agent's ``tools`` turn off. ``start``: start the agent's own servers now."""
    from agentcli.session.agents.subagent import task_tool
    from agentcli.session.recall import RecallTool

    base = dict(runtime.tools or {})
    if child:  # a task's session: no todo list of its own, no tasks unless its rules name them
        for name in NOT_FOR_SUBAGENTS:
            base.pop(name, None)
    if (not child or "task" in agent.permission) and (task := task_tool(runtime)) is not None:
        base["task"] = task
    if "read" in base:  # with the built-in tools: the session's own history (session/recall.py)
        base.setdefault("recall", RecallTool(runtime.store))
    own = runtime.agent_host(agent, start=start)
    tools = offered(base, [runtime.options.mcp, own], runtime.config.tools, agent.tools)
    return withheld(tools, policy_of(runtime, agent, child=child))


def policy_of(runtime: SessionRuntime, agent: Agent, *, child: bool) -> PermissionPolicy:
    """The rules ``agent`` runs under: the runtime's own for its agent; another agent's (a subagent
    whose tools the context report counts) held to the runtime's agent, as its task would be."""
    if agent is runtime.agent:
        return runtime.policy
    policy = runtime.policy
    policy = dataclasses.replace(policy, inherited=policy.above() if child else policy.inherited)
    apply(policy, agent, runtime.user_rules)
    return policy


def offered_tools(runtime: SessionRuntime) -> dict[str, Any]:
    """What the next step offers: built-in, plugin and ready MCP tools (the agent's own servers'
    too), the task tool when there are subagents, less those the config and the agent turn off."""
    assert runtime.agent is not None
    return tools_for(runtime, runtime.agent, child=runtime.options.child)
