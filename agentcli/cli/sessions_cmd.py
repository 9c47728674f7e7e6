"""``agentcli sessions list|show|delete|rename|export|import`` (never imports litellm)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agentcli.cli.common import CliError, open_store

if TYPE_CHECKING:
    from agentcli.store.records import SessionInfo
    from agentcli.store.store import Store

PAGE = 20  # sessions listed unless -n says otherwise


def list_sessions(*, as_json: bool, count: int | None, everywhere: bool = False) -> None:
    store = open_store()
    limit = count or PAGE
    directory = None if everywhere else str(Path.cwd())
    roots = store.list_sessions(limit + 1, directory=directory, roots=True)
    more = len(roots) > limit
    rows, depths = with_tasks(store, roots[:limit])
    if as_json:
        out = [
            {
                "id": s.id,
                "parent_id": s.parent_id,
                "title": s.title,
                "directory": s.directory,
                "model": s.model,
                "agent": s.agent,
                "created": s.created,
                "updated": s.updated,
                "messages": s.messages,
                "tokens": s.tokens.model_dump(),
                "cost": s.cost,
                "context_tokens": s.context_tokens,
                "compactions": s.compactions,
            }
            for s in rows
        ]
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return
    from agentcli.ui.tables import sessions_table

    if not rows:
        where = "" if everywhere else " in this directory (--all lists every directory's)"
        sys.stdout.write(f'no sessions yet{where}: start one with `agentcli chat` or `agentcli run "..."`\n')
        return
    width = shutil.get_terminal_size((120, 24)).columns
    sys.stdout.write("\n".join(sessions_table(rows, depths=depths).lines(width)) + "\n")
    if more:
        sys.stderr.write(
            f"(the {limit} most recent{'' if everywhere else ' here'}; -n N for more"
            f"{'' if everywhere else ', --all for every directory'})\n"
        )


def with_tasks(store: Store, roots: list[SessionInfo]) -> tuple[list[SessionInfo], dict[str, int]]:
    """The sessions, each followed by its tasks' sessions (and theirs), and how deep each task is."""
    out: list[SessionInfo] = []
    depths: dict[str, int] = {}
    children: dict[str, list[SessionInfo]] = {}
    level = roots
    depth = 0
    while level:
        for session in level:
            depths[session.id] = depth
        found = store.children([s.id for s in level])
        for child in found:
            children.setdefault(child.parent_id or "", []).append(child)
        level, depth = found, depth + 1

    def add(session: SessionInfo) -> None:
        out.append(session)
        for child in children.get(session.id, []):
            add(child)

    for root in roots:
        add(root)
    return out, depths


def show_session(ref: str, *, as_json: bool, full: bool) -> None:
    from agentcli.session.compaction.carryover import current
    from agentcli.session.request.history import filter_compacted
    from agentcli.session.usage import cache_saved
    from agentcli.ui.transcript import render_transcript, transcript_json

    store = open_store()
    session = store.find_session(ref)
    messages = store.messages(session.id)
    # The ledger now: the last compaction's, merged with the window since (messages are read already).
    ledger = current(filter_compacted(reversed(messages)), directory=session.directory or None)
    if as_json:
        sys.stdout.write(json.dumps(transcript_json(session, messages, ledger), indent=2) + "\n")
        return
    saved = cache_saved(messages)  # priced from the bundled map: litellm is not imported
    render_transcript(Console(), session, messages, full=full, ledger=ledger, cache_saved=saved)


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
    for skipped in result.skipped:
        sys.stderr.write(f"agentcli: skipped session {skipped.session_id}: {skipped.reason}\n")
    if result.skipped:
        count = len(result.skipped)
        raise CliError(f"{count} session{'s' * (count != 1)} not copied (named above); the others were")


