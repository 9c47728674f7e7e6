"""The records of a session, in the shape of OpenCode's MessageV2: pydantic models.

These are what every layer passes around. The SQL tables (``tables.py``) keep the indexed
columns separately and store the rest of each record as validated JSON.
Times are integer milliseconds since the epoch.
"""

from __future__ import annotations

import hashlib
import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentcli.store.artifacts import Carryover


def now_ms() -> int:
    return int(time.time() * 1000)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


def _lift_flags(data: Any, flags: tuple[str, ...]) -> Any:
    """Rows written before a flag was a typed field kept it in ``metadata``: move it to the field."""
    if not isinstance(data, dict):
        return data
    metadata = data.get("metadata")
    if not isinstance(metadata, dict) or not any(key in metadata for key in flags):
        return data
    metadata = dict(metadata)
    lifted = {key: metadata.pop(key) for key in flags if key in metadata}
    return {**data, **{k: v for k, v in lifted.items() if k not in data}, "metadata": metadata}


# --- usage --------------------------------------------------------------------------------


class CacheTokens(_Record):
    read: int = 0
    write: int = 0


class Tokens(_Record):
    """Token usage as OpenCode stores it: ``input`` excludes cached tokens, ``output`` excludes
    reasoning, ``total`` is prompt + completion of the step (what the overflow check counts)."""

    total: int = 0
    input: int = 0
    output: int = 0
    reasoning: int = 0
    cache: CacheTokens = Field(default_factory=CacheTokens)
    # The provider reported no usage for this step: the figures are agentcli's estimate (4 characters a
    # token), kept for the gauge and the overflow check, never added to the session's billed totals.
    estimated: bool = False

    def count(self) -> int:
        """The figure the overflow check compares: total, or the sum of the components."""
        return self.total or (self.input + self.output + self.cache.read + self.cache.write)

    def add(self, other: Tokens) -> Tokens:
        return Tokens(
            total=self.total + other.total,
            input=self.input + other.input,
            output=self.output + other.output,
            reasoning=self.reasoning + other.reasoning,
            cache=CacheTokens(
                read=self.cache.read + other.cache.read, write=self.cache.write + other.cache.write
            ),
        )


# --- session ------------------------------------------------------------------------------


class SessionNotice(_Record):
    """Something that happened beside the conversation and changed what the session could do (an MCP
    server that failed to start or died): the one line the user was told, kept for ``sessions show``.
    Never part of what the model is sent."""

    key: str  # unique per incident: recorded once in each session it affected
    time: int = Field(default_factory=now_ms)  # when it happened
    kind: Literal["mcp"] = "mcp"
    subject: str  # the server's name
    agent: str | None = None  # the agent whose own server it is (None: the config's `mcp`)
    text: str


class LearnedWindow(_Record):
    """A model's context window as its provider's overflow error named it (or as its server was seen
    to cut a prompt): the session keeps it, so that a continued session never hits it again."""

    model: str
    tokens: int
    source: str = ""


class SessionInfo(_Record):
    id: str
    title: str = ""
    directory: str = ""
    parent_id: str | None = None  # a task's session: the session whose agent started it
    model: str | None = None
    agent: str | None = None  # the agent that answers in it (None: sessions from before agents)
    created: int = Field(default_factory=now_ms)
    updated: int = Field(default_factory=now_ms)
    # Totals, maintained by the store as assistant messages finish.
    cost: float = 0.0
    tokens: Tokens = Field(default_factory=Tokens)
    messages: int = 0
    # Context gauge facts: tokens of the last request, number of compactions made.
    context_tokens: int = 0
    context_estimated: bool = False  # context_tokens is an estimate: the provider reported no usage
    compactions: int = 0
    notices: list[SessionNotice] = Field(default_factory=list)  # oldest first
    window: LearnedWindow | None = None  # learned from the provider (agentcli.session.window)


# --- messages -----------------------------------------------------------------------------


class MessageError(_Record):
    """``name`` is one of OpenCode's error names: MessageAbortedError, ContextOverflowError,
    APIError, ProviderAuthError, MessageOutputLengthError, UnknownError."""

    name: str
    message: str
    status: int | None = None
    retryable: bool = False
    response_body: str | None = None


class UserMessage(_Record):
    role: Literal["user"] = "user"
    id: str
    session_id: str
    created: int = Field(default_factory=now_ms)
    agent: str = "build"
    model: str | None = None


