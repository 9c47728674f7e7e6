"""``/undo`` and ``/redo`` (and ``agentcli undo``): the last turn's file changes are reverted and the
turn is hidden from the model; redo puts both back.

A turn is a user message the user typed and everything after it. Undoing restores each file an
edit or write changed to its content before the turn (``ToolState.change``), newest change first,
and hides the turn: the user's text parts become ``ignored`` and the answers get a ``TurnUndone``
error (errored answers are not sent). Nothing is deleted. A file changed on disk since the turn
wrote it is not overwritten: the whole undo is refused and nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentcli.store.records import AssistantMessage, FileChange, MessageError, TextPart, ToolPart, WithParts
from agentcli.store.store import Store

UNDONE = "TurnUndone"
REDO_KEY = "redo"  # session state: [{message_id, files: {path: content | None}}], the undone turns' results


class UndoRefused(Exception):
    pass


@dataclass(frozen=True)
class Result:
    prompt: str  # the text of the turn's user message
    files: list[str]


def _typed(msg: WithParts) -> bool:
    return (
        msg.role == "user"
        and msg.compaction() is None
        and any(isinstance(p, TextPart) and not p.synthetic and p.text for p in msg.parts)
    )


def _undone(msg: WithParts) -> bool:
    return all(p.ignored for p in msg.parts if isinstance(p, TextPart) and not p.synthetic)


def _turns(messages: list[WithParts]) -> list[list[WithParts]]:
    starts = [i for i, m in enumerate(messages) if _typed(m)]
    ends = [*starts[1:], len(messages)] if starts else []  # no turn yet: none (not a crash)
    return [messages[a:b] for a, b in zip(starts, ends, strict=True)]


def _changes(turn: list[WithParts]) -> list[FileChange]:
    return [
        p.state.change
        for m in turn
        for p in m.parts
        if isinstance(p, ToolPart) and p.state.status == "completed" and p.state.change is not None
    ]


def _current(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return None


def _check(expected: dict[str, str | None]) -> None:
    """``expected``: path → the sha256 the file must have now (None: it must not exist)."""
    for path, digest in expected.items():
        now = _current(Path(path))
        if (now is None) != (digest is None) or (now is not None and FileChange.digest(now) != digest):
            raise UndoRefused(f"{path} changed on disk since; nothing was undone or redone")


def _write(path: str, content: str | None) -> None:
    target = Path(path)
    if content is None:
        target.unlink(missing_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8", newline="")


def _mark(store: Store, turn: list[WithParts], hidden: bool) -> None:
    for msg in turn:
        if msg.role == "user":
            for part in msg.parts:
                if isinstance(part, TextPart) and part.ignored != hidden:
                    store.put_part(part.model_copy(update={"ignored": hidden}))
        elif isinstance(msg.info, AssistantMessage):
            error = MessageError(name=UNDONE, message="undone by the user") if hidden else None
            if hidden or (msg.info.error is not None and msg.info.error.name == UNDONE):
                store.put_message(msg.info.model_copy(update={"error": error}))


def _prompt_text(turn: list[WithParts]) -> str:
    return "\n".join(p.text for p in turn[0].parts if isinstance(p, TextPart) and not p.synthetic)


def undo(store: Store, session_id: str) -> Result:
    turns = [t for t in _turns(store.messages(session_id)) if not _undone(t[0])]
    if not turns:
        raise UndoRefused("nothing to undo")
    turn = turns[-1]
    if any(isinstance(m.info, AssistantMessage) and m.info.summary for m in turn):
        raise UndoRefused("the last turn compacted the session: undo the compaction first (/compact undo)")
    changes = _changes(turn)
    first: dict[str, str | None] = {}
    last: dict[str, str] = {}
    for change in changes:
        first.setdefault(change.path, change.before)
        last[change.path] = change.after_sha256
    _check(dict(last))
    # What redo will write back: the files as the turn left them (checked above to be unchanged).
    stack = store.get_state(session_id, REDO_KEY, []) or []
    stack.append({"message_id": turn[0].id, "files": {path: _current(Path(path)) for path in first}})
    store.set_state(session_id, REDO_KEY, stack)
    for path, before in first.items():
        _write(path, before)
    _mark(store, turn, hidden=True)
    return Result(_prompt_text(turn), list(first))


def redo(store: Store, session_id: str) -> Result:
    turns = _turns(store.messages(session_id))
    trailing: list[list[WithParts]] = []
    for turn in reversed(turns):
        if not _undone(turn[0]):
            break
        trailing.insert(0, turn)
    if not trailing:
        raise UndoRefused("nothing to redo")
    turn = trailing[0]  # undone last, so redone first
    changes = _changes(turn)
    before: dict[str, str | None] = {}
    for change in changes:
        before.setdefault(change.path, change.before)
    _check({p: (FileChange.digest(b) if b is not None else None) for p, b in before.items()})
    stack = store.get_state(session_id, REDO_KEY, []) or []
    entry = next((e for e in reversed(stack) if e.get("message_id") == turn[0].id), None)
    if entry is None and before:
        raise UndoRefused("the files this turn wrote were not kept; nothing was redone")
    for path, content in (entry or {}).get("files", {}).items():
        _write(path, content)
    store.set_state(session_id, REDO_KEY, [e for e in stack if e is not entry])
    _mark(store, turn, hidden=False)
    return Result(_prompt_text(turn), list(before))
