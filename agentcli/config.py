"""One typed Config from OpenCode's opencode.json files, agentcli's user TOML and env flags.

Cheap to import on purpose (stdlib + pydantic only): `agentcli --help`, `sessions` and `config`
load it and must stay fast, so neither litellm nor sqlmodel may appear here.

Precedence, lowest first, merged deeply (dicts merge, scalars and lists replace):
  1. global OpenCode config ($XDG_CONFIG_HOME/opencode/opencode.json[c]), then $OPENCODE_CONFIG
  2. the user TOML ($AGENTCLI_CONFIG_DIR or $XDG_CONFIG_HOME/agentcli, file config.toml)
  3. project opencode.json[c] and .opencode/opencode.json[c] from the git root down to cwd (nearer wins)
  4. environment flags
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from agentcli import trust
from agentcli.private_files import write_private
from agentcli.trust import TrustState


class ConfigError(Exception):
    """A configuration problem, already phrased as one line for the user."""


# --------------------------------------------------------------------------- value checks
# Our own before-validators so every error reads "must be …" instead of pydantic's wording.


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _non_negative_int(value: object) -> object:
    if value is not None and not (_is_int(value) and value >= 0):
        raise ValueError("must be a non-negative integer")
    return value


def _positive_int(value: object) -> object:
    if value is not None and not (_is_int(value) and value > 0):
        raise ValueError("must be a positive integer")
    return value


def _action(value: object) -> object:
    if value is not None and value not in ("allow", "ask", "deny"):
        raise ValueError("must be one of allow, ask, deny")
    return value


def _pattern_permission(value: object) -> object:
    if value is None or value in ("allow", "ask", "deny"):
        return value
    if isinstance(value, dict):
        return value  # each pattern's action is checked by the dict's value type
    raise ValueError("must be one of allow, ask, deny, or an object mapping patterns to them")


def _timeout(value: object) -> object:
    # OpenCode accepts `false` to mean "no timeout".
    if value is False:
        return None
    return _positive_int(value)


def _silence_timeout(value: object) -> object:
    # OpenCode's headerTimeout / chunkTimeout: milliseconds, or `false` for no limit at all.
    return value if value is False else _positive_int(value)


NonNegInt = Annotated[int, BeforeValidator(_non_negative_int)]
PosInt = Annotated[int, BeforeValidator(_positive_int)]
Action = Annotated[Literal["allow", "ask", "deny"], BeforeValidator(_action)]
PatternPermission = Annotated[Union[Action, dict[str, Action]], BeforeValidator(_pattern_permission)]  # noqa: UP007


class _Section(BaseModel):
    """Base of every config section: strict types, unknown keys ignored (and warned about)."""

    model_config = ConfigDict(strict=True, extra="ignore")
    # Keys OpenCode knows in this section that agentcli ignores without a warning.
    opencode_keys: ClassVar[frozenset[str]] = frozenset()


# --------------------------------------------------------------------------- schema


class ModelLimit(_Section):
    context: NonNegInt = 0
    input: NonNegInt = 0
    output: NonNegInt = 0


class ProviderModel(_Section):
    # OpenCode model entries carry many more keys (cost, modalities, …): keep them, never warn.
    model_config = ConfigDict(strict=True, extra="allow")
    name: str | None = None
    id: str | None = None
    limit: ModelLimit | None = None
    options: dict[str, Any] = {}


class ProviderOptions(_Section):
    # Extra options (e.g. provider-specific flags) are passed through to the route untouched.
    model_config = ConfigDict(strict=True, extra="allow")
    baseURL: str | None = None
    apiKey: str | None = None
    headers: dict[str, str] = {}
    timeout: Annotated[int | None, BeforeValidator(_timeout)] = None
    # Silence allowed before the answer's first byte / between chunks (llm/watch.py has the defaults).
    headerTimeout: Annotated[int | bool | None, BeforeValidator(_silence_timeout)] = None
    chunkTimeout: Annotated[int | bool | None, BeforeValidator(_silence_timeout)] = None


class ProviderConfig(_Section):
    opencode_keys = frozenset({"api", "id", "env", "whitelist", "blacklist"})
    npm: str | None = None
    name: str | None = None
    env: list[str] = []
    options: ProviderOptions = ProviderOptions()
    models: dict[str, ProviderModel] = {}


class CompactionConfig(_Section):
    auto: bool = True
    # agentcli prunes old tool outputs by default, unlike current OpenCode where prune is opt-in:
    # the issue agentcli was built for requires long sessions to shed stale tool output unasked.
    prune: bool = True
    reserved: NonNegInt | None = None
    tail_turns: NonNegInt | None = None
    preserve_recent_tokens: NonNegInt | None = None


class AgentConfig(_Section):
    opencode_keys = frozenset(
        {"variant", "top_p", "tools", "description", "mode", "hidden", "options", "color", "permission"}
    )
    model: str | None = None
    prompt: str | None = None
    temperature: float | None = None
    steps: PosInt | None = None
    maxSteps: PosInt | None = None
    disable: bool = False

    @property
    def max_steps(self) -> int | None:
        """The step guard; `steps` is OpenCode's newer name for `maxSteps`."""
        return self.steps if self.steps is not None else self.maxSteps


