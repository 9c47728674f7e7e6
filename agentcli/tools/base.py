"""What a tool is and what it is handed when it runs.

A tool never talks to the UI or the database directly: everything outside the file system
reaches it through ``ToolContext`` (permission questions, file-read times, todos), so the loop
decides how those are answered (interactive chat, ``--yes``, config, tests).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agentcli.store.records import Attachment, FileChange, SessionNotice
from agentcli.tools.params import params_schema, problems, validate

if TYPE_CHECKING:
    from agentcli.tools.sandbox import Sandboxing

PermissionAnswer = Literal["once", "always", "deny"]


class ToolError(Exception):
    """A failure the model should see as the tool's error result (the loop goes on). ``metadata``:
    kept on the failed call's part, as a result's is (a failed task's session, what it touched)."""

    def __init__(self, message: str = "", metadata: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.metadata = metadata or {}


class PermissionDenied(ToolError):
    pass


@dataclass
class PermissionRequest:
    tool: str  # "bash" | "edit" | "write" | "webfetch" | "external_directory" | "read" | "private_network"
    title: str  # one line for the user: the command, or the path being changed
    patterns: list[str] = field(default_factory=list)  # what "always" remembers, e.g. ["git status*"]
    metadata: dict[str, Any] = field(default_factory=dict)  # e.g. {"diff": "..."} for edits
    unsure: list[str] = field(default_factory=list)  # why rules alone cannot allow it (then it is asked)
    # Subjects whose command is known but not every word (a variable, xargs's input, a git alias): a
    # rule that is not "allow" and names their command might match them once they run.
    partial: list[str] = field(default_factory=list)
    # Commands a program of the line may run through its arguments ("" is anything): a rule that is not
    # "allow" and names one of them (its first word spelled out) concerns the request.
    maybe: list[str] = field(default_factory=list)
    # The action when no rule names this key; None: the key's own default (see session.permission).
    # MCP tools are allowed unless configured otherwise, as in OpenCode.
    default: Literal["allow", "ask", "deny"] | None = None
    # An edit's or write's whole file, before (None: a new file) and after: a client shows the change
    # as a diff of the file, its lines numbered as the file's. Not in ``metadata``: plugins get that.
    texts: tuple[str | None, str] | None = None


class FileTimes(Protocol):
    """Bookkeeping so edits refuse files changed on disk since the session last read them."""

    def record_read(self, path: Path) -> None: ...

    def last_read(self, path: Path) -> float | None:  # mtime recorded at the last read, or None
        ...


class FileAccess(Protocol):
    """Another holder of files' text than the disk: an editor's buffers (over ACP), where unsaved
    changes live. The tools read and write in-project text files through it when the loop gives one."""

    def read_text(self, path: Path) -> str | None:  # None: not held there, read the disk
        ...

    def write_text(self, path: Path, text: str) -> bool:  # False: not taken there, write the disk
        ...


class Todos(Protocol):
    def get(self) -> list[dict[str, Any]]: ...

    def set(self, todos: list[dict[str, Any]]) -> None: ...


class Formatting(Protocol):
    def apply(self, path: Path, root: Path) -> list[str]:  # the formatters that changed the file
        ...


@dataclass
class ToolContext:
    session_id: str
    message_id: str
    call_id: str
    directory: Path  # the session's working directory; relative paths resolve against it
    ask: Callable[[PermissionRequest], PermissionAnswer]  # raises nothing; "deny" means refuse
    file_times: FileTimes
    todos: Todos
    output_dir: Path  # where full outputs of truncated results are saved
    abort: threading.Event = field(default_factory=threading.Event)
    max_lines: int = 2000
    max_bytes: int = 50 * 1024
    skill_dirs: list[Path] = field(default_factory=list)
    project: Path | None = None  # the project root (git root); None: the session's directory
    env: dict[str, str] = field(default_factory=dict)  # added to bash's environment (plugins' shell_env)
    files: FileAccess | None = None  # None: files are read and written on disk only
    sandbox: Sandboxing | None = None  # the bash tool's confinement (tools/sandbox.py); None: off
    formatters: Formatting | None = None  # run after edit/write (tools/formatters.py); None: none
    # How far a long call has got (done, total or None, message or None), shown while it runs (an
    # MCP server's progress notifications); None: nobody is watching. Callable from any thread.
    progress: Callable[[float, float | None, str | None], None] | None = None

    @property
    def root(self) -> Path:
        return self.project or self.directory


class ToolHost(Protocol):
    """Where tools come from besides the built-in set: a process's MCP servers
    (``agentcli.mcp.host.McpHost``), as the loop and the ACP server use them."""

    notices: list[SessionNotice]  # servers that failed to start or died, for the sessions they affect

    def tools(self) -> Sequence[Tool[Any]]:  # the tools of the servers ready now
        ...

    def prepare_step(self, first: bool, abort: threading.Event | None = None) -> None:
        """Before a step: the turn's first waits for servers still starting (to their deadlines)."""

    def close(self, wait: float = ...) -> None: ...


@dataclass
class ToolResult:
    output: str
    title: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)
    change: FileChange | None = None  # what an edit or write did to a file, for /undo


P = TypeVar("P", bound=BaseModel)


class Tool(Generic[P]):
    """Subclasses set ``name``, ``description`` and ``params`` (the arguments' pydantic model, from
    which the JSON schema the model sees is generated) and implement ``execute``, which gets the
    validated arguments. Raise ``ToolError`` for failures the model should see."""

    name: str = ""
    description: str = ""
    params: type[P]
    self_truncates: bool = False  # True: the tool cuts its own output (the runner does not)

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as sent to the model."""
        return params_schema(self.params)

    def parse(self, args: dict[str, Any]) -> P:
        """The model's arguments as ``params``; a ToolError naming every problem when they do not fit."""
        try:
            return validate(self.params, args)
        except ValidationError as exc:
            raise ToolError(
                f"Invalid arguments for {self.name}: {problems(exc)}. "
                "Rewrite the input so it satisfies the tool's schema."
            ) from None

    def execute(self, args: P, ctx: ToolContext) -> ToolResult:  # pragma: no cover
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        """The OpenAI function-tool definition sent to the model."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }
