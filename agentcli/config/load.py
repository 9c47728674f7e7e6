"""Reading the config sources and merging them into one Config.

Precedence, lowest first, merged deeply (dicts merge, scalars and lists replace), except that a
project file cannot lower the user's permission rules or redaction (``merge``: rule by rule):
  1. global OpenCode config ($XDG_CONFIG_HOME/opencode/opencode.json[c]), then $OPENCODE_CONFIG
  2. the user TOML ($AGENTCLI_CONFIG_DIR or $XDG_CONFIG_HOME/agentcli, file config.toml)
  3. project opencode.json[c] and .opencode/opencode.json[c] from the git root down to cwd (nearer wins)
  4. environment flags

Config knows nothing of workspace trust: ``read_sources`` marks which files belong to the project,
and whoever calls ``merge_sources`` says what each of them may contribute (``agentcli.trusted_config``
leaves out a project's risky keys before anything is substituted).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from pydantic import ValidationError

from agentcli.config.agent_files import (
    GLOBAL_AGENT_DIRS,
    GLOBAL_MODE_DIRS,
    PROJECT_AGENT_DIRS,
    PROJECT_MODE_DIRS,
    agent_entry,
    agent_files,
    legacy_modes,
)
from agentcli.config.errors import ConfigError
from agentcli.config.jsonc import parse_jsonc
from agentcli.config.merge import deep_merge, merge_project
from agentcli.config.model import ENV_ONLY_KEYS, Config, LoadedConfig
from agentcli.config.paths import (
    candidate_paths,
    display_path,
    global_config_dir,
    home_dir,
    project_dirs,
    project_paths,
    resolve_env,
    truthy,
    user_config_path,
)
from agentcli.config.validation import error_line, join_key, validate_source

# --------------------------------------------------------------------------- reading files


def read_text(path: Path, label: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{label}: not valid UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot read: {exc.strerror or exc}") from None


def read_toml(path: Path, label: str) -> dict[str, Any]:
    return parse_toml(read_text(path, label), label)


def parse_toml(text: str, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label}: invalid TOML: {exc}") from None


def _substitute(value: Any, base_dir: Path, env: Mapping[str, str], label: str, path: str = "") -> Any:
    """OpenCode's `{env:VAR}` (unset → "") and `{file:path}` (relative to the config file) in strings."""
    if isinstance(value, dict):
        return {k: _substitute(v, base_dir, env, label, join_key(path, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, base_dir, env, label, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "{" not in value:
        return value
    out, i = [], 0
    while (start := value.find("{", i)) >= 0:
        end = value.find("}", start)
        token = value[start + 1 : end] if end > 0 else ""
        kind, _, arg = token.partition(":")
        if kind not in ("env", "file") or not arg:
            out.append(value[i : start + 1])
            i = start + 1
            continue
        out.append(value[i:start])
        if kind == "env":
            out.append(env.get(arg, ""))
        else:
            target = home_dir(env) / arg[2:] if arg.startswith("~/") else base_dir / arg
            if not target.is_file():
                raise ConfigError(f"{label}: {path}: file not found: {arg}")
            out.append(read_text(target, str(target)).strip())
        i = end + 1
    out.append(value[i:])
    return "".join(out)


# --------------------------------------------------------------------------- merging


def _anchor_plugins(data: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """A relative ``file://`` plugin spec (``file://./plugins/x.py``) names a file beside the config
    file that lists it: made absolute here, before configs from other folders are merged."""
    specs = data.get("plugin")
    if not isinstance(specs, list):
        return data
    out = []
    for spec in specs:
        rest = spec[len("file://") :] if isinstance(spec, str) and spec.startswith("file://") else None
        if rest is None or rest.startswith(("/", "localhost/")):
            out.append(spec)
        else:
            out.append((base_dir / unquote(rest)).resolve().as_uri())
    return {**data, "plugin": out}


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts → dotted keys; lists and scalars are leaves; empty dicts and None are dropped."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = join_key(prefix, str(key))
        if isinstance(value, Mapping):
            flat.update(flatten(value, dotted))
        elif value is not None:
            flat[dotted] = value
    return flat


def _record_origins(origins: dict[str, str], data: Mapping[str, Any], label: str) -> None:
    for key in flatten(data):
        # A scalar replacing a table (or the reverse) drops what the older source said under it.
        for old in [k for k in origins if k.startswith(key + ".") or key.startswith(k + ".")]:
            del origins[old]
        origins[key] = label


def _env_overrides(env: Mapping[str, str]) -> dict[str, Any]:
    over: dict[str, Any] = {}
    if truthy(env.get("OPENCODE_DISABLE_AUTOCOMPACT")) or truthy(env.get("AGENTCLI_DISABLE_AUTOCOMPACT")):
        over.setdefault("compaction", {})["auto"] = False
    if truthy(env.get("OPENCODE_DISABLE_PRUNE")) or truthy(env.get("AGENTCLI_DISABLE_PRUNE")):
        over.setdefault("compaction", {})["prune"] = False
    for var in ("OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX", "AGENTCLI_OUTPUT_TOKEN_MAX"):  # ours wins
        raw = env.get(var, "").strip()
        if raw:
            if not (raw.isdigit() and int(raw) > 0):
                raise ConfigError(f"{var}: must be a positive integer (got {raw!r})")
            over["output_token_max"] = int(raw)
    if env.get("AGENTCLI_MODEL", "").strip():
        over["model"] = env["AGENTCLI_MODEL"].strip()
    return over


@dataclass(frozen=True)
class Source:
    """One config file as read, before any substitution."""

    path: Path
    label: str  # how messages name it (relative in the project, ~/… under home)
    text: str
    data: dict[str, Any]  # parsed: JSONC, or TOML for the user file; an agent file's entry
    project: bool  # written by whoever owns the repository, not by the user
    agent: str | None = None  # an agent file (``agent_files``): the agent's name
    problem: str = ""  # an agent file that cannot be used: why (told as a warning; data is empty)


def _agent_sources(
    base: Path, subs: tuple[str, ...], cwd: Path, env: Mapping[str, str], project: bool, primary: bool = False
) -> list[Source]:
    """The agent files under ``base``'s ``subs``; ``primary``: OpenCode's legacy mode files."""
    out = []
    for name, path in agent_files(base, subs):
        label = display_path(path, cwd, env)
        text, data, problem = "", {}, ""
        try:
            text = read_text(path, label)
            entry = agent_entry(text, label)
            data = {"agent": {name: {**entry, "mode": "primary"} if primary else entry}}
        except ConfigError as exc:
            problem = str(exc)
        out.append(Source(path, label, text, data, project, agent=name, problem=problem))
    return out


def read_sources(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Source]:
    """Every config file that exists, read and parsed, lowest precedence first; raises ConfigError
    with a one-line message for a file that cannot be read or parsed."""
    e = resolve_env(env)
    cwd = (cwd or Path.cwd()).resolve()
    user_path = user_config_path(e)
    project = set(project_paths(cwd, e))
    gdir = global_config_dir(e)
    sources = []
    for path in candidate_paths(cwd, e):
        if path.is_file():
            label = display_path(path, cwd, e)
            text = read_text(path, label)
            data = parse_toml(text, label) if path == user_path else parse_jsonc(text, label)
            sources.append(Source(path, label, text, legacy_modes(data), path in project))
    # Agent files follow the config files of their folder: the global ones the global opencode.json,
    # the project's every project file (as OpenCode merges its config directories in order).
    after_global = sum(1 for s in sources if s.path.parent == gdir)
    sources[after_global:after_global] = _agent_sources(
        gdir, GLOBAL_MODE_DIRS, cwd, e, project=False, primary=True
    ) + _agent_sources(gdir, GLOBAL_AGENT_DIRS, cwd, e, project=False)
    for directory in project_dirs(cwd, e):
        sources += _agent_sources(directory, PROJECT_MODE_DIRS, cwd, e, project=True, primary=True)
        sources += _agent_sources(directory, PROJECT_AGENT_DIRS, cwd, e, project=True)
    return sources


def _checked(
    source: Source, raw: Mapping[str, Any], env: Mapping[str, str], warnings: list[str]
) -> dict[str, Any]:
    """One source validated (its warnings added) and substituted. Raises ConfigError in one line
    (also for an agent file that could not be read or parsed)."""
    if source.problem:
        raise ConfigError(source.problem)
    warnings += validate_source(source.data, source.label)  # substitution never changes a type
    data = _anchor_plugins(_substitute(raw, source.path.parent, env, source.label), source.path.parent)
    return {k: v for k, v in data.items() if k not in ENV_ONLY_KEYS}


def merge_sources(
    sources: Sequence[Source],
    env: Mapping[str, str] | None = None,
    kept: Sequence[Mapping[str, Any]] | None = None,
) -> LoadedConfig:
    """Validate each source, substitute and merge them, then the environment flags; raises
    ConfigError with a one-line message.

    ``kept[i]``, when given, is what ``sources[i]`` may contribute (the caller's screening, e.g. a
    project's risky keys left out): it is substituted and merged instead of the file's data, while
    the whole file is still checked so its errors and warnings are reported."""
    e = resolve_env(env)
    merged: dict[str, Any] = {}
    users: dict[str, Any] = {}  # what the user's own files set: the floor under the project's
    paths: list[Path] = []
    warnings: list[str] = []
    origins: dict[str, str] = {}
    for i, source in enumerate(sources):
        raw = source.data if kept is None else kept[i]
        try:
            data = _checked(source, raw, e, warnings)
        except ConfigError as exc:
            if source.agent is None:
                raise
            # A broken agent file costs that agent only: one line, the rest loads.
            warnings.append(f"{exc}; agent {source.agent} left out")
            continue
        merged = merge_project(merged, data) if source.project else deep_merge(merged, data)
        users = users if source.project else deep_merge(users, data)
        _record_origins(origins, data, source.label)
        paths.append(source.path)
    overrides = _env_overrides(e)
    merged = deep_merge(merged, overrides)
    _record_origins(origins, overrides, "environment")
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:  # each source was valid alone; a mix rarely is not, but say so
        raise ConfigError(error_line(exc, merged, "merged config")) from None
    # A project's sandbox settings only tighten the user's.
    config.sandbox = config.sandbox.held_to(
        Config.model_validate({"sandbox": users.get("sandbox") or {}}).sandbox
    )
    config.tasks = config.tasks.held_to(Config.model_validate({"tasks": users.get("tasks") or {}}).tasks)
    return LoadedConfig(
        config=config,
        sources=paths,
        warnings=warnings,
        origins=origins,
        user_permission=dict(users.get("permission") or {}),
    )


def list_effective(loaded: LoadedConfig) -> dict[str, Any]:
    """The effective config (defaults included) as dotted keys → values, sorted."""
    dumped = loaded.config.model_dump(exclude_none=True)
    return dict(sorted(flatten(dumped).items()))
