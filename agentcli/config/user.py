"""The user TOML as ``agentcli config get|set|unset`` edits it: dotted keys, values checked against
the schema before anything is written, the file private (it holds API keys)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.config.errors import ConfigError
from agentcli.config.load import read_toml
from agentcli.config.model import ENV_ONLY_KEYS
from agentcli.config.paths import user_config_path
from agentcli.config.suggest import did_you_mean
from agentcli.config.validation import unknown_keys, validate_source
from agentcli.private_files import write_private


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
    return path, (read_toml(path, str(path)) if path.is_file() else {})


def get_user_value(key: str, env: Mapping[str, str] | None = None) -> Any:
    """The value stored under a dotted key in the user TOML, or None when it is not set there."""
    node: Any = _read_user(env)[1]
    for part in split_key(key):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def user_database_url(env: Mapping[str, str] | None = None) -> str | None:
    """``database.url`` from the user config only: a project file must not send history elsewhere,
    and a broken project file must not stop ``sessions list``."""
    value = get_user_value("database.url", env)
    return value if isinstance(value, str) and value else None


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
    if parts[0] in ENV_ONLY_KEYS:
        raise ConfigError(f"{key}: set it with the AGENTCLI_OUTPUT_TOKEN_MAX environment variable")
    path, data = _read_user(env)
    node = data
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value
    dotted = ".".join(parts)
    for unknown in unknown_keys(data):
        if dotted == unknown.key or dotted.startswith(unknown.key + "."):
            raise ConfigError(f"{key}: unknown key (agentcli does not read it){did_you_mean(unknown.hint)}")
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
