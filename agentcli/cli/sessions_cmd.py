"""``agentcli sessions list`` / ``show``: read-only, and never imports litellm."""

from __future__ import annotations

import json
import shutil
import sys

from rich.console import Console

from agentcli.cli.common import open_store


def list_sessions(*, as_json: bool, count: int | None) -> None:
    store = open_store()
    rows = store.list_sessions(count)
    if as_json:
        out = [
            {
                "id": s.id, "title": s.title, "directory": s.directory, "model": s.model,
                "created": s.created, "updated": s.updated, "messages": s.messages,
                "tokens": s.tokens.model_dump(), "cost": s.cost,
                "context_tokens": s.context_tokens, "compactions": s.compactions,
            }
            for s in rows
        ]
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    from agentcli.ui.tables import sessions_table

    if not rows:
        sys.stdout.write('no sessions yet: start one with `agentcli chat` or `agentcli run "..."`\n')
        return
    width = shutil.get_terminal_size((120, 24)).columns
    sys.stdout.write("\n".join(sessions_table(rows).lines(width)) + "\n")


def show_session(ref: str, *, as_json: bool, full: bool) -> None:
    from agentcli.ui.transcript import render_transcript, transcript_json

    store = open_store()
    session = store.find_session(ref)
    messages = store.messages(session.id)
    if as_json:
        sys.stdout.write(json.dumps(transcript_json(session, messages), indent=2) + "\n")
        return
    render_transcript(Console(), session, messages, full=full)


def copy_sessions(source: str, target: str, refs: list[str]) -> None:
    from agentcli.store.copy import copy_sessions as copy
    from agentcli.store.db import resolve
    from agentcli.store.store import Store

    src, dst = resolve(source), resolve(target)
    if src == dst:
        raise ValueError("--from and --to name the same database")
    if src.path is not None and not src.path.is_file():
        raise ValueError(f"no database at {src.path}")
    reader = Store(src)
    writer = Store(dst)
    ids = [reader.find_session(ref).id for ref in refs] if refs else None
    result = copy(reader, writer, ids)
    sys.stdout.write(
        f"copied {result.sessions} sessions ({result.messages} messages, {result.parts} parts) "
        f"from {src.display()} to {dst.display()}\n"
    )