class PermissionConfig(_Section):
    # OpenCode permission keys are open-ended (one per tool); accept the others silently.
    model_config = ConfigDict(strict=True, extra="allow")
    edit: Action | None = None
    bash: PatternPermission | None = None
    webfetch: Action | None = None
    # Paths outside the project root (read, list, glob, grep, edit, write, bash workdir).
    external_directory: PatternPermission | None = None
    # Reading files, by path: secret stores (~/.ssh, .env, …) ask unless a pattern allows them.
    read: PatternPermission | None = None
    # webfetch to loopback, link-local, private-range or .internal hosts, by host name.
    private_network: PatternPermission | None = None


class RedactConfig(_Section):
    # Summaries and titles are always redacted; this also redacts every chat request (the model then
    # sees `[REDACTED:<kind>]` where a secret was, and cannot write it anywhere either).
    model_requests: bool = False


class ToolOutputConfig(_Section):
    max_lines: PosInt = 2000
    max_bytes: PosInt = 51200


class DatabaseConfig(_Section):
    """Where sessions are stored: a file path, ``sqlite:///PATH`` or ``postgresql+psycopg://…``.
    Honoured from the user config only (a project file must not send history elsewhere)."""

    url: str | None = None


class Config(_Section):
    opencode_keys = frozenset(
        {
            "$schema", "theme", "keybinds", "share", "autoshare", "autoupdate", "mcp", "lsp", "formatter",
            "username", "layout", "disabled_providers", "enabled_providers", "snapshot", "watcher",
            "experimental", "command", "mode", "tools", "tui", "server", "enterprise", "default_agent",
            "skills", "references", "logLevel", "small_model_options",
        }
    )  # fmt: skip
    model: str | None = None
    small_model: str | None = None
    provider: dict[str, ProviderConfig] = {}
    compaction: CompactionConfig = CompactionConfig()
    agent: dict[str, AgentConfig] = {}
    instructions: list[str] = []
    permission: PermissionConfig = PermissionConfig()
    tool_output: ToolOutputConfig = ToolOutputConfig()
    redact: RedactConfig = RedactConfig()
    plugin: list[str] = []
    database: DatabaseConfig = DatabaseConfig()
    # Only from OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX / AGENTCLI_OUTPUT_TOKEN_MAX, never from a file.
    output_token_max: PosInt = 32000

    def providers_dict(self) -> dict[str, dict[str, Any]]:
        """The provider section as plain dicts, the shape `agentcli.llm.route.resolve` takes."""
        return {pid: p.model_dump(exclude_none=True) for pid, p in self.provider.items()}


