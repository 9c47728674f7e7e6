"""``agentcli compact [SESSION] [--focus ...] [--undo]``: a manual compaction (or undoing the last one),
with progress and the result line."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from agentcli.app.actions import undo_compaction
from agentcli.cli.model_choice import loop_for_session
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.worker import Turn
from agentcli.ui.wrap import Wrapped, stderr_console


def compact_session(
    ref: str | None, *, focus: str | None, model: str | None, api_base: str | None, revert: bool = False
) -> int:
    directory = Path.cwd()
    loop, session_id = loop_for_session(
        ref, model=model, api_base=api_base, missing="no session to compact", need_key=not revert
    )
    err = stderr_console()
    renderer = TurnRenderer(err, err, cwd=directory)
    if revert:
        err.print(Wrapped(Text(undo_compaction(loop.runtime, session_id))), soft_wrap=True)
        return 0
    loop.runtime.bus.subscribe(renderer)
    turn = Turn()
    turn.run(lambda abort: loop.compact(session_id, focus=focus, abort=abort))
    if turn.cancelled:
        return 130
    if renderer.notes.already_compacted:
        return 0  # one compaction at a time: the other agent's is the one asked for
    if not renderer.notes.compacted:
        return 1
    err.print(gauge_for(loop.runtime, session_id, renderer.notes))
    return 0
