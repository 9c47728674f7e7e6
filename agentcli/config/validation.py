"""Checking one config source against the typed Config (``agentcli.config.model``): errors and
warnings phrased for the user ("must be …", "unknown key …", "did you mean …")."""

from __future__ import annotations

from collections.abc import Mapping
from types import UnionType
from typing import Annotated, Any, NamedTuple, Union, get_args, get_origin

from pydantic import ValidationError

from agentcli.config.errors import ConfigError
from agentcli.config.model import ENV_ONLY_KEYS, Config, _Section
from agentcli.config.suggest import close_key, did_you_mean

# --------------------------------------------------------------------------- validation


def join_key(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


_PYDANTIC_REASONS = {
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "extra_forbidden": "unknown key",
}


def error_line(exc: ValidationError, data: Any, label: str) -> str:
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


class UnknownKey(NamedTuple):
    key: str  # dotted
    known: bool  # OpenCode knows it: no warning
    hint: str | None = None  # the known key it is likely a slip of


def unknown_keys(
    data: Mapping[str, Any], schema: type[_Section] | None = None, prefix: str = ""
) -> list[UnknownKey]:
    """Dotted keys agentcli does not read, each with whether OpenCode knows it (then no warning). In
    a section that passes extra keys through, only a near miss of a known one (``baseUrl``) counts."""
    schema = schema or Config
    found: list[UnknownKey] = []
    allows_extra = schema.model_config.get("extra") == "allow"
    for key, value in data.items():
        dotted = join_key(prefix, key)
        info = schema.model_fields.get(key)
        if info is None or (schema is Config and key in ENV_ONLY_KEYS):
            hint = close_key(
                key, [k for k in schema.model_fields if not (schema is Config and k in ENV_ONLY_KEYS)]
            )
            if not allows_extra or hint:
                found.append(UnknownKey(dotted, key in schema.opencode_keys, hint))
            continue
        sub = _submodel(info.annotation)
        if sub and sub[0] == "model" and isinstance(value, Mapping):
            found += unknown_keys(value, sub[1], dotted)
        elif sub and sub[0] == "map" and isinstance(value, Mapping):
            for name, entry in value.items():
                if isinstance(entry, Mapping):
                    found += unknown_keys(entry, sub[1], join_key(dotted, name))
    return found


# OpenCode keys agentcli does not carry out: one line each on what it does instead (never silence).
NOT_CARRIED: dict[str, str] = {
    "lsp": "agentcli starts no language servers; the model gets no LSP diagnostics",
    "enabled_providers": "agentcli does not limit providers: the model named by `model` (or -m) is used",
}


def validate_source(data: dict[str, Any], label: str) -> list[str]:
    """Check one source on its own so an error names the file it came from; returns warnings."""
    clean = {k: v for k, v in data.items() if k not in ENV_ONLY_KEYS}
    try:
        Config.model_validate(clean)
    except ValidationError as exc:
        raise ConfigError(error_line(exc, clean, label)) from None
    lines = [
        f"{label}: unknown key '{u.key}'{did_you_mean(u.hint)}" for u in unknown_keys(data) if not u.known
    ]
    return lines + [
        f"{label}: '{key}' is not used: {why}" for key, why in NOT_CARRIED.items() if data.get(key)
    ]
