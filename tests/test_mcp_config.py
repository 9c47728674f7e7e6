"""The `mcp` and `tools` keys as configuration: what a project may set before it is trusted, how a
project turns off a server of the user's, and how `tools` / `permission` globs reach MCP tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config import ConfigError, McpLocal, McpRemote
from agentcli.session.permission import PermissionPolicy
from agentcli.session.toolset import enabled
from agentcli.tools.base import PermissionRequest
from agentcli.trusted_config import load_config


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}


def _project(tmp_path: Path, config: dict) -> Path:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    (project / "opencode.json").write_text(json.dumps(config))
    return project


def _global(tmp_path: Path, config: dict) -> None:
    folder = tmp_path / "home" / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps(config))


SERVER = {"type": "local", "command": ["python", "server.py"], "environment": {"MODE": "x"}}


def test_a_projects_servers_need_trust_and_are_left_out_until_then(tmp_path: Path) -> None:
    project = _project(
        tmp_path,
        {"mcp": {"repo": SERVER, "api": {"type": "remote", "url": "https://mcp.example.com/mcp"}}},
    )
    loaded = load_config(project, env=_env(tmp_path))
    assert loaded.trust is not None and loaded.trust.pending
    assert loaded.trust.keys() == ["mcp.repo", "mcp.api"]
    reasons = {r.key: r.reason for r in loaded.trust.risks}
    assert reasons["mcp.repo"] == "starts MCP server repo (python server.py)"
    assert reasons["mcp.api"] == "connects to MCP server https://mcp.example.com/mcp"
    assert loaded.config.mcp == {}  # not trusted: never started


def test_the_users_global_servers_need_no_trust(tmp_path: Path) -> None:
    _global(tmp_path, {"mcp": {"mine": SERVER}})
    loaded = load_config(_project(tmp_path, {}), env=_env(tmp_path))
    assert loaded.trust is not None and not loaded.trust.risks
    assert isinstance(loaded.config.mcp["mine"], McpLocal)


def test_a_project_may_turn_a_users_server_off_without_trust(tmp_path: Path) -> None:
    _global(tmp_path, {"mcp": {"mine": {"type": "remote", "url": "https://example.com/mcp"}}})
    loaded = load_config(_project(tmp_path, {"mcp": {"mine": {"enabled": False}}}), env=_env(tmp_path))
    assert loaded.trust is not None and not loaded.trust.risks
    server = loaded.config.mcp["mine"]
    assert isinstance(server, McpRemote) and server.enabled is False


def test_a_project_switching_a_tool_on_needs_trust(tmp_path: Path) -> None:
    _global(tmp_path, {"tools": {"bash": False}})
    loaded = load_config(_project(tmp_path, {"tools": {"bash": True, "webfetch": False}}), env=_env(tmp_path))
    assert loaded.trust is not None and loaded.trust.keys() == ["tools.bash"]
    assert loaded.config.tools == {"bash": False, "webfetch": False}  # the user's choice stands


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": ["x"]}, 'mcp.s: needs "type": "local" or "remote"'),
        ({"type": "stdio", "command": ["x"]}, 'mcp.s: "type" must be "local" or "remote"'),
        ({"type": "local", "command": []}, "mcp.s.command: must be a non-empty list of strings"),
        ({"type": "local", "command": ["x"], "env": {}}, "mcp.s.env: unknown key"),
        ({"type": "remote", "url": "ws://host"}, "mcp.s.url: must be an http:// or https:// URL"),
        ({"type": "remote", "url": "http://h", "timeout": 0}, "mcp.s.timeout: must be a positive integer"),
        ({"type": "remote", "url": "http://h", "headers": {"A": 1}}, "mcp.s.headers.A: must be a string"),
        ("npx server", 'mcp.s: must be an object with "type": "local" or "remote"'),
    ],
)
def test_a_wrong_shaped_entry_is_one_line_naming_the_key(tmp_path: Path, entry: object, message: str) -> None:
    project = _project(tmp_path, {"mcp": {"s": entry}})
    with pytest.raises(ConfigError) as caught:
        load_config(project, env={**_env(tmp_path), "AGENTCLI_TRUST_ALL": "1"})
    assert str(caught.value).startswith(f"opencode.json: {message}")
    assert "\n" not in str(caught.value)


def test_tools_globs_the_last_match_decides() -> None:
    rules = {"github_*": False, "github_get_*": True}
    assert not enabled("github_create_issue", rules)
    assert enabled("github_get_issue", rules)
    assert enabled("bash", rules)


def test_mcp_tools_are_allowed_unless_a_permission_key_or_glob_says_otherwise() -> None:
    def request(name: str) -> PermissionRequest:
        return PermissionRequest(tool=name, title=name, patterns=["*"], default="allow")

    policy = PermissionPolicy(rules={"github_*": "ask", "github_search": "allow", "db_*": {"*": "deny"}})
    assert policy.action(request("notes_echo")) == "allow"
    assert policy.action(request("github_create_issue")) == "ask"
    assert policy.action(request("github_search")) == "allow"  # its own key beats the glob
    assert policy.action(request("db_drop")) == "deny"
    # Built-in keys keep their own defaults.
    assert PermissionPolicy().action(PermissionRequest(tool="bash", title="ls", patterns=["ls"])) == "ask"