def delete_session(ref: str, *, yes: bool) -> None:
    store = open_store()
    session = store.find_session(ref)
    label = f"{session.id} '{session.title or 'untitled'}' ({session.messages} messages)"
    if not yes:
        if not sys.stdin.isatty():
            raise CliError(f"not deleting {label} without asking: pass --yes", 2)
        reply = input(f"delete {label}? [y/N] ").strip().lower()
        if reply not in ("y", "yes"):
            sys.stderr.write("kept\n")
            return
    tasks = store.delete_session(session.id)
    also = f" and its {tasks} task session{'s' if tasks != 1 else ''}" if tasks else ""
    sys.stdout.write(f"deleted {label}{also}\n")
    _announce_deleted(store, session)


def _announce_deleted(store: Store, session: SessionInfo) -> None:
    """Publish ``session.deleted`` to the plugins of the session's project, loaded as its loop loads
    them (an untrusted folder's plugins and AGENTCLI_DISABLE_PLUGINS leave nothing to tell)."""
    from agentcli.bus import Bus
    from agentcli.config import ConfigError, project_root
    from agentcli.plugins import host
    from agentcli.plugins.api import ContextFigures
    from agentcli.plugins.manager import Plugins
    from agentcli.session.events import SessionDeleted
    from agentcli.trusted_config import load_config

    directory = (
        Path(session.directory) if session.directory and Path(session.directory).is_dir() else Path.cwd()
    )
    try:
        config = load_config(directory).config
    except ConfigError as exc:  # the session is gone either way; only its plugins are not told
        sys.stderr.write(f"agentcli: plugins not told of the deletion: {exc}\n")
        return
    bus = Bus()
    plugins = Plugins(bus)
    plugins.load(list(config.plugin), project_root(directory))
    idle = host.SessionHost(
        lambda sid: ContextFigures(
            session_id=sid,
            model=session.model or "",
            tokens=0,
            context_limit=0,
            input_limit=0,
            output_limit=0,
            usable=0,
        )
    )
    host.start(
        plugins,
        directory=directory,
        project_root=project_root(directory),
        config=config,
        store=store,
        session=idle,
        builtin=set(),
    )
    bus.publish(SessionDeleted(session.id, session))


def rename_session(ref: str, title: str) -> None:
    if not title.strip():
        raise CliError("the new title is empty", 2)
    store = open_store()
    session = store.find_session(ref)
    store.update_session(session.id, title=title.strip())
    sys.stdout.write(f"{session.id}: {title.strip()}\n")


def export_session(ref: str, *, fmt: str, output: Path | None) -> None:
    if fmt not in ("json", "md", "markdown", "opencode"):
        raise CliError(f"--format must be json, md or opencode, not '{fmt}'", 2)
    from agentcli.session.archive.native import export_session as export

    store = open_store()
    session = store.find_session(ref)
    if fmt == "json":
        text = json.dumps(export(store, session.id), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "opencode":
        from agentcli.session.archive.model import SessionArchive
        from agentcli.session.archive.opencode_export import to_opencode

        archive = SessionArchive.model_validate(export(store, session.id))
        text = json.dumps(to_opencode(archive), indent=2, ensure_ascii=False) + "\n"
    else:
        from agentcli.ui.markdown_export import session_markdown

        text = session_markdown(session, store.messages(session.id))
    if output is None:
        sys.stdout.write(text)
        return
    # Sessions hold code and command output: the file is private, like the database.
    fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    sys.stderr.write(f"exported {session.id} to {output}\n")


def import_session(source: str, *, here: bool) -> None:
    from agentcli.session.archive.native import ArchiveError, import_archive, parse

    try:
        raw = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror or exc}", 2) from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CliError(f"{source} is not JSON ({exc.msg} at line {exc.lineno})", 2) from None
    store = open_store()
    try:
        info = import_archive(store, parse(data), directory=str(Path.cwd()) if here else None)
    except ArchiveError as exc:
        raise CliError(str(exc), 2) from None
    sys.stdout.write(
        f"imported {info.id} '{info.title or 'untitled'}' ({info.messages} messages); "
        f"continue it with: agentcli chat --session {info.id}\n"
    )
