"""Agents (OpenCode's agent.ts): who answers in a session — a prompt, a model, permission rules, the
tools offered, a step limit — and which of them the model may hand a task to.

Built in, as OpenCode's agent.ts has them: ``build`` (the default), ``plan`` (edits refused but to its
own plan files ``.opencode/plans/*.md``, shell commands ask first, whatever the rules allow), the
subagents ``general`` and ``explore`` (read-only tools). A built-in agent's limits (``caps``) hold
over the user's rules; the agent's own ``permission`` in the config lifts a limit key by key. The
config's ``agent`` key and the agent files (``agentcli.config.agent_files``) change them or add
others; ``disable`` removes one. ``compaction``, ``title`` and ``summary`` configure internal jobs
and are never a session's agent.

The public face, for the chat, ``run`` and the ACP server: ``AgentRegistry.primary()`` (the agents a
session can be switched to), ``subagents()``, ``get(name)``, and ``SessionLoop.switch_agent``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agentcli.config import AgentConfig, Config
from agentcli.session.permission import PermissionPolicy, Rule
from agentcli.session.request import system

AgentMode = Literal["primary", "subagent", "all"]
INTERNAL = frozenset({"compaction", "title", "summary"})  # agents of internal jobs, not of sessions
# Tools a subagent is not given (OpenCode's choice): the todo list is the parent's, and a subagent
# does not start subagents unless its own permission names ``task``.
NOT_FOR_SUBAGENTS = ("todowrite", "todoread", "task")


class AgentError(ValueError):
    """An agent that cannot be used (unknown, a subagent asked for as primary): one line."""


@dataclass(frozen=True)
class Agent:
    name: str
    mode: AgentMode
    description: str = ""
    prompt: str | None = None  # replaces the built-in agent prompt
    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    steps: int | None = None
    permission: Mapping[str, Rule] = field(default_factory=dict)  # over the user's rules, key by key
    tools: Mapping[str, bool] = field(default_factory=dict)  # after the global ``tools``, last match wins
    mcp: Mapping[str, Any] = field(default_factory=dict)  # servers given to this agent only
    native: bool = False
    hidden: bool = False
    # Rules every subject is also held to whatever the user's allow (a built-in agent's limits); a
    # key the agent's own config names is lifted (None).
    caps: Mapping[str, Rule] = field(default_factory=dict)

    @property
    def primary(self) -> bool:
        return self.mode != "subagent" and not self.hidden

    @property
    def subagent(self) -> bool:
        """The model may hand it tasks (a hidden one is only left out of the chat's completion)."""
        return self.mode != "primary"


PLAN_DIR = ".opencode/plans"
PLAN_FILES = (
    f"{PLAN_DIR}/*.md"  # the files plan may edit in the project (OpenCode's rule; ``with_data_plans``)
)
# explore's tools (OpenCode's list, with agentcli's own keys for paths and the network): all else denied.
EXPLORE_TOOLS = ("grep", "glob", "list", "bash", "webfetch", "websearch", "codesearch", "read")
EXPLORE_KEYS = ("external_directory", "private_network", "doom_loop")
EXPLORE_DESCRIPTION = (
    "Fast agent specialized for exploring codebases, read-only. Use it to find files by patterns "
    '(eg. "src/components/**/*.tsx"), search code for keywords (eg. "API endpoints"), or answer '
    'questions about the codebase (eg. "how do API endpoints work?"). Say how thorough to be: "quick", '
    '"medium" or "very thorough".'
)

BUILTINS: dict[str, Agent] = {
    "build": Agent(
        "build", "primary", "The default agent: works with the tools the permission rules allow.", native=True
    ),
    "plan": Agent(
        "plan",
        "primary",
        "Plan mode: investigates and plans; edits only its plan files, every command asks first.",
        native=True,
        caps={"edit": {"*": "deny", PLAN_FILES: "allow"}, "bash": "ask"},
    ),
    "general": Agent(
        "general",
        "subagent",
        "General-purpose: research questions and multi-step tasks that read or search widely.",
        native=True,
    ),
    "explore": Agent(
        "explore",
        "subagent",
        EXPLORE_DESCRIPTION,
        prompt=system.agent_prompt("explore"),
        native=True,
        caps={"*": "deny", **dict.fromkeys(EXPLORE_TOOLS + EXPLORE_KEYS, "allow")},
    ),
}


def _merge_rule(old: Rule, new: Rule) -> Rule:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return {**old, **new}  # the agent's patterns come later, so they win
    return new


def effective_rules(agent: Agent, user: Mapping[str, Rule]) -> dict[str, Rule]:
    """The permission rules a turn of ``agent`` runs under: the user's, then the agent's configured
    rules (its built-in limits, ``caps``, hold over both: ``apply``)."""
    rules: dict[str, Rule] = dict(user)
    for key, rule in agent.permission.items():
        rules[key] = _merge_rule(rules.get(key), rule)
    return rules


def apply(policy: PermissionPolicy, agent: Agent, user: Mapping[str, Rule]) -> None:
    """Make ``policy`` the one a turn of ``agent`` runs under (``user``: the rules before any agent's)."""
    policy.rules = effective_rules(agent, user)
    policy.caps = (agent.caps,) if agent.caps else ()
    policy.agent = agent.name if agent.caps else None


def withheld(tools: Mapping[str, Any], policy: PermissionPolicy) -> dict[str, Any]:
    """``tools`` less those the rules deny whole: OpenCode does not offer them to the model."""
    return {name: tool for name, tool in tools.items() if not policy.withholds(name)}


def is_plan(agent: Agent) -> bool:
    return agent.native and agent.name == "plan"


def plans_folder(root: Path, data_dir: Path) -> Path:
    """Where plan writes its plans, as OpenCode 1.18.33 puts them: the project's ``.opencode/plans``
    in a git repository, else the plans folder of the data folder."""
    return root / PLAN_DIR if (root / ".git").exists() else data_dir / "plans"


def with_data_plans(agent: Agent, data_dir: Path) -> Agent:
    """Plan as OpenCode's also may write ``<data>/plans/*.md`` (outside the project without asking
    about the folder); the agent's own config, which lifts a limit, keeps its word."""
    if not is_plan(agent):
        return agent
    caps = dict(agent.caps)
    edit = caps.get("edit")
    if isinstance(edit, Mapping):
        caps["edit"] = {**edit, str(data_dir / "plans" / "*.md"): "allow"}
    own = agent.permission.get("external_directory")
    outside: Rule = {str(data_dir / "plans" / "*"): "allow", **(own if isinstance(own, Mapping) else {})}
    permission = {
        **agent.permission,
        "external_directory": outside if own is None or isinstance(own, Mapping) else own,
    }
    return dataclasses.replace(agent, caps=caps, permission=permission)


def system_head(agent: Agent, *, child: bool, plans: Path | None = None) -> str:
    """The first block of the system prompt: the agent's prompt, plan mode's note (``plans``: where its
    plans go), and for a task's session the note that only the final answer goes back."""
    texts = [agent.prompt or system.agent_prompt("build")]
    if is_plan(agent):
        texts.append(system.agent_prompt("plan"))
        if plans is not None:
            texts.append(f"Write your plan to a Markdown file in {plans}/ (the only files you may edit).")
    if child:
        texts.append(system.agent_prompt("subagent"))
    return "\n\n".join(t.strip() for t in texts)


def _configured(base: Agent | None, name: str, entry: AgentConfig) -> Agent:
    agent = base or Agent(name, "all")
    permission = entry.permission.model_dump(exclude_none=True) if entry.permission else {}
    merged = {key: _merge_rule(agent.permission.get(key), rule) for key, rule in permission.items()}
    return dataclasses.replace(
        agent,
        description=entry.description if entry.description is not None else agent.description,
        mode=entry.mode or agent.mode,
        prompt=entry.prompt if entry.prompt is not None else agent.prompt,
        model=entry.model or agent.model,
        temperature=entry.temperature if entry.temperature is not None else agent.temperature,
        top_p=entry.top_p if entry.top_p is not None else agent.top_p,
        steps=entry.max_steps or agent.steps,
        hidden=entry.hidden if entry.hidden is not None else agent.hidden,
        permission={**agent.permission, **merged},
        caps={**agent.caps, **dict.fromkeys(permission)} if agent.caps else agent.caps,
        tools={**agent.tools, **entry.tools},
        mcp={**agent.mcp, **{k: v for k, v in entry.mcp.items() if getattr(v, "type", None)}},
    )


class AgentRegistry:
    """The agents of one config, by name."""

    def __init__(
        self, agents: Mapping[str, Agent], default: str | None = None, js_plugins: tuple[str, ...] = ()
    ) -> None:
        self.agents = dict(agents)
        self._default = default
        self.js_plugins = js_plugins  # OpenCode plugins agentcli cannot run: agents may come from them

    @classmethod
    def from_config(cls, config: Config) -> AgentRegistry:
        agents = dict(BUILTINS)
        for name, entry in config.agent.items():
            if name in INTERNAL:
                continue
            if entry.disable:
                agents.pop(name, None)
                continue
            agents[name] = _configured(agents.get(name), name, entry)
        from agentcli.plugins.manager import BUNDLED, opencode_js

        js = tuple(p for p in config.plugin if p not in BUNDLED and opencode_js(p))
        return cls(agents, config.default_agent, js)

    def _from_plugins(self) -> str:
        if not self.js_plugins:
            return ""
        named = ", ".join(self.js_plugins)
        return f"; agents the OpenCode plugin {named} defines are missing (agentcli runs Python plugins only)"

    def get(self, name: str) -> Agent | None:
        return self.agents.get(name)

    def primary(self) -> list[Agent]:
        """The agents a session can be switched to: the default first, then by name (Tab's order)."""
        agents = sorted((a for a in self.agents.values() if a.primary), key=lambda a: a.name)
        default = self._default if self._default in {a.name for a in agents} else "build"
        return sorted(agents, key=lambda a: a.name != default)

    def subagents(self) -> list[Agent]:
        return sorted((a for a in self.agents.values() if a.subagent), key=lambda a: a.name)

    def default(self) -> Agent:
        if self._default:
            return self.require_primary(self._default, what="default_agent")
        agents = self.primary()
        if not agents:
            raise AgentError(
                "no primary agent: every one is disabled or a subagent (see `agent` in opencode.json)"
                + self._from_plugins()
            )
        return agents[0]

    def require_primary(self, name: str, *, what: str = "agent") -> Agent:
        agent = self.get(name)
        names = ", ".join(a.name for a in self.primary()) or "none"
        if agent is None:
            raise AgentError(
                f"{what} {name!r} does not exist (primary agents: {names}){self._from_plugins()}"
            )
        if not agent.primary:
            raise AgentError(
                f"{what} {name!r} is a subagent: the model hands it tasks, or send it one message with "
                f"@{name} (primary agents: {names})"
            )
        return agent

    def require_subagent(self, name: str) -> Agent:
        agent = self.get(name)
        if agent is None or not agent.subagent:
            names = ", ".join(a.name for a in self.subagents()) or "none"
            raise AgentError(f"{name!r} is not a subagent (subagents: {names})")
        return agent

    def next_primary(self, current: str) -> Agent:
        """The primary agent after ``current`` (Tab in the chat), wrapping around."""
        agents = self.primary()
        names = [a.name for a in agents]
        if not agents:
            raise AgentError("no primary agent to switch to")
        return agents[(names.index(current) + 1) % len(agents)] if current in names else agents[0]
