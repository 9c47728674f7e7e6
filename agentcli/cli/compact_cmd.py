"""``agentcli compact [SESSION] [--focus ...]``: a manual pivot, with progress and the result line."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from agentcli.cli.common import CliError, load_config, open_store, require_trust
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.setup import build_loop, resolve_session
from agentcli.cli.worker import Turn


def compact_session(ref: str | None, *, focus: str | None, model: str | None, api_base: str | None) -> int:
    directory = Path.cwd()
    loaded = load_config(directory)
    require_trust(loaded)
    store = open_store()
    session_id = resolve_session(store, ref, cont=ref is None, directory=directory)
    if session_id is None:
        raise CliError("no session to compact")
    session = store.get_session(session_id)
    loop = build_loop(loaded, store, model=model or session.model, api_base=api_base, yes=False, asker=None,
                      directory=Path(session.directory or directory))
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    renderer = TurnRenderer(err, err, cwd=directory)
    loop.bus.subscribe(renderer)
    turn = Turn()
    turn.run(lambda abort: loop.compact(session_id, focus=focus, abort=abort))
    if turn.cancelled:
        return 130
    if not renderer.notes.compacted:
        return 1
    err.print(gauge_for(loop, session_id, renderer.notes))
    return 0
