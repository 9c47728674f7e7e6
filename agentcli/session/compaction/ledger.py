"""The ledger of a session's artifacts, built from the records, never from a model: files read,
edited, written and deleted, commands run, failures not yet resolved, the todo list.

Incremental: ``fold`` takes the ledger the previous compaction stored and only the messages newer
than it (``Ledger.through``), so building it costs what the window costs, not the session's age.
Pure functions over records; the data types and their text are ``agentcli.store.artifacts``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agentcli.store.artifacts import CommandEntry, ErrorEntry, FileEntry, Ledger, LoadedSkill, TodoEntry
from agentcli.store.records import AssistantMessage, FileDiff, ToolPart, WithParts

MAX_FILES = 50
MAX_COMMANDS = 40
MAX_ERRORS = 10
MAX_TODOS = 50
COMMAND_CHARS = 200  # a long command is kept to its start
ERROR_CHARS = 200
SKILL_CHARS = 8_000  # per skill (about 2,000 tokens)
MAX_SKILLS = 5

_FILE_TOOLS = frozenset({"read", "edit", "write"})
_REMOVERS = re.compile(r"(?:^|[\s;&|(])(?:rm|unlink|git\s+rm)\s")
_NOT_RUN = "Not run:"  # the doom-loop guard's and the step limit's own refusals: not the work's errors


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _relative(path: str, directory: str | None) -> str:
    """A path as the user would say it: relative to the project when it lies inside it."""
    if directory and os.path.isabs(path):
        rel = os.path.relpath(path, directory)
        if not rel.startswith(".."):
            return rel
    return path


@dataclass
class _Building:
    """A ledger being folded: entries by key, insertion order kept, so an update is O(1)."""

    directory: str | None
    files: dict[str, FileEntry] = field(default_factory=dict)
    commands: dict[str, CommandEntry] = field(default_factory=dict)
    errors: dict[str, ErrorEntry] = field(default_factory=dict)
    todos: list[TodoEntry] | None = None
    more: dict[str, int] = field(default_factory=dict)
    through: str | None = None

    @classmethod
    def start(cls, previous: Ledger | None, directory: str | None) -> _Building:
        b = cls(directory)
        if previous is not None:
            # Stored newest first: put back oldest first, so later touches move an entry to the end.
            b.files = {f.path: f.model_copy() for f in reversed(previous.files)}
            b.commands = {c.command: c.model_copy() for c in reversed(previous.commands)}
            b.errors = {e.key: e.model_copy() for e in reversed(previous.errors)}
            b.todos = [t.model_copy() for t in previous.todos] if previous.todos is not None else None
            b.more = {"files": previous.more_files, "commands": previous.more_commands}
            b.more["errors"] = previous.more_errors
            b.through = previous.through
        return b

    def file(self, path: str, when: int) -> FileEntry:
        key = _relative(path, self.directory)
        entry = self.files.pop(key, None) or FileEntry(path=key)
        entry.last = max(entry.last, when)
        self.files[key] = entry  # now the newest
        return entry

    def fail(self, key: str, tool: str, subject: str, message: str, when: int) -> None:
        self.errors.pop(key, None)
        self.errors[key] = ErrorEntry(
            key=key, tool=tool, subject=subject, message=_one_line(message, ERROR_CHARS), last=when
        )

    def resolve(self, *keys: str) -> None:
        for key in keys:
            self.errors.pop(key, None)

    def ledger(self) -> Ledger:
        files, more_files = _newest(self.files, MAX_FILES)
        commands, more_commands = _newest(self.commands, MAX_COMMANDS)
        errors, more_errors = _newest(self.errors, MAX_ERRORS)
        return Ledger(
            files=files,
            commands=commands,
            errors=errors,
            todos=self.todos,
            more_files=self.more.get("files", 0) + more_files,
            more_commands=self.more.get("commands", 0) + more_commands,
            more_errors=self.more.get("errors", 0) + more_errors,
            through=self.through,
        )


def _newest(entries: dict[str, Any], cap: int) -> tuple[list[Any], int]:
    """Newest first (the dict is oldest first), at most ``cap``; and how many were left out."""
    items = list(entries.values())
    items.reverse()
    return items[:cap], max(0, len(items) - cap)


def _when(part: ToolPart) -> int:
    return part.state.time.end or part.state.time.start


def _file_part(b: _Building, part: ToolPart, path: str) -> None:
    state, when = part.state, _when(part)
    key = _relative(path, b.directory)
    if state.status == "error":
        b.file(path, when)
        b.fail(f"{part.tool}:{key}", part.tool, key, state.error or "failed", when)
        return
    entry = b.file(path, when)
    if part.tool == "read":
        entry.reads += 1
        b.resolve(f"read:{key}")
        return
    entry.deleted = False
    if part.tool == "edit":
        entry.edits += 1
        diff = state.meta.filediff or FileDiff()
        entry.change = f"+{diff.additions} −{diff.deletions} lines"
    else:
        entry.writes += 1
        lines = len(str(state.input.get("content", "")).splitlines())
        entry.change = f"{lines} line{'' if lines == 1 else 's'} written"
    b.resolve(f"edit:{key}", f"write:{key}", f"read:{key}")


def _removed_paths(command: str) -> list[str]:
    """The paths an ``rm``/``unlink``/``git rm`` in ``command`` names (options left out)."""
    if not _REMOVERS.search(command):
        return []
    from agentcli.tools.shell_commands import split_commands  # tree-sitter, only for removals

    paths: list[str] = []
    for words in (c.split(" ") for c in split_commands(command).commands):
        args = words[2:] if words[:2] == ["git", "rm"] else words[1:] if words[0] in ("rm", "unlink") else []
        paths += [w for w in args if w and not w.startswith("-")]
    return paths


def _bash_part(b: _Building, part: ToolPart) -> None:
    state, when = part.state, _when(part)
    command = str(state.input.get("command", "")).strip()
    if not command:
        return
    key = _one_line(command, COMMAND_CHARS)
    entry = b.commands.pop(key, None) or CommandEntry(command=key)
    entry.runs += 1
    entry.last = when
    entry.exit = state.meta.exit if state.status == "completed" else None
    b.commands[key] = entry
    if state.status == "completed" and entry.exit == 0:
        b.resolve(f"bash:{key}")
        for path in _removed_paths(command):
            b.file(path, when).deleted = True
        return
    if state.status == "error":
        b.fail(f"bash:{key}", "bash", f"`{key}`", state.error or "failed", when)
    elif entry.exit:
        lines = [line for line in (state.meta.output or "").splitlines() if line.strip()]
        detail = f"exit {entry.exit}" + (f": {lines[-1]}" if lines else "")  # the last line says most
        b.fail(f"bash:{key}", "bash", f"`{key}`", detail, when)


def _todos(part: ToolPart) -> list[TodoEntry] | None:
    raw = part.state.input.get("todos")
    if not isinstance(raw, list):
        return None
    todos = [
        TodoEntry(
            content=_one_line(str(t.get("content", "")), 300),
            status=str(t.get("status", "pending")),
            priority=str(t.get("priority", "")),
        )
        for t in raw
        if isinstance(t, dict)
    ]
    return todos[:MAX_TODOS]


def _other_part(b: _Building, part: ToolPart) -> None:
    state = part.state
    key = f"{part.tool}:{json.dumps(state.input, sort_keys=True)[:COMMAND_CHARS]}"
    if state.status == "error":
        subject = _one_line(json.dumps(state.input, ensure_ascii=False), 120)
        b.fail(key, part.tool, subject, state.error or "failed", _when(part))
        return
    b.resolve(key)
    if part.tool == "todowrite" and (todos := _todos(part)) is not None:
        b.todos = todos


def _delegated(b: _Building, part: ToolPart) -> None:
    """A task's subagent works in a session of its own: the files and commands it touched (its
    ledger, in the task part's metadata) are the parent's too — even when the task failed or was
    cancelled, what it changed stays changed."""
    raw = part.state.meta.ledger
    try:
        theirs = Ledger.model_validate(raw) if raw is not None else None
    except ValidationError:
        return
    if theirs is None:
        return
    for f in reversed(theirs.files):  # oldest first: the newest ends newest
        entry = b.file(f.path, f.last)
        entry.reads += f.reads
        entry.edits += f.edits
        entry.writes += f.writes
        if f.edits or f.writes:
            entry.change, entry.deleted = f.change, f.deleted
            key = _relative(f.path, b.directory)
            b.resolve(f"edit:{key}", f"write:{key}", f"read:{key}")
        entry.deleted = entry.deleted or f.deleted
    for c in reversed(theirs.commands):
        command = b.commands.pop(c.command, None) or CommandEntry(command=c.command)
        command.runs, command.exit, command.last = command.runs + c.runs, c.exit, max(command.last, c.last)
        b.commands[c.command] = command
    b.more["files"] = b.more.get("files", 0) + theirs.more_files
    b.more["commands"] = b.more.get("commands", 0) + theirs.more_commands


def _fold_part(b: _Building, part: ToolPart) -> None:
    state = part.state
    if part.tool == "task" and state.status in ("completed", "error"):
        _delegated(b, part)
    if state.status not in ("completed", "error") or state.interrupted:
        return  # never ran to an end: neither work done nor a failure of the work
    if state.status == "error" and (state.error or "").startswith(_NOT_RUN):
        return
    path = state.input.get("filePath")
    if part.tool in _FILE_TOOLS and isinstance(path, str) and path:
        _file_part(b, part, path)
    elif part.tool == "bash":
        _bash_part(b, part)
    else:
        _other_part(b, part)


def _newer(msgs: Iterable[WithParts], through: str | None) -> list[WithParts]:
    """The model's own steps newer than ``through``, in id (history) order; summaries left out."""
    return sorted(
        (
            m
            for m in msgs
            if isinstance(m.info, AssistantMessage)
            and not m.info.summary
            and (through is None or m.id > through)
        ),
        key=lambda m: m.id,
    )


