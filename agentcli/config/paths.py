"""Where agentcli's files are: OpenCode's global config, the user TOML, the trust answers, the data
folder, and a project's root and config files. Pure path arithmetic over an environment mapping."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def resolve_env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def home_dir(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _xdg(env: Mapping[str, str], var: str, default: str) -> Path:
    value = env.get(var)
    return Path(value) if value else home_dir(env) / default


def global_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's global config dir: $XDG_CONFIG_HOME/opencode (default ~/.config/opencode)."""
    return _xdg(resolve_env(env), "XDG_CONFIG_HOME", ".config") / "opencode"


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    e = resolve_env(env)
    directory = Path(e["AGENTCLI_CONFIG_DIR"]) if e.get("AGENTCLI_CONFIG_DIR") else None
    return (directory or _xdg(e, "XDG_CONFIG_HOME", ".config") / "agentcli") / "config.toml"


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    """The user's workspace-trust answers, private, beside the user TOML."""
    return user_config_path(env).parent / "trust.json"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where sessions live: $XDG_DATA_HOME/agentcli (default ~/.local/share/agentcli)."""
    return _xdg(resolve_env(env), "XDG_DATA_HOME", ".local/share") / "agentcli"


def project_root(cwd: Path) -> Path:
    """The nearest ancestor holding `.git` (a dir, or a file in worktrees), else cwd itself."""
    cwd = cwd.resolve()
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def project_dirs(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders whose config counts as the project's, from the git root down to cwd (none when
    OPENCODE_DISABLE_PROJECT_CONFIG is set)."""
    e = resolve_env(env)
    cwd = (cwd or Path.cwd()).resolve()
    if truthy(e.get("OPENCODE_DISABLE_PROJECT_CONFIG")):
        return []
    root = project_root(cwd)
    chain = [cwd, *cwd.parents]
    return list(reversed(chain[: chain.index(root) + 1])) if root in chain else [cwd]


def project_paths(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The project's config files (written by whoever owns the repository), lowest precedence first."""
    dirs = project_dirs(cwd, env)
    return [
        base / name
        for d in dirs
        for base in (d, d / ".opencode")
        for name in ("opencode.jsonc", "opencode.json")
    ]


def candidate_paths(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """Every file load_config would read, lowest precedence first, whether it exists or not."""
    e = resolve_env(env)
    gdir = global_config_dir(e)
    paths = [gdir / "opencode.json", gdir / "opencode.jsonc"]
    if e.get("OPENCODE_CONFIG"):
        paths.append(Path(e["OPENCODE_CONFIG"]).expanduser())
    paths.append(user_config_path(e))
    paths += project_paths(cwd, e)
    seen: set[Path] = set()
    unique = []
    for p in paths:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def display_path(path: Path, cwd: Path, env: Mapping[str, str]) -> str:
    """How a file is named in messages: relative inside the project, ~/… under home, else absolute."""
    home = home_dir(env)
    root = project_root(cwd)
    if path.is_relative_to(cwd) or (path.is_relative_to(root) and root != home):
        return os.path.relpath(path, cwd)
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