_ENV_ONLY_KEYS = frozenset({"output_token_max"})


@dataclass
class LoadedConfig:
    config: Config
    sources: list[Path]  # files actually read, lowest precedence first
    warnings: list[str]
    # Added beyond the brief: dotted key -> the file (or "environment") that set it, for `config list`.
    origins: dict[str, str] = field(default_factory=dict)
    # The project config's risky keys and the user's answer; when not trusted they were left out.
    trust: TrustState | None = None


# --------------------------------------------------------------------------- locations


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _xdg(env: Mapping[str, str], var: str, default: str) -> Path:
    value = env.get(var)
    return Path(value) if value else _home(env) / default


def global_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """OpenCode's global config dir: $XDG_CONFIG_HOME/opencode (default ~/.config/opencode)."""
    return _xdg(_env(env), "XDG_CONFIG_HOME", ".config") / "opencode"


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    e = _env(env)
    directory = Path(e["AGENTCLI_CONFIG_DIR"]) if e.get("AGENTCLI_CONFIG_DIR") else None
    return (directory or _xdg(e, "XDG_CONFIG_HOME", ".config") / "agentcli") / "config.toml"


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    """The user's workspace-trust answers, private, beside the user TOML."""
    return user_config_path(env).parent / "trust.json"


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where sessions live: $XDG_DATA_HOME/agentcli (default ~/.local/share/agentcli)."""
    return _xdg(_env(env), "XDG_DATA_HOME", ".local/share") / "agentcli"


def project_root(cwd: Path) -> Path:
    """The nearest ancestor holding `.git` (a dir, or a file in worktrees), else cwd itself."""
    cwd = cwd.resolve()
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def project_paths(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """The project's config files (written by whoever owns the repository), lowest precedence first."""
    e = _env(env)
    cwd = (cwd or Path.cwd()).resolve()
    if _truthy(e.get("OPENCODE_DISABLE_PROJECT_CONFIG")):
        return []
    root = project_root(cwd)
    chain = [cwd, *cwd.parents]
    dirs = list(reversed(chain[: chain.index(root) + 1])) if root in chain else [cwd]
    return [
        base / name
        for d in dirs
        for base in (d, d / ".opencode")
        for name in ("opencode.jsonc", "opencode.json")
    ]


def candidate_paths(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> list[Path]:
    """Every file load_config would read, lowest precedence first, whether it exists or not."""
    e = _env(env)
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
    home = _home(env)
    root = project_root(cwd)
    if path.is_relative_to(cwd) or (path.is_relative_to(root) and root != home):
        return os.path.relpath(path, cwd)
    return f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)


# --------------------------------------------------------------------------- JSON with comments


def strip_jsonc(text: str) -> str:
    """Blank out // and /* */ comments and trailing commas, keeping every line and column in place.

    Tokenizer-aware: `//` inside a string (a URL) is left alone. Raises ValueError(line, col, reason)
    only for an unterminated block comment; everything else is left for json to judge.
    """
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            if end < 0:
                line = text.count("\n", 0, i) + 1
                raise ValueError(line, i - text.rfind("\n", 0, i), "unterminated /* comment")
            for j in range(i, end + 2):
                if out[j] != "\n":
                    out[j] = " "
            i = end + 2
        else:
            i += 1
    return _strip_trailing_commas("".join(out))


def _strip_trailing_commas(text: str) -> str:
    out = list(text)
    in_string = False
    i = 0
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "}]":
                out[i] = " "
        i += 1
    return "".join(out)


def parse_jsonc(text: str, label: str) -> dict[str, Any]:
    """Parse OpenCode's JSON-with-comments; errors become `<label>:<line>:<col>: invalid JSON: …`."""
    if not text.strip():
        return {}
    try:
        data = json.loads(strip_jsonc(text))
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            line, col, reason = exc.lineno, exc.colno, exc.msg
        else:
            line, col, reason = exc.args
        raise ConfigError(f"{label}:{line}:{col}: invalid JSON: {reason}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{label}: must be a JSON object at the top level")
    return data


