"""``agentcli undo|redo [SESSION]`` and ``/undo`` ``/redo``: the last turn's file changes and the
turn itself, reverted or put back (``agentcli.session.undo``). Never imports litellm."""

from __future__ import annotations

from pathlib import Path

from agentcli.app.actions import apply_undo
from agentcli.app.setup import resolve_session
from agentcli.cli.common import CliError, open_store
from agentcli.store.store import Store


def apply(store: Store, session_id: str, *, again: bool) -> str:
    """Undo (or redo, ``again``) on a session; the line to show. Raises CliError when refused."""
    from agentcli.session import undo

    try:
        result = (undo.redo if again else undo.undo)(store, session_id)
    except undo.UndoRefused as exc:
        raise CliError(f"cannot {'redo' if again else 'undo'}: {exc}") from None
    files = (
        f" · files: {', '.join(Path(f).name for f in result.files)}"
        if result.files
        else " · no files changed"
    )
    first = result.prompt.splitlines()[0] if result.prompt else ""
    return f"{'redone' if again else 'undone'}: “{first[:60]}”{files}"


def undo_command(ref: str | None, *, again: bool) -> None:
    store = open_store()
    session_id = resolve_session(store, ref, cont=ref is None, directory=Path.cwd())
    if session_id is None:
        raise CliError("no session here")
    print(apply_undo(store, session_id, again=again))
