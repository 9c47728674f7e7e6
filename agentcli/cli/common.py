"""What every command shares: the global options, opening the store and the config, and turning
failures into one clear line on stderr with a non-zero exit code (never a traceback)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli.app.errors import CliError

if TYPE_CHECKING:
    from agentcli.session.request.input_size import InputTooLarge
    from agentcli.store.db import Target
    from agentcli.store.store import Store
    from agentcli.trusted_config import TrustedConfig

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@dataclass
class GlobalState:
    db: str | None = None  # --db: a path or a SQLAlchemy URL


STATE = GlobalState()  # set once by the top-level callback, read by commands


def say(line: str) -> None:
    """One line on stderr; in a terminal narrower than it, wrapped between words (never inside one)."""
    if is_tty(sys.stderr):
        from agentcli.ui.wrap import for_stream

        line = for_stream(line, sys.stderr)
    typer.echo(line, err=True)


def fail(message: str, code: int = 1, *, json_result: bool = False) -> typer.Exit:
    say(f"agentcli: error: {message}")
    if json_result:  # `run --format json`: a script reading stdout learns it failed, and why, as JSON
        import json

        error = {"name": "SetupError", "message": message}
        result = {"type": "result", "session_id": None, "error": error, "exit_code": code}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return typer.Exit(code)


@contextlib.contextmanager
def errors(*, json_result: bool = False) -> Iterator[None]:
    """Known failures → one line; anything unexpected → one line too, with where to look (and with
    ``json_result``, the same as a JSON ``result`` line on stdout)."""
    try:
        yield
    except typer.Exit:
        raise
    except CliError as exc:
        raise fail(str(exc), exc.code, json_result=json_result) from None
    except KeyboardInterrupt:
        typer.echo("", err=True)
        raise typer.Exit(130) from None
    except Exception as exc:
        name = type(exc).__name__
        known = {"ConfigError", "StoreError", "PluginError", "LLMError", "RouteError"}
        if known & {c.__name__ for c in type(exc).__mro__} or isinstance(exc, ValueError | OSError):
            message = getattr(exc, "message", None) or str(exc) or name
            raise fail(message.splitlines()[0] if message else name, json_result=json_result) from None
        if os.environ.get("AGENTCLI_DEBUG"):
            raise
        raise fail(
            f"unexpected {name}: {str(exc).splitlines()[0] if str(exc) else ''}"
            " (set AGENTCLI_DEBUG=1 for details)",
            json_result=json_result,
        ) from None


def db_target() -> Target:
    """--db, else $AGENTCLI_DB, else the user config's database.url, else the default file."""
    from agentcli.store.db import default_target, resolve

    if STATE.db:
        return resolve(STATE.db)
    if os.environ.get("AGENTCLI_DB"):
        return default_target()
    from agentcli.config import user_database_url

    return default_target(configured=user_database_url())


def open_store() -> Store:
    from agentcli.store.store import Store

    return Store(db_target())


def load_config(cwd: Path | None = None, *, trust: bool = False) -> TrustedConfig:
    """The config for a command; ``trust`` (the --trust flag) first trusts this folder's config."""
    from agentcli.trusted_config import load_config as load
    from agentcli.trusted_config import record_trust

    loaded = load(cwd or Path.cwd())
    if trust and loaded.trust is not None and not loaded.trust.trusted:
        record_trust(loaded.trust, True)
        loaded = load(cwd or Path.cwd())
    for warning in loaded.warnings:
        say(f"agentcli: warning: {warning}")
    return loaded


def require_trust(loaded: TrustedConfig) -> None:
    """Commands that cannot ask (run, compact) refuse a folder whose risky config is unanswered."""
    if loaded.trust is not None and loaded.trust.pending:
        raise CliError(loaded.trust.refusal())


def is_tty(stream: object = sys.stdout) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def too_large_line(exc: InputTooLarge) -> str:
    """A message that cannot fit in the model's window, and how much would (chat and run say it)."""
    from agentcli.ui.fmt import format_tokens

    return (
        f"this message is ~{format_tokens(exc.tokens)} tokens, more than {exc.model} takes in one"
        f" message (~{format_tokens(exc.room)} tokens, about {exc.fits_chars // 1024:,} KB of text)"
    )
