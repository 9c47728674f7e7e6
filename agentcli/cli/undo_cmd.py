"""``agentcli undo|redo [SESSION]`` and ``/undo`` ``/redo``: the last turn's file changes and the
turn itself, reverted or put back (``agentcli.session.undo``). Never imports litellm."""

from __future__ import annotations

from pathlib import Path

from agentcli.app.actions import apply_undo
from agentcli.app.setup import resolve_session
from agentcli.cli.common import CliError, open_store


def undo_command(ref: str | None, *, again: bool) -> None:
    store = open_store()
    session_id = resolve_session(store, ref, cont=ref is None, directory=Path.cwd())
    if session_id is None:
        raise CliError("no session here")
    print(apply_undo(store, session_id, again=again))