class AssistantMessage(_Record):
    role: Literal["assistant"] = "assistant"
    id: str
    session_id: str
    parent_id: str
    created: int = Field(default_factory=now_ms)
    completed: int | None = None
    agent: str = "build"
    mode: str = "build"
    model: str | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost: float = 0.0
    finish: str | None = None
    error: MessageError | None = None
    summary: bool = False


Message = Annotated[UserMessage | AssistantMessage, Field(discriminator="role")]


# --- parts --------------------------------------------------------------------------------


class _PartBase(_Record):
    id: str
    session_id: str
    message_id: str


class PartTime(_Record):
    start: int = Field(default_factory=now_ms)
    end: int | None = None


class TextPart(_PartBase):
    """agentcli's own flags are typed fields; ``metadata`` is left to plugins and providers.
    ``replay_of``: this re-sends that user message after an overflow compaction (the model view
    drops the original). ``fallback``: a summary made without a model. ``compaction_continue``: the
    synthetic "continue" after an automatic compaction. ``from_reasoning``: a summary text taken
    from a reasoning model's reasoning."""

    type: Literal["text"] = "text"
    text: str = ""
    synthetic: bool = False
    ignored: bool = False
    time: PartTime | None = None
    replay_of: str | None = None
    fallback: bool = False
    compaction_continue: bool = False
    from_reasoning: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _old_metadata_flags(cls, data: Any) -> Any:
        return _lift_flags(data, ("replay_of", "fallback", "compaction_continue", "from_reasoning"))


class ReasoningPart(_PartBase):
    type: Literal["reasoning"] = "reasoning"
    text: str = ""
    time: PartTime = Field(default_factory=PartTime)
    metadata: dict[str, Any] = Field(default_factory=dict)


class FileSource(_Record):
    type: str = "file"
    path: str = ""
    text: str = ""


class FilePart(_PartBase):
    type: Literal["file"] = "file"
    mime: str
    filename: str | None = None
    url: str
    source: FileSource | None = None


class ToolTime(_Record):
    start: int = Field(default_factory=now_ms)
    end: int | None = None
    compacted: int | None = None  # set by pruning: the output is hidden from the model


class Attachment(_Record):
    mime: str
    filename: str | None = None
    url: str