# --------------------------------------------------------------------------- reading files


def _read_text(path: Path, label: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ConfigError(f"{label}: not valid UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{label}: cannot read: {exc.strerror or exc}") from None


def _read_toml(path: Path, label: str) -> dict[str, Any]:
    return _parse_toml(_read_text(path, label), label)


def _parse_toml(text: str, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label}: invalid TOML: {exc}") from None


def _substitute(value: Any, base_dir: Path, env: Mapping[str, str], label: str, path: str = "") -> Any:
    """OpenCode's `{env:VAR}` (unset → "") and `{file:path}` (relative to the config file) in strings."""
    if isinstance(value, dict):
        return {k: _substitute(v, base_dir, env, label, _join(path, k)) for k, v in value.items()}
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
            target = _home(env) / arg[2:] if arg.startswith("~/") else base_dir / arg
            if not target.is_file():
                raise ConfigError(f"{label}: {path}: file not found: {arg}")
            out.append(_read_text(target, str(target)).strip())
        i = end + 1
    out.append(value[i:])
    return "".join(out)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


# --------------------------------------------------------------------------- validation


_PYDANTIC_REASONS = {
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "int_type": "must be an integer",
    "float_type": "must be a number",
}


def _error_line(exc: ValidationError, data: Any, label: str) -> str:
    # A union reports one error per member; the deepest is the one that names the bad entry.
    err = max(exc.errors(), key=lambda e: len(e["loc"]))
    parts: list[str] = []
    node = data
    for loc in err["loc"]:
        # Follow the data so pydantic's union-member tags ("dict[str,…]") are told apart from real keys.
        if isinstance(loc, int) and isinstance(node, list) and loc < len(node):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{loc}]"]
            node = node[loc]
        elif isinstance(node, Mapping) and loc in node:
            parts.append(str(loc))
            node = node[loc]
    if err["type"] == "value_error":
        reason = str(err["msg"]).removeprefix("Value error, ")
    else:
        reason = _PYDANTIC_REASONS.get(err["type"], str(err["msg"]).lower())
    return f"{label}: {'.'.join(parts)}: {reason}"