def fold(previous: Ledger | None, msgs: Iterable[WithParts], *, directory: str | None = None) -> Ledger:
    """``previous`` (None: the session's first compaction, or one made before ledgers existed)
    with the tool calls of ``msgs`` newer than it folded in. ``msgs`` may be any superset of
    the new messages (the window): what ``previous`` already holds is skipped by id."""
    msgs = list(msgs)
    b = _Building.start(previous, directory)
    for msg in _newer(msgs, b.through):
        for part in msg.parts:
            if isinstance(part, ToolPart):
                _fold_part(b, part)
    newest = max((m.id for m in msgs), default=None)
    if newest is not None and (b.through is None or newest > b.through):
        b.through = newest
    return b.ledger()


# --- skills --------------------------------------------------------------------------------------


def loaded_skills(
    previous: list[LoadedSkill], msgs: Iterable[WithParts], through: str | None
) -> list[LoadedSkill]:
    """The skills loaded so far, newest first, each body capped: ``previous`` and the skill calls
    of ``msgs`` newer than ``through``. A skill loaded again replaces its earlier body."""
    by_name = {s.name: s for s in reversed(previous)}
    for msg in _newer(msgs, through):
        for part in msg.parts:
            if isinstance(part, ToolPart) and part.tool == "skill" and part.state.status == "completed":
                name = str(part.state.meta.name or part.state.input.get("name") or "skill")
                body = part.state.output
                by_name.pop(name, None)
                by_name[name] = LoadedSkill(
                    name=name,
                    body=body[:SKILL_CHARS],
                    cut=max(0, len(body) - SKILL_CHARS),
                    message_id=msg.id,
                )
    skills = list(by_name.values())
    skills.reverse()
    return skills[:MAX_SKILLS]
