"""What a compaction carries past its summary, taken from the records rather than from the model:
the ledger of the session's artifacts (files, commands, unresolved errors, the todo list), the
user's own messages word for word, and the skills loaded.

Data types and their text only. ``agentcli.session.compaction.ledger`` builds them; the model sees ``render``
after every summary; ``sessions show`` prints the same text; plugins get the types (they may not
import ``session``). Times are integer milliseconds since the epoch.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class FileEntry(_Record):
    """A file the session touched. ``change``: the size of the last edit or write, in words
    ("+4 −1 lines", "120 lines written"); ``deleted``: a later ``rm`` removed it."""

    path: str
    reads: int = 0
    edits: int = 0
    writes: int = 0
    deleted: bool = False
    change: str | None = None
    last: int = 0


class CommandEntry(_Record):
    """A shell command the session ran: how often, and the last run's exit status (None: it was
    killed, timed out or did not say)."""

    command: str
    runs: int = 0
    exit: int | None = None
    last: int = 0


class ErrorEntry(_Record):
    """A failure no later success of the same kind has resolved. ``key`` names what resolves it (a
    successful run of the same command, a successful edit or write of the same file, …)."""

    key: str
    tool: str
    subject: str
    message: str
    last: int = 0


class TodoEntry(_Record):
    content: str
    status: str = "pending"
    priority: str = ""

    @property
    def open(self) -> bool:
        return self.status not in ("completed", "cancelled")


class Ledger(_Record):
    """Newest first, each list capped; ``more_*`` count the older entries left out. ``todos`` is
    None until the model first writes a todo list. ``through``: the newest message folded in (the
    next compaction folds only what is newer)."""

    files: list[FileEntry] = Field(default_factory=list)
    commands: list[CommandEntry] = Field(default_factory=list)
    errors: list[ErrorEntry] = Field(default_factory=list)
    todos: list[TodoEntry] | None = None
    more_files: int = 0
    more_commands: int = 0
    more_errors: int = 0
    through: str | None = None

    def is_empty(self) -> bool:
        return not (self.files or self.commands or self.errors or self.todos)


class KeptMessage(_Record):
    """A user message kept word for word. ``cut``: characters cut off because it alone exceeded
    the budget; ``first``: the session's first message (kept whatever else goes); ``visible``: still
    in the window verbatim after this compaction, so not repeated."""

    message_id: str
    text: str
    cut: int = 0
    first: bool = False
    visible: bool = False


class LoadedSkill(_Record):
    """A skill the model loaded (the skill tool's output), capped; ``visible`` as in KeptMessage."""

    name: str
    body: str
    cut: int = 0
    message_id: str = ""
    visible: bool = False


class Carryover(_Record):
    """Everything a compaction carries past its summary. ``left_out``: user messages dropped for
    the budget (oldest first, never the session's first)."""

    ledger: Ledger = Field(default_factory=Ledger)
    user_messages: list[KeptMessage] = Field(default_factory=list)
    left_out: int = 0
    skills: list[LoadedSkill] = Field(default_factory=list)

    def rekeyed(self, new_ids: dict[str, str]) -> Carryover:
        """The same, naming messages by ``new_ids`` (an import gives messages fresh ids)."""
        through = self.ledger.through
        return self.model_copy(
            update={
                "ledger": self.ledger.model_copy(update={"through": new_ids.get(through or "", through)}),
                "user_messages": [
                    m.model_copy(update={"message_id": new_ids.get(m.message_id, m.message_id)})
                    for m in self.user_messages
                ],
                "skills": [
                    s.model_copy(update={"message_id": new_ids.get(s.message_id, s.message_id)})
                    for s in self.skills
                ],
            }
        )


# --- the text the model (and `sessions show`) gets -----------------------------------------------


def _times(n: int, verb: str) -> str:
    return verb if n == 1 else f"{verb} {n}×"


def _file_line(f: FileEntry) -> str:
    what = [
        _times(n, verb) for n, verb in ((f.reads, "read"), (f.edits, "edited"), (f.writes, "written")) if n
    ]
    if f.deleted:
        what.append("deleted")
    change = f" (last change: {f.change})" if f.change and not f.deleted else ""
    return f"- {f.path}: {', '.join(what) or 'touched'}{change}"


def _command_line(c: CommandEntry) -> str:
    status = "exit ?" if c.exit is None else f"exit {c.exit}"
    runs = f", {c.runs} runs" if c.runs > 1 else ""
    return f"- `{c.command}`: {status}{runs}"


def _more(n: int, what: str) -> list[str]:
    return [f"- ({n} older {what} not listed)"] if n else []


def render_ledger(ledger: Ledger) -> str:
    """The ledger as a block of text; empty when there is nothing in it."""
    if ledger.is_empty():
        return ""
    lines = [
        "<session-ledger>",
        "Taken from the session's records, not from the summary; newest first.",
    ]
    if ledger.files:
        lines += ["Files:", *map(_file_line, ledger.files), *_more(ledger.more_files, "files")]
    if ledger.commands:
        lines += ["Commands:", *map(_command_line, ledger.commands), *_more(ledger.more_commands, "commands")]
    if ledger.errors:
        lines += ["Unresolved errors:"]
        lines += [f"- {e.tool} {e.subject}: {e.message}" for e in ledger.errors]
        lines += _more(ledger.more_errors, "errors")
    if ledger.todos is not None:
        open_ = [t for t in ledger.todos if t.open]
        done = len(ledger.todos) - len(open_)
        lines.append(f"Todo list ({len(open_)} open, {done} done):" if ledger.todos else "Todo list: empty")
        lines += [f"- [{t.status}] {t.content}" + (f" ({t.priority})" if t.priority else "") for t in open_]
    lines.append("</session-ledger>")
    return "\n".join(lines)


def _cut_note(cut: int) -> str:
    return f"\n[… {cut:,} more characters cut]" if cut else ""


def render_user_messages(messages: list[KeptMessage], left_out: int) -> str:
    shown = [m for m in messages if not m.visible]
    if not shown:
        return ""
    older = f" ({left_out} others left out for length)" if left_out else ""
    lines = [
        "<user-messages>",
        f"The user's own earlier messages in this session, word for word, oldest first{older}:",
    ]
    for m in shown:
        lines += ["<message>", m.text + _cut_note(m.cut), "</message>"]
    lines.append("</user-messages>")
    return "\n".join(lines)


def render_skills(skills: list[LoadedSkill]) -> str:
    shown = [s for s in skills if not s.visible]
    if not shown:
        return ""
    lines = ["<loaded-skills>", "Skills loaded earlier in this session; their instructions still apply:"]
    for s in shown:
        lines += [f'<skill name="{s.name}">', s.body + _cut_note(s.cut), "</skill>"]
    lines.append("</loaded-skills>")
    return "\n".join(lines)


def render(carryover: Carryover) -> str:
    """What follows the summary in the model's view: ledger, the user's words, the skills."""
    blocks = (
        render_ledger(carryover.ledger),
        render_user_messages(carryover.user_messages, carryover.left_out),
        render_skills(carryover.skills),
    )
    return "\n\n".join(b for b in blocks if b)


CARRYOVER_TAGS = ("<session-ledger>", "<user-messages>", "<loaded-skills>")


def split_summary(content: str) -> tuple[str, str]:
    """A summary message's content as the model gets it: (the summary text, the carryover block
    after it, "" when there is none). Lets a comparison with OpenCode's requests set it apart."""
    cuts = [i for tag in CARRYOVER_TAGS if (i := content.find("\n\n" + tag)) >= 0]
    if content.startswith(CARRYOVER_TAGS):
        cuts.append(-2)
    if not cuts:
        return content, ""
    at = min(cuts)
    return content[: max(at, 0)], content[at + 2 :]