def _submodel(annotation: Any) -> tuple[str, type[_Section]] | None:
    """("model", cls) for a section field, ("map", cls) for dict[str, section], else None."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    args = [a for a in get_args(annotation) if a is not type(None)]
    if get_origin(annotation) is dict and len(args) == 2:
        inner = _submodel(args[1])
        return ("map", inner[1]) if inner and inner[0] == "model" else None
    if get_origin(annotation) in (Union, UnionType) and len(args) == 1:
        return _submodel(args[0])
    if isinstance(annotation, type) and issubclass(annotation, _Section):
        return ("model", annotation)
    return None


def unknown_keys(
    data: Mapping[str, Any], schema: type[_Section] | None = None, prefix: str = ""
) -> list[tuple[str, bool]]:
    """Dotted keys agentcli does not read, each with whether OpenCode knows it (then no warning)."""
    schema = schema or Config
    found: list[tuple[str, bool]] = []
    allows_extra = schema.model_config.get("extra") == "allow"
    for key, value in data.items():
        dotted = _join(prefix, key)
        info = schema.model_fields.get(key)
        if info is None or (schema is Config and key in _ENV_ONLY_KEYS):
            if not allows_extra:
                found.append((dotted, key in schema.opencode_keys))
            continue
        sub = _submodel(info.annotation)
        if sub and sub[0] == "model" and isinstance(value, Mapping):
            found += unknown_keys(value, sub[1], dotted)
        elif sub and sub[0] == "map" and isinstance(value, Mapping):
            for name, entry in value.items():
                if isinstance(entry, Mapping):
                    found += unknown_keys(entry, sub[1], _join(dotted, name))
    return found


def validate_source(data: dict[str, Any], label: str) -> list[str]:
    """Check one source on its own so an error names the file it came from; returns warnings."""
    clean = {k: v for k, v in data.items() if k not in _ENV_ONLY_KEYS}
    try:
        Config.model_validate(clean)
    except ValidationError as exc:
        raise ConfigError(_error_line(exc, clean, label)) from None
    return [f"{label}: unknown key '{key}'" for key, known in unknown_keys(data) if not known]


# --------------------------------------------------------------------------- merging


def deep_merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Dicts merge key by key; scalars and lists from `over` replace."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = dict(value) if isinstance(value, Mapping) else value
    return out


def flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts → dotted keys; lists and scalars are leaves; empty dicts and None are dropped."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        dotted = _join(prefix, str(key))
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
    if _truthy(env.get("OPENCODE_DISABLE_AUTOCOMPACT")) or _truthy(env.get("AGENTCLI_DISABLE_AUTOCOMPACT")):
        over.setdefault("compaction", {})["auto"] = False
    if _truthy(env.get("OPENCODE_DISABLE_PRUNE")) or _truthy(env.get("AGENTCLI_DISABLE_PRUNE")):
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


def load_config(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> LoadedConfig:
    """Read, validate and merge every config source; raises ConfigError with a one-line message.

    A project config's risky keys (see `agentcli.trust`) are left out, unread and unsubstituted,
    unless the user trusted this folder with this config."""
    e = _env(env)
    cwd = (cwd or Path.cwd()).resolve()
    user_path = user_config_path(e)
    project = set(project_paths(cwd, e))
    root = project_root(cwd)
    files = []
    for path in candidate_paths(cwd, e):
        if path.is_file():
            label = display_path(path, cwd, e)
            files.append((path, label, _read_text(path, label)))
    raws = [
        _parse_toml(text, label) if path == user_path else parse_jsonc(text, label)
        for path, label, text in files
    ]
    risks = [
        r
        for (path, _, _), raw in zip(files, raws, strict=True)
        if path in project
        for r in trust.scan(raw, source=path, root=root, home=_home(e))
    ]
    commands = trust.command_files(root)
    skills = trust.skill_links(root)
    risks += trust.command_risks(root, commands) + trust.skill_risks(root, skills)
    state = _trust_state(root, [(p, t) for p, _, t in files if p in project] + commands + skills, risks, e)

    merged: dict[str, Any] = {}
    sources: list[Path] = []
    warnings: list[str] = []
    origins: dict[str, str] = {}
    for (path, label, _), raw in zip(files, raws, strict=True):
        warnings += validate_source(raw, label)  # substitution never changes a value's type
        if path in project and not state.trusted:
            raw = trust.strip(raw, [r for r in risks if r.source == path])
        data = _substitute(raw, path.parent, e, label)
        data = {k: v for k, v in data.items() if k not in _ENV_ONLY_KEYS}
        merged = deep_merge(merged, data)
        _record_origins(origins, data, label)
        sources.append(path)
    if state.decision is False and state.risks:
        warnings.append(
            f"ignoring {', '.join(state.keys())} from the project config: this folder is not trusted "
            f"(`agentcli trust {root}` trusts it)"
        )
    overrides = _env_overrides(e)
    merged = deep_merge(merged, overrides)
    _record_origins(origins, overrides, "environment")
    try:
        config = Config.model_validate(merged)
    except ValidationError as exc:  # each source was valid alone; a mix rarely is not, but say so
        raise ConfigError(_error_line(exc, merged, "merged config")) from None
    return LoadedConfig(config=config, sources=sources, warnings=warnings, origins=origins, trust=state)


def _trust_state(
    root: Path, project_files: list[tuple[Path, str]], risks: list[trust.Risk], env: Mapping[str, str]
) -> trust.TrustState:
    fp = trust.fingerprint(project_files)
    if not risks:
        decision = None
    elif _truthy(env.get(trust.TRUST_ALL_ENV)):
        decision = True
    else:
        decision = trust.TrustStore(trust_file(env)).decision(root, fp)
    return trust.TrustState(root=root, fingerprint=fp, risks=tuple(risks), decision=decision)


def record_trust(state: trust.TrustState, trusted: bool, env: Mapping[str, str] | None = None) -> None:
    """Remember the user's answer for this folder and config."""
    trust.TrustStore(trust_file(env)).record(state, trusted)


