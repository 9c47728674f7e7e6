"""What a command and its slash-command twin in the chat share: undo/redo a turn (``agentcli undo``,
``/undo``), undo the last compaction (``agentcli compact --undo``, ``/compact undo``) and the context
view (``agentcli context``, ``/context``). Each returns what to show, or raises CliError."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType

from agentcli.app.errors import CliError
from agentcli.store.store import Store

if TYPE_CHECKING:  # built by the command (it imports the session lazily)
    from agentcli.session.runtime import SessionRuntime


def apply_undo(store: Store, session_id: str, *, again: bool) -> str:
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


def undo_compaction(runtime: SessionRuntime, session_id: str) -> str:
    """Undo the session's last compaction; the line to show. Raises CliError when refused."""
    from agentcli.session.compaction.uncompact import UndoRefused, undo_last_compaction
    from agentcli.ui.fmt import format_tokens

    def estimate(window: list[Any]) -> int:
        return int(runtime.build_request(session_id, window).tokens)

    try:
        done = undo_last_compaction(runtime.store, session_id, estimate=estimate, usable=runtime.usable())
    except UndoRefused as exc:
        raise CliError(f"cannot undo: {exc}") from None
    budget = f" of {format_tokens(done.usable)} usable" if done.usable else ""
    tokens = format_tokens(done.tokens)
    return f"compaction undone: the full history is back in the window (~{tokens} tokens{budget})"


def context_renderable_for(runtime: SessionRuntime, session_id: str) -> RenderableType:
    from agentcli.session.request.context_report import report
    from agentcli.ui.context_view import context_renderable

    return context_renderable(report(runtime, session_id), runtime.model.name)