class FileChange(_Record):
    """A file edit/write changed: its content before (None: the file did not exist) and a hash of
    what was written, so ``/undo`` can restore it and refuse when the file changed since."""

    path: str
    before: str | None = None
    after_sha256: str = ""

    @staticmethod
    def digest(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @classmethod
    def made(cls, path: Any, before: str | None, after: str) -> FileChange:
        return cls(path=str(path), before=before, after_sha256=cls.digest(after))


class FileDiff(_Record):
    """What an edit changed in a file (OpenCode's ``filediff``)."""

    file: str = ""
    patch: str = ""
    additions: int = 0
    deletions: int = 0


class ToolMetadata(BaseModel):
    """The keys agentcli's tools write in a tool call's ``metadata``, typed. Stored under OpenCode's JSON
    names (the aliases), so old sessions read as they are; other keys (a plugin's, an MCP server's, a
    tool's own such as read's ``preview``) are kept as they are. Write with ``dump()``; read a stored
    dict with ``of()`` (``ToolState.meta``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    truncated: bool | None = None  # the output was cut (the whole of it saved at ``output_path``)
    output_path: str | None = Field(None, alias="outputPath")
    output: str | None = None  # bash: the command's own output, without the notes for the model
    exit: int | None = None  # bash: the exit code (None: it did not exit by itself)
    description: str | None = None  # bash
    timed_out: bool | None = Field(None, alias="timedOut")  # bash
    aborted: bool | None = None  # bash: the user stopped it
    diff: str | None = None  # edit, write: the unified diff
    filediff: FileDiff | None = None  # edit
    todos: list[dict[str, Any]] | None = None  # todowrite
    name: str | None = None  # skill: the skill loaded
    session_id: str | None = Field(None, alias="sessionId")  # task: the subagent's session
    agent: str | None = None  # task
    note: str | None = None  # task: what the subagent touched
    ledger: dict[str, Any] | None = None  # task: the subagent's ledger (files, commands)

    @classmethod
    def of(cls, metadata: dict[str, Any]) -> ToolMetadata:
        """A stored ``metadata`` dict, typed; a key whose value does not fit (written by a plugin) is
        left out of the typed fields rather than failing the read."""
        data = dict(metadata)
        for _ in range(len(cls.model_fields) + 1):
            try:
                return cls.model_validate(data)
            except ValidationError as exc:
                bad = {e["loc"][0] for e in exc.errors() if e["loc"]}
                data = {k: v for k, v in data.items() if k not in bad}
        return cls()

    def dump(self) -> dict[str, Any]:
        """The fields given (None included, when given) and the extra keys, under their JSON names."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class ToolState(_Record):
    """One model for OpenCode's pending / running / completed / error tool states."""

    status: Literal["pending", "running", "completed", "error"] = "pending"
    input: dict[str, Any] = Field(default_factory=dict)
    raw: str = ""  # the raw argument text as the model streamed it
    output: str = ""
    error: str | None = None
    title: str = ""
    # The call was cut short (the user aborted, or the process died): its partial output, if the
    # tool left one in ``metadata["output"]``, is still its result.
    interrupted: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    time: ToolTime = Field(default_factory=ToolTime)
    attachments: list[Attachment] = Field(default_factory=list)
    change: FileChange | None = None  # set by edit and write

    @model_validator(mode="before")
    @classmethod
    def _old_metadata_flags(cls, data: Any) -> Any:
        return _lift_flags(data, ("interrupted",))

    @property
    def meta(self) -> ToolMetadata:
        """``metadata`` typed (its known keys)."""
        return ToolMetadata.of(self.metadata)


class ToolPart(_PartBase):
    type: Literal["tool"] = "tool"
    call_id: str
    tool: str
    state: ToolState = Field(default_factory=ToolState)


class CompactionDiagnostics(_Record):
    """How a compaction went, kept on its marker (``sessions show``). Tokens are estimates of the
    window as the model sees it; ``request_tokens`` is the last summary request's size."""

    tokens_before: int = 0
    tokens_after: int = 0
    request_tokens: int = 0
    attempts: int = 0  # summary requests sent
    fallback: bool = False  # made without a model
    fallback_reason: str | None = None
    duration_ms: int = 0
    background: bool = False  # the summary was written in the background and swapped in
    summary_ms: int = 0  # how long the summary took to write (in the background: asked for to ready)
    summarizer: str | None = None  # the model that wrote it (its latency paces the next sessions')


class CompactionPart(_PartBase):
    """The marker of a compaction. ``tail_start_id``: first message kept verbatim after the summary.
    ``focus``: what a manual compaction asked the summary to keep. ``diagnostics``: written when
    the compaction is done."""

    type: Literal["compaction"] = "compaction"
    auto: bool = False
    overflow: bool = False
    resume: bool = False  # asked for mid-turn (memory_compact, a plugin): the turn goes on after it
    tail_start_id: str | None = None
    focus: str | None = None
    diagnostics: CompactionDiagnostics | None = None


class CarryoverPart(_PartBase):
    """On a compaction's summary message: what it carries past the summary, from the records
    (``agentcli.store.artifacts``). The model sees it right after the summary text."""

    type: Literal["carryover"] = "carryover"
    carryover: Carryover = Field(default_factory=Carryover)


class StepStartPart(_PartBase):
    type: Literal["step-start"] = "step-start"


class StepFinishPart(_PartBase):
    type: Literal["step-finish"] = "step-finish"
    reason: str = ""
    tokens: Tokens = Field(default_factory=Tokens)
    cost: float = 0.0


Part = Annotated[
    TextPart
    | ReasoningPart
    | FilePart
    | ToolPart
    | CompactionPart
    | CarryoverPart
    | StepStartPart
    | StepFinishPart,
    Field(discriminator="type"),
]


class WithParts(_Record):
    """A message with its parts in id order: the unit history is built from."""

    info: Message
    parts: list[Part] = Field(default_factory=list)

    @property
    def id(self) -> str:
        return self.info.id

    @property
    def role(self) -> str:
        return self.info.role

    def compaction(self) -> CompactionPart | None:
        return next((p for p in self.parts if isinstance(p, CompactionPart)), None)

    def text(self) -> str:
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart) and not p.ignored and p.text)

    def carryover(self) -> Carryover | None:
        """What a compaction's summary carries past it (None: not a summary, or made before it had one)."""
        return next((p.carryover for p in self.parts if isinstance(p, CarryoverPart)), None)


def is_media(mime: str) -> bool:
    return mime.startswith("image/") or mime == "application/pdf"