def user_database_url(env: Mapping[str, str] | None = None) -> str | None:
    """``database.url`` from the user config only: a project file must not send history elsewhere,
    and a broken project file must not stop ``sessions list``."""
    value = get_user_value("database.url", env)
    return value if isinstance(value, str) and value else None


def list_effective(loaded: LoadedConfig) -> dict[str, Any]:
    """The effective config (defaults included) as dotted keys → values, sorted."""
    dumped = loaded.config.model_dump(exclude_none=True)
    return dict(sorted(flatten(dumped).items()))


# --------------------------------------------------------------------------- user TOML helpers


def split_key(key: str) -> list[str]:
    """`a.b."c.d"` → [a, b, c.d]: quote a segment that contains dots (model ids like qwen2.5)."""
    parts: list[str] = []
    buf, quoted = "", False
    for ch in key.strip():
        if ch == '"':
            quoted = not quoted
        elif ch == "." and not quoted:
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    parts.append(buf)
    if quoted or not key.strip() or any(not p.strip() for p in parts):
        raise ConfigError(f"invalid key {key!r}: use dotted names such as compaction.reserved")
    return parts


def _read_user(env: Mapping[str, str] | None) -> tuple[Path, dict[str, Any]]:
    path = user_config_path(env)
    return path, (_read_toml(path, str(path)) if path.is_file() else {})


def get_user_value(key: str, env: Mapping[str, str] | None = None) -> Any:
    """The value stored under a dotted key in the user TOML, or None when it is not set there."""
    node: Any = _read_user(env)[1]
    for part in split_key(key):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def parse_raw_value(raw: str) -> Any:
    """`true`, `30000`, `["a"]` parse as JSON; anything else is taken as a plain string."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _write_user(path: Path, data: dict[str, Any]) -> None:
    import tomli_w  # only the `config set` path needs it

    write_private(path, tomli_w.dumps(data))  # it holds API keys: 0600 in a 0700 folder


def set_user_value(key: str, raw: str, env: Mapping[str, str] | None = None) -> Path:
    """Validate then store a value in the user TOML; returns the file written.

    Rejects keys agentcli does not read, so a typo fails loudly instead of being stored.
    """
    parts = split_key(key)
    value = parse_raw_value(raw)
    if value is None:
        raise ConfigError(f"{key}: null cannot be stored; use `agentcli config unset {key}`")
    if parts[0] in _ENV_ONLY_KEYS:
        raise ConfigError(f"{key}: set it with the AGENTCLI_OUTPUT_TOKEN_MAX environment variable")
    path, data = _read_user(env)
    node = data
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value
    dotted = ".".join(parts)
    for unknown, _ in unknown_keys(data):
        if dotted == unknown or dotted.startswith(unknown + "."):
            raise ConfigError(f"{key}: unknown key (agentcli does not read it)")
    validate_source(data, str(path))
    _write_user(path, data)
    return path


def unset_user_value(key: str, env: Mapping[str, str] | None = None) -> bool:
    """Remove a dotted key from the user TOML; returns whether it was there."""
    parts = split_key(key)
    path, data = _read_user(env)
    node: Any = data
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, dict) or parts[-1] not in node:
        return False
    del node[parts[-1]]
    _write_user(path, data)
    return True
