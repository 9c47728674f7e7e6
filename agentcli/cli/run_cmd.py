"""``agentcli run "message"``: one turn, non-interactively, like ``opencode run``.

stdout carries the answer (raw text when piped, rendered markdown on a terminal) or JSON lines with
``--format json``; tool lines, notices and the gauge go to stderr. Exit 0 on success, 1 when the
turn ended in an error, 130 when cancelled.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from agentcli.cli.common import CliError, is_tty, load_config, open_store
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.setup import build_loop, resolve_session
from agentcli.cli.worker import Turn
from agentcli.session import events

TITLE_WAIT = 3.0  # seconds to let the background title request land before exiting


class _JsonListener:
    """``run --format json``: one JSON object per line. A compaction's summary is its own event
    type ("summary"), so a script joining "text" events gets only the answer."""

    def __init__(self) -> None:
        self.summary = False  # the step streaming now writes a compaction summary

    def __call__(self, event: Any) -> None:
        if isinstance(event, events.StepStarted):
            self.summary = event.message.summary
        elif isinstance(event, events.CompactionFinished | events.CompactionFailed):
            self.summary = False
        if isinstance(event, events.TextEnded) and not event.reasoning and self.summary:
            _emit({"type": "summary", "part_id": event.part_id, "text": event.text})
        elif isinstance(event, events.ErrorOccurred) and self.summary:
            return  # a failed summary is told by its "compaction_failed" event
        else:
            _json_event(event)


def _emit(out: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def _json_event(event: Any) -> None:
    out: dict[str, Any] | None = None
    if isinstance(event, events.TextEnded) and not event.reasoning:
        out = {"type": "text", "part_id": event.part_id, "text": event.text}
    elif isinstance(event, events.ToolUpdated) and event.part.state.status in ("completed", "error"):
        out = {"type": "tool", "part": event.part.model_dump(mode="json")}
    elif isinstance(event, events.StepFinished):
        out = {"type": "step_finish", "message_id": event.message.id, "tokens": event.message.tokens.model_dump(),
               "cost": event.message.cost, "finish": event.message.finish}
    elif isinstance(event, events.ErrorOccurred):
        out = {"type": "error", "kind": event.kind, "message": event.message}
    elif isinstance(event, events.CompactionFinished):
        out = {"type": "compacted", "auto": event.auto, "overflow": event.overflow, "tokens_before": event.tokens_before,
               "tokens_after": event.tokens_after, "cost": event.cost, "fallback": event.fallback}
    elif isinstance(event, events.CompactionFailed):
        out = {"type": "compaction_failed", "message": event.message}
    elif isinstance(event, events.Pruned):
        out = {"type": "pruned", "tokens": event.tokens, "parts": event.parts}
    if out is not None:
        _emit(out)


def run_once(text: str, *, model: str | None, session: str | None, cont: bool, api_base: str | None,
             yes: bool, fmt: str) -> int:
    if fmt not in ("text", "json"):
        raise CliError(f"--format must be text or json, not '{fmt}'", 2)
    if not text.strip():
        raise CliError("the message is empty", 2)
    directory = Path.cwd()
    loaded = load_config(directory)
    store = open_store()
    session_id = resolve_session(store, session, cont, directory)
    loop = build_loop(loaded, store, model=model, api_base=api_base, yes=yes, asker=None, directory=directory)
    if session_id is None:
        session_id = store.create_session(str(directory), loop.model.name).id

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    renderer = TurnRenderer(Console(highlight=False), err, cwd=directory, raw_stdout=not is_tty(sys.stdout),
                            show_reasoning=is_tty(sys.stdout))
    loop.bus.subscribe(_JsonListener() if fmt == "json" else renderer)
    if fmt == "json":
        loop.bus.subscribe(lambda e: renderer.notes.errors.append(e.message) if isinstance(e, events.ErrorOccurred) else None)
    turn = Turn()
    last = turn.run(lambda abort: loop.prompt(session_id, text, abort))
    if loop.title_thread is not None:
        loop.title_thread.join(TITLE_WAIT)

    if turn.cancelled:
        err.print("cancelled")
        return 130
    failed = last is None or last.error is not None
    if fmt == "json":
        info = store.get_session(session_id)
        sys.stdout.write(json.dumps({
            "type": "result", "session_id": session_id, "message_id": last.id if last else None,
            "error": last.error.model_dump() if last and last.error else None,
            "tokens": info.tokens.model_dump(), "cost": info.cost, "context_tokens": info.context_tokens,
        }) + "\n")
    elif is_tty(sys.stderr):
        err.print(gauge_for(loop, session_id, renderer.notes))
    if failed and last is not None and last.error is not None and fmt == "text" and not renderer.notes.errors:
        err.print(f"[bold red]error:[/] {last.error.message}")
    if failed:
        err.print(f"session {session_id} kept; continue it with: agentcli run --session {session_id} \"...\"", style="dim")
    return 1 if failed else 0
