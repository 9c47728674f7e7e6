"""``agentcli context [SESSION]``: the window of a session split by category (see /context)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console, RenderableType

from agentcli.cli.common import CliError, load_config, open_store
from agentcli.cli.setup import build_loop, resolve_session


def context_renderable_for(loop: Any, session_id: str) -> RenderableType:
    from agentcli.session.context_report import report
    from agentcli.ui.context_view import context_renderable

    return context_renderable(report(loop, session_id), loop.model.name)


def show_context(ref: str | None, *, model: str | None, api_base: str | None) -> None:
    directory = Path.cwd()
    loaded = load_config(directory)
    store = open_store()
    session_id = resolve_session(store, ref, cont=ref is None, directory=directory)
    if session_id is None:
        raise CliError("no session here yet (give a session id, see `agentcli sessions list --all`)")
    session = store.get_session(session_id)
    loop = build_loop(loaded, store, model=model or session.model, api_base=api_base, yes=False, asker=None,
                      directory=Path(session.directory or directory))
    Console(highlight=False).print(context_renderable_for(loop, session_id))
