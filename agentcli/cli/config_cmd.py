"""`agentcli config …`: read and write configuration without importing litellm or sqlmodel."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NoReturn

import typer

from agentcli.cli.common import say
from agentcli.config import (
    ConfigError,
    candidate_paths,
    display_path,
    get_user_value,
    list_effective,
    set_user_value,
    split_key,
    unset_user_value,
)
from agentcli.trusted_config import TrustedConfig, load_config

app = typer.Typer(
    help="Show and change configuration (opencode.json files, the user TOML, env flags).",
    no_args_is_help=True,
    add_completion=False,
)


def _fail(message: str) -> NoReturn:
    say(f"error: {message}")
    raise typer.Exit(2)


def _load() -> TrustedConfig:
    try:
        loaded = load_config(Path.cwd(), os.environ)
    except ConfigError as exc:
        _fail(str(exc))
    for warning in loaded.warnings:
        say(f"warning: {warning}")
    if loaded.trust is not None and loaded.trust.pending:
        say(
            f"warning: not shown, this folder is not trusted: {', '.join(loaded.trust.keys())} "
            "(`agentcli trust` trusts it)"
        )
    return loaded


def _show(value: Any) -> str:
    """Strings print bare (script-friendly); everything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


# API keys, tokens, passwords and request headers (Authorization) print masked unless asked.
_SECRET_KEY = re.compile(r"(?i)(api_?key|apikey|token|secret|password|passwd|(^|_)key)$")
MASK = "********"
ShowSecrets = typer.Option(False, "--show-secrets", help="Print API keys, tokens and passwords in clear.")


def is_secret_key(dotted: str) -> bool:
    parts = dotted.split(".")
    return bool(_SECRET_KEY.search(parts[-1])) or "headers" in parts[:-1]


def _masked(dotted: str, value: Any, show: bool) -> Any:
    if show or value in (None, ""):
        return value
    if isinstance(value, dict):
        return {k: _masked(f"{dotted}.{k}", v, show) for k, v in value.items()}
    return MASK if is_secret_key(dotted) else value


@app.command("get")
def get(
    key: str = typer.Argument(..., help="Dotted key, e.g. compaction.reserved"),
    user: bool = typer.Option(False, "--user", help="Read only the user TOML, not the merged config."),
    show_secrets: bool = ShowSecrets,
) -> None:
    """Print one value of the effective config (or of the user TOML with --user)."""
    try:
        dotted = ".".join(split_key(key))
        if user:
            value = get_user_value(key)
            if value is None:
                _fail(f"{dotted}: not set in the user config")
            typer.echo(_show(_masked(dotted, value, show_secrets)))
            return
    except ConfigError as exc:
        _fail(str(exc))
    flat = list_effective(_load())
    if dotted in flat:
        typer.echo(_show(_masked(dotted, flat[dotted], show_secrets)))
        return
    # A table: print everything under it as an object.
    nested = {
        k[len(dotted) + 1 :]: _masked(k, v, show_secrets)
        for k, v in flat.items()
        if k.startswith(dotted + ".")
    }
    if not nested:
        _fail(f"{dotted}: not set")
    typer.echo(json.dumps(nested, indent=2))


@app.command("set", context_settings={"ignore_unknown_options": True})  # lets `set k -5` through
def set_(
    key: str = typer.Argument(..., help="Dotted key, e.g. compaction.reserved"),
    value: str = typer.Argument(
        ..., help='Parsed as JSON when it can be (true, 30000, ["a"]), else a string.'
    ),
) -> None:
    """Validate and store a value in the user TOML."""
    try:
        path = set_user_value(key, value)
        dotted = ".".join(split_key(key))
        stored = get_user_value(key)
    except ConfigError as exc:
        _fail(str(exc))
    typer.echo(f"set {dotted} = {_show(_masked(dotted, stored, False))} in {path}")
    try:
        origin = load_config(Path.cwd(), os.environ).origins.get(dotted)
    except ConfigError:
        return  # another file is broken; `config list` will say which
    if origin is not None and origin != display_path(path, Path.cwd().resolve(), os.environ):
        say(f"note: {origin} sets {dotted} too and takes precedence here")


@app.command("unset")
def unset(key: str = typer.Argument(..., help="Dotted key to remove from the user TOML.")) -> None:
    """Remove a value from the user TOML."""
    try:
        removed = unset_user_value(key)
    except ConfigError as exc:
        _fail(str(exc))
    if not removed:
        _fail(f"{key}: not set in the user config")
    typer.echo(f"unset {key}")


@app.command("list")
def list_(
    as_json: bool = typer.Option(False, "--json", help="Print JSON: key → {value, source}."),
    show_secrets: bool = ShowSecrets,
) -> None:
    """Print the effective merged config as dotted keys, with the file each value came from."""
    loaded = _load()
    flat = list_effective(loaded)
    rows = {
        k: {"value": _masked(k, v, show_secrets), "source": loaded.origins.get(k, "default")}
        for k, v in flat.items()
    }
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for key, row in rows.items():
        typer.echo(f"{key} = {json.dumps(row['value'])}  # {row['source']}")


@app.command("path")
def path() -> None:
    """List the files read, lowest precedence first; '*' marks those that exist."""
    for candidate in candidate_paths(Path.cwd(), os.environ):
        mark = "*" if candidate.is_file() else " "
        typer.echo(f"{mark} {candidate}")
