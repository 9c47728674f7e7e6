"""The agent registry and the agents' config: built-ins and what the config changes, plan's rules,
Tab's order, the default agent, agent files merged after the config of their folder, and the keys of
a project's agent that need workspace trust."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentcli.config import Config
from agentcli.llm.route import resolve
from agentcli.session.agents.registry import AgentError, AgentRegistry, apply, effective_rules
from agentcli.session.capabilities import takes_temperature
from agentcli.session.permission import PermissionPolicy
from agentcli.tools.base import PermissionRequest
from agentcli.trusted_config import load_config


def registry(agent: dict | None = None, **config: object) -> AgentRegistry:
    return AgentRegistry.from_config(Config.model_validate({"agent": agent or {}, **config}))


def test_builtins_are_build_plan_and_the_general_and_explore_subagents() -> None:
    agents = registry()
    assert [a.name for a in agents.primary()] == ["build", "plan"]
    assert [a.name for a in agents.subagents()] == ["explore", "general"]
    assert agents.default().name == "build"


def policy_of(
    agent_name: str, user: dict, agent: dict | None = None, *, yes: bool = False
) -> PermissionPolicy:
    found = registry(agent).get(agent_name)
    assert found is not None
    policy = PermissionPolicy(yes=yes)
    apply(policy, found, user)
    return policy


def edit(path: str) -> PermissionRequest:
    return PermissionRequest(tool="write", title=f"Write {path}", patterns=[path])


def test_plan_refuses_every_edit_but_its_plan_files_even_where_the_rules_and_yes_allow() -> None:
    # OpenCode's plan: edit {"*": "deny", ".opencode/plans/*.md": "allow"}; commands ask.
    user = {"edit": "allow", "bash": {"git *": "allow", "rm *": "deny"}, "webfetch": "allow"}
    plan = policy_of("plan", user, yes=True)
    assert plan.decide(edit("src/app.py")) == "deny"
    assert plan.decide(edit(".opencode/plans/refactor.md")) == "once"
    assert plan.decide(edit(".opencode/plans/refactor.txt")) == "deny"
    assert not plan.withholds("edit")  # its plan files are editable: the tool stays offered
    bash = PermissionRequest(tool="bash", title="git status", patterns=["git status", "rm -rf x"])
    assert plan.subject_action("bash", "git status") == "ask"
    assert plan.action(bash) == "deny"  # the user's denial stays
    assert plan.subject_action("webfetch", "example.com") == "allow"
    build = policy_of("build", user)
    assert build.decide(edit("src/app.py")) == "once"


def test_an_agents_own_config_lifts_a_builtin_limit_key_by_key() -> None:
    plan = policy_of("plan", {}, {"plan": {"permission": {"edit": "allow"}}})
    assert plan.decide(edit("src/app.py")) == "once"
    assert plan.subject_action("bash", "ls") == "ask"  # the other limit stays


def test_explore_is_read_only_and_its_denied_tools_are_withheld() -> None:
    explore = policy_of("explore", {"edit": "allow", "bash": "allow"})
    for tool in ("edit", "write", "todowrite", "task", "skill", "github_create_issue"):
        assert explore.withholds(tool), tool
    for tool in ("read", "grep", "glob", "list", "bash", "webfetch"):
        assert not explore.withholds(tool), tool
    assert "Do not" in (registry().get("explore").prompt or "")  # type: ignore[union-attr]


def test_a_tool_denied_whole_is_withheld_but_one_denied_for_some_subjects_is_not() -> None:
    assert policy_of("build", {"webfetch": "deny"}).withholds("webfetch")
    assert policy_of("build", {"edit": {"*.py": "allow", "*": "deny"}}).withholds("write")
    assert not policy_of("build", {"edit": {"*": "deny", "*.md": "allow"}}).withholds("edit")
    assert not policy_of("build", {"bash": {"rm *": "deny"}}).withholds("bash")


def test_a_tasks_session_is_held_to_the_rules_of_the_agent_that_started_it() -> None:
    plan = policy_of("plan", {"edit": "allow"})
    child = PermissionPolicy(yes=True, inherited=plan.above())
    apply(child, registry().get("general"), {"edit": "allow"})  # type: ignore[arg-type]
    assert child.decide(edit("src/app.py")) == "deny"
    assert child.decide(edit(".opencode/plans/p.md")) == "once"
    assert "the agent that started this task" in child.hint(edit("src/app.py"))


def test_an_agents_own_permission_comes_after_the_users() -> None:
    agents = registry({"review": {"mode": "subagent", "permission": {"bash": {"pytest *": "allow"}}}})
    review = agents.get("review")
    assert review is not None
    rules = effective_rules(review, {"bash": {"*": "ask", "pytest *": "deny"}})
    assert rules["bash"] == {"*": "ask", "pytest *": "allow"}


def test_tab_cycles_the_primary_agents_from_the_default() -> None:
    agents = registry({"docs": {"mode": "primary"}, "helper": {"mode": "subagent"}, "both": {}})
    assert [a.name for a in agents.primary()] == ["build", "both", "docs", "plan"]
    assert [a.name for a in agents.subagents()] == ["both", "explore", "general", "helper"]  # "all" is both
    assert agents.next_primary("plan").name == "build"
    assert agents.next_primary("build").name == "both"


def test_default_agent_disable_and_internal_names() -> None:
    agents = registry({"plan": {"disable": True}, "compaction": {"model": "x/y"}}, default_agent="docs")
    with pytest.raises(AgentError, match="default_agent 'docs' does not exist"):
        agents.default()
    assert agents.get("plan") is None and agents.get("compaction") is None
    assert registry({"docs": {"mode": "primary"}}, default_agent="docs").default().name == "docs"
    with pytest.raises(AgentError, match="is a subagent"):
        registry(default_agent="general").default()


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def test_agent_files_follow_their_folders_config(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    env = _env(tmp_path)
    global_dir = tmp_path / "home" / ".config" / "opencode"
    (global_dir / "agent").mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps({"agent": {"docs": {"temperature": 0.1}}}))
    (global_dir / "agent" / "docs.md").write_text("---\ntemperature: 0.2\ndescription: global\n---\nG\n")
    (project / "opencode.json").write_text(json.dumps({"agent": {"docs": {"temperature": 0.3}}}))
    (project / ".opencode" / "agent" / "nested").mkdir(parents=True)
    (project / ".opencode" / "agent" / "nested" / "writer.md").write_text("Just a prompt.\n")
    loaded = load_config(project, env=env)
    docs = loaded.config.agent["docs"]
    # global json < global agent file < project json
    assert (docs.temperature, docs.description, docs.prompt) == (0.3, "global", "G")
    assert loaded.config.agent["nested/writer"].prompt == "Just a prompt."


def test_a_projects_agent_keys_that_loosen_need_trust(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".opencode" / "agent").mkdir(parents=True)
    (project / "opencode.json").write_text(
        json.dumps({"provider": {"corp": {"options": {"baseURL": "http://example.test/v1"}}}})
    )
    (project / ".opencode" / "agent" / "ops.md").write_text(
        "---\nmodel: corp/big\npermission:\n  edit: allow\n  bash: deny\ntools:\n  webfetch: true\n"
        "  bash: false\nmcp:\n  repo:\n    type: local\n    command: [./server]\n---\nOps.\n"
    )
    loaded = load_config(project, env=_env(tmp_path))
    assert loaded.trust is not None and not loaded.trust.trusted
    assert set(loaded.trust.keys()) == {
        "provider.corp.options.baseURL",
        "agent.ops.model",
        "agent.ops.permission.edit",
        "agent.ops.tools.webfetch",
        "agent.ops.mcp.repo",
    }
    ops = loaded.config.agent["ops"]  # untrusted: what loosens is left out, the rest stays
    assert ops.prompt == "Ops." and ops.model is None and ops.mcp == {}
    assert ops.permission is not None and ops.permission.edit is None and ops.permission.bash == "deny"
    assert ops.tools == {"bash": False}


def test_a_temperature_goes_only_to_a_model_that_takes_one() -> None:
    def takes(entry: dict, model: str = "local/m") -> bool:
        provider, _, model_id = model.partition("/")
        config = Config.model_validate(
            {
                "provider": {
                    provider: {"options": {"baseURL": "http://127.0.0.1:1/v1"}, "models": {model_id: entry}}
                }
            }
        )
        return takes_temperature(config, resolve(model, config.providers_dict()))

    assert not takes({})  # a model nobody describes: OpenCode's capability defaults to false
    assert takes({"temperature": True})
    assert not takes({"temperature": False}, "openai/gpt-4o")  # the config's word wins over the map
    assert takes({}, "openai/gpt-4o")  # litellm's map knows it
    assert not takes({}, "anthropic/claude-opus-4-7")  # the map says: no sampling parameters


_BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", *"abcdefgh"], "abcdefghi", strict=True)
)


@pytest.mark.parametrize(
    "front_matter",
    [_BOMB, "tools: " + "[" * 5000 + "]" * 5000 + "\n", "description: " + "x" * 70_000 + "\n"],
    ids=["alias bomb", "nested past the parser", "oversized"],
)
def test_an_agent_file_that_would_stall_parsing_is_one_warning_and_the_rest_loads(
    tmp_path: Path, front_matter: str
) -> None:
    """Agent files are read before the folder is trusted: whatever their front matter holds, its cost
    is bounded (size, and size and depth once YAML aliases are expanded)."""
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".opencode" / "agent").mkdir(parents=True)
    (project / ".opencode" / "agent" / "bomb.md").write_text(f"---\n{front_matter}---\nBoom.\n")
    (project / ".opencode" / "agent" / "fine.md").write_text("---\ndescription: fine\n---\nFine.\n")
    started = time.process_time()
    loaded = load_config(project, env=_env(tmp_path))
    assert time.process_time() - started < 2  # CPU, not wall: a bomb expanded takes minutes
    assert "bomb" not in loaded.config.agent and loaded.config.agent["fine"].prompt == "Fine."
    assert any("bomb.md" in w for w in loaded.warnings), loaded.warnings
