"""``agentcli compact [SESSION] [--focus ...] [--undo]``: a manual compaction (or undoing the last one),
with progress and the result line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from agentcli.cli.common import CliError
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.setup import loop_for_session
from agentcli.cli.worker import Turn


def undo(loop: Any, session_id: str) -> str:
    """Undo the session's last compaction; the line to show. Raises CliError when refused."""
    from agentcli.session.uncompact import UndoRefused, undo_last_compaction
    from agentcli.ui.fmt import format_tokens

    def estimate(window: list[Any]) -> int:
        return int(loop.build_request(session_id, window).tokens)

    try:
        done = undo_last_compaction(loop.store, session_id, estimate=estimate, usable=loop.usable())
    except UndoRefused as exc:
        raise CliError(f"cannot undo: {exc}") from None
    budget = f" of {format_tokens(done.usable)} usable" if done.usable else ""
    return f"compaction undone: the full history is back in the window (~{format_tokens(done.tokens)} tokens{budget})"


def compact_session(
    ref: str | None, *, focus: str | None, model: str | None, api_base: str | None, revert: bool = False
) -> int:
    directory = Path.cwd()
    loop, session_id = loop_for_session(ref, model=model, api_base=api_base, missing="no session to compact")
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    renderer = TurnRenderer(err, err, cwd=directory)
    if revert:
        err.print(undo(loop, session_id))
        return 0
    loop.bus.subscribe(renderer)
    turn = Turn()
    turn.run(lambda abort: loop.compact(session_id, focus=focus, abort=abort))
    if turn.cancelled:
        return 130
    if renderer.notes.already_compacted:
        return 0  # one compaction at a time: the other agent's is the one asked for
    if not renderer.notes.compacted:
        return 1
    err.print(gauge_for(loop, session_id, renderer.notes))
    return 0
