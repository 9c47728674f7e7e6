"""The typed Config (pydantic models of opencode.json's sections agentcli reads) and what a load
returns (``LoadedConfig``). Checking one source against it, with errors and warnings phrased for the
user, is ``agentcli.config.validation``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, TypeGuard, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Tag

# --------------------------------------------------------------------------- value checks
# Our own before-validators so every error reads "must be …" instead of pydantic's wording.


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _non_negative_int(value: object) -> object:
    if value is not None and not (_is_int(value) and value >= 0):
        raise ValueError("must be a non-negative integer")
    return value


def _positive_int(value: object) -> object:
    if value is not None and not (_is_int(value) and value > 0):
        raise ValueError("must be a positive integer")
    return value


def _action(value: object) -> object:
    if value is not None and value not in ("allow", "ask", "deny"):
        raise ValueError("must be one of allow, ask, deny")
    return value


def _pattern_permission(value: object) -> object:
    if value is None or value in ("allow", "ask", "deny"):
        return value
    if isinstance(value, dict):
        return value  # each pattern's action is checked by the dict's value type
    raise ValueError("must be one of allow, ask, deny, or an object mapping patterns to them")


def _timeout(value: object) -> object:
    # OpenCode accepts `false` to mean "no timeout".
    if value is False:
        return None
    return _positive_int(value)


def _silence_timeout(value: object) -> object:
    # OpenCode's headerTimeout / chunkTimeout: milliseconds, or `false` for no limit at all.
    return value if value is False else _positive_int(value)


def _fraction(value: object) -> object:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ValueError("must be a number between 0 and 1 (a fraction of the usable window)")
    return float(value)


NonNegInt = Annotated[int, BeforeValidator(_non_negative_int)]
Fraction = Annotated[float, BeforeValidator(_fraction)]
PosInt = Annotated[int, BeforeValidator(_positive_int)]
Action = Annotated[Literal["allow", "ask", "deny"], BeforeValidator(_action)]
PatternPermission = Annotated[Union[Action, dict[str, Action]], BeforeValidator(_pattern_permission)]  # noqa: UP007


class _Section(BaseModel):
    """Base of every config section: strict types, unknown keys ignored (and warned about)."""

    model_config = ConfigDict(strict=True, extra="ignore")
    # Keys OpenCode knows in this section that agentcli ignores without a warning.
    opencode_keys: ClassVar[frozenset[str]] = frozenset()


# --------------------------------------------------------------------------- schema


class ModelLimit(_Section):
    context: NonNegInt = 0
    input: NonNegInt = 0
    output: NonNegInt = 0


class ProviderModel(_Section):
    # OpenCode model entries carry many more keys (cost, modalities, …): keep them, never warn.
    model_config = ConfigDict(strict=True, extra="allow")
    name: str | None = None
    id: str | None = None
    limit: ModelLimit | None = None
    options: dict[str, Any] = {}


class ProviderOptions(_Section):
    # Extra options (e.g. provider-specific flags) are passed through to the route untouched.
    model_config = ConfigDict(strict=True, extra="allow")
    baseURL: str | None = None
    apiKey: str | None = None
    headers: dict[str, str] = {}
    timeout: Annotated[int | None, BeforeValidator(_timeout)] = None
    # OpenCode's name: false never sends OpenAI's prompt_cache_key, true sends it to any provider
    # (but those known to reject it); unset, agentcli's default (``agentcli.llm.cache``).
    setCacheKey: bool | None = None
    # Silence allowed before the answer's first byte / between chunks (llm/watch.py has the defaults).
    headerTimeout: Annotated[int | bool | None, BeforeValidator(_silence_timeout)] = None
    chunkTimeout: Annotated[int | bool | None, BeforeValidator(_silence_timeout)] = None


class ProviderConfig(_Section):
    opencode_keys = frozenset({"api", "id", "env", "whitelist", "blacklist"})
    npm: str | None = None
    name: str | None = None
    env: list[str] = []
    options: ProviderOptions = ProviderOptions()
    models: dict[str, ProviderModel] = {}


class CompactionConfig(_Section):
    auto: bool = True
    # agentcli prunes old tool outputs by default, unlike current OpenCode where prune is opt-in:
    # the issue agentcli was built for requires long sessions to shed stale tool output unasked.
    prune: bool = True
    reserved: NonNegInt | None = None
    tail_turns: NonNegInt | None = None
    preserve_recent_tokens: NonNegInt | None = None
    # agentcli's own: after a summary the model also gets the ledger of files, commands, errors and
    # todos, the user's own messages and the skills loaded, all from the records (false: off).
    ledger: bool = True
    # Tokens of the user's messages kept word for word (default: 10 % of the usable window, at most 20k).
    user_message_tokens: NonNegInt | None = None
    # The summary request: "cache" (default) is the conversation as last sent with the compaction
    # instruction as its last message, so the provider's prompt cache serves it; "transcript" is
    # OpenCode's (the head written out as text under the summarizer's own system prompt).
    request: Literal["cache", "transcript"] = "cache"
    # agentcli's own: once a step's window is near enough the budget for the summary to be ready in
    # time (learned: compaction/pace.py), at the latest past ``background_at`` of the usable window (the
    # ceiling), the summary of the older part is written in the background while the turn goes on, and
    # swapped in at once when compaction is due (docs/compaction.md). false: OpenCode's timing.
    background: bool = True
    background_at: Fraction = 0.7
    # agentcli's own: the window taken for a model nothing tells the window of (no limit in the config,
    # not in the model map, its server does not say): default 32,768 (docs/local-models.md).
    default_context: NonNegInt | None = None


class PermissionConfig(_Section):
    # OpenCode permission keys are open-ended (one per tool, MCP tools and globs such as "github_*"
    # included): accept the others silently, with the same values.
    model_config = ConfigDict(strict=True, extra="allow")
    __pydantic_extra__: dict[str, PatternPermission]
    edit: Action | None = None
    bash: PatternPermission | None = None
    webfetch: Action | None = None
    # Paths outside the project root (read, list, glob, grep, edit, write, bash workdir).
    external_directory: PatternPermission | None = None
    # Reading files, by path: secret stores (~/.ssh, .env, …) ask unless a pattern allows them.
    read: PatternPermission | None = None
    # webfetch to loopback, link-local, private-range or .internal hosts, by host name.
    private_network: PatternPermission | None = None


def _sandbox_mode(value: object) -> object:
    return {True: "on", False: "off"}.get(value, value) if isinstance(value, bool) else value


SandboxMode = Annotated[Literal["off", "on", "auto"], BeforeValidator(_sandbox_mode)]
_SANDBOX_ORDER = ("off", "auto", "on")


class SandboxConfig(_Section):
    """The bash tool run confined on Linux (docs/security.md): writes only in the project, the
    temporary folders and ``writable``; no network unless ``network``. "on" refuses a command where
    the machine cannot confine it; "auto" runs it unconfined there. ``true``/``false`` are on/off."""

    bash: SandboxMode = "off"
    network: bool = False
    writable: list[str] = []  # more folders the command may write in (~ is the home folder)

    def held_to(self, users: SandboxConfig) -> SandboxConfig:
        """A project may tighten the user's sandbox, never loosen it: the stricter mode, the network
        only if both allow it, and only the user's own extra folders."""
        mode = max(self.bash, users.bash, key=_SANDBOX_ORDER.index)
        return SandboxConfig(bash=mode, network=self.network and users.network, writable=users.writable)


class TasksConfig(_Section):
    """Bounds on subagent tasks, so that no agent (a project's included) can make tasks start tasks
    without end: how deep a task may start another, and how many one user turn may start in all."""

    max_depth: NonNegInt = 3
    max_per_turn: PosInt = 30

    def held_to(self, users: TasksConfig) -> TasksConfig:
        """A project may lower the user's bounds, never raise them."""
        return TasksConfig(
            max_depth=min(self.max_depth, users.max_depth),
            max_per_turn=min(self.max_per_turn, users.max_per_turn),
        )


class RedactConfig(_Section):
    # Summaries and titles are always redacted; this also redacts every chat request (the model then
    # sees `[REDACTED:<kind>]` where a secret was, and cannot write it anywhere either).
    model_requests: bool = False


class ToolOutputConfig(_Section):
    max_lines: PosInt = 2000
    max_bytes: PosInt = 51200


class DatabaseConfig(_Section):
    """Where sessions are stored: a file path, ``sqlite:///PATH`` or ``postgresql+psycopg://…``.
    Honoured from the user config only (a project file must not send history elsewhere)."""

    url: str | None = None


# --------------------------------------------------------------------------- MCP servers
# OpenCode's `mcp` entries, kept in one block (agentcli.mcp runs them). Entries are strict, as in
# OpenCode: a misspelt key is refused with its name rather than silently starting something else.


def _command(value: object) -> object:
    if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
        raise ValueError('must be a non-empty list of strings, e.g. ["npx", "-y", "some-mcp-server"]')
    return value


def _http_url(value: object) -> object:
    if not (isinstance(value, str) and value.startswith(("http://", "https://"))):
        raise ValueError("must be an http:// or https:// URL")
    return value


class McpLocal(_Section):
    """A server agentcli starts and talks to over stdin/stdout."""

    model_config = ConfigDict(strict=True, extra="forbid")
    type: Literal["local"]
    command: Annotated[list[str], BeforeValidator(_command)]
    environment: dict[str, str] = {}
    enabled: bool = True
    timeout: PosInt = 5000  # ms to connect, shake hands and list the tools (OpenCode's default)


class McpRemote(_Section):
    """A server reached over streamable HTTP (falling back to SSE)."""

    model_config = ConfigDict(strict=True, extra="forbid")
    type: Literal["remote"]
    url: Annotated[str, BeforeValidator(_http_url)]
    headers: dict[str, str] = {}
    enabled: bool = True
    timeout: PosInt = 5000
    oauth: Any = None  # OpenCode's OAuth settings: accepted, not used (send a token in `headers`)


class McpRemoteOver(McpRemote):
    """A remote server reached over the one transport it names: an editor's ``http`` or ``sse`` server,
    given over ACP. Built by agentcli, never read from a file (OpenCode's entries have no such key)."""

    transport: Literal["streamable-http", "sse"]


class McpToggle(_Section):
    """OpenCode's `{"enabled": false}`: turns off a server another config file defines."""

    model_config = ConfigDict(strict=True, extra="forbid")
    enabled: bool


def _mcp_kind(value: Any) -> str | None:
    if isinstance(value, BaseModel):
        return "toggle" if isinstance(value, McpToggle) else value.type  # type: ignore[attr-defined]
    if not isinstance(value, dict):
        return None
    return "toggle" if "type" not in value and set(value) <= {"enabled"} else value.get("type")


def _mcp_entry(value: object) -> object:
    if not isinstance(value, dict):
        raise ValueError('must be an object with "type": "local" or "remote"')
    if "type" not in value and _mcp_kind(value) != "toggle":
        raise ValueError('needs "type": "local" or "remote"')
    if _mcp_kind(value) not in ("local", "remote", "toggle"):
        raise ValueError('"type" must be "local" or "remote"')
    return value


McpEntry = Annotated[
    Union[  # noqa: UP007
        Annotated[McpLocal, Tag("local")],
        Annotated[McpRemote, Tag("remote")],
        Annotated[McpToggle, Tag("toggle")],
    ],
    Discriminator(_mcp_kind),
    BeforeValidator(_mcp_entry),
]


def _mode(value: object) -> object:
    if value is not None and value not in ("primary", "subagent", "all"):
        raise ValueError("must be one of primary, subagent, all")
    return value


class AgentConfig(_Section):
    """One agent: OpenCode's ``agent.<name>`` entry, or a ``.opencode/agent/<name>.md`` file (its front
    matter, the body as ``prompt``). ``mcp`` is agentcli's own: servers only this agent is given."""

    opencode_keys = frozenset({"variant", "options", "color", "name", "fallback_model"})
    description: str | None = None
    mode: Annotated[Literal["primary", "subagent", "all"] | None, BeforeValidator(_mode)] = None
    model: str | None = None
    prompt: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    steps: PosInt | None = None
    maxSteps: PosInt | None = None
    disable: bool = False
    hidden: bool | None = None
    tools: dict[str, bool] = {}  # tool name or glob → offered to this agent (after the global `tools`)
    permission: PermissionConfig | None = None  # over the global `permission`, key by key
    mcp: dict[str, McpEntry] = {}  # MCP servers of this agent only (their schemas cost no other window)

    @property
    def max_steps(self) -> int | None:
        """The step guard; `steps` is OpenCode's newer name for `maxSteps`."""
        return self.steps if self.steps is not None else self.maxSteps


class CommandConfig(_Section):
    """OpenCode's ``command.<name>``: a slash command whose template becomes the user's message."""

    opencode_keys = frozenset({"agent", "model", "subtask"})
    template: str
    description: str = ""


class FormatterConfig(_Section):
    """OpenCode's ``formatter.<name>``: a built-in's override or a custom formatter run after edits."""

    command: list[str] | None = None  # "$FILE" stands for the edited file
    extensions: list[str] | None = None
    environment: dict[str, str] | None = None  # added to the formatter's process environment
    disabled: bool = False


class Config(_Section):
    opencode_keys = frozenset(
        {
            "$schema", "theme", "keybinds", "share", "autoshare", "autoupdate", "lsp",
            "username", "layout", "disabled_providers", "enabled_providers", "snapshot", "watcher",
            "experimental", "mode", "tui", "server", "enterprise",
            "skills", "references", "reference", "logLevel", "small_model_options",
        }
    )  # fmt: skip
    model: str | None = None
    small_model: str | None = None
    provider: dict[str, ProviderConfig] = {}
    compaction: CompactionConfig = CompactionConfig()
    agent: dict[str, AgentConfig] = {}
    default_agent: str | None = None  # the primary agent a new session starts with (default: build)
    instructions: list[str] = []
    permission: PermissionConfig = PermissionConfig()
    tool_output: ToolOutputConfig = ToolOutputConfig()
    redact: RedactConfig = RedactConfig()
    sandbox: SandboxConfig = SandboxConfig()
    tasks: TasksConfig = TasksConfig()
    plugin: list[str] = []
    database: DatabaseConfig = DatabaseConfig()
    mcp: dict[str, McpEntry] = {}  # MCP servers by name (see McpLocal / McpRemote above)
    tools: dict[str, bool] = {}  # tool name or glob → offered to the model or not (last match wins)
    command: dict[str, CommandConfig] = {}  # slash commands beside .opencode/command/*.md
    # OpenCode 1.18.33: omitted or false, no formatter runs after edits; true, the built-ins; an object,
    # the built-ins with its overrides and custom formatters.
    formatter: dict[str, FormatterConfig] | bool = False
    # Only from OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX / AGENTCLI_OUTPUT_TOKEN_MAX, never from a file.
    output_token_max: PosInt = 32000

    def providers_dict(self) -> dict[str, dict[str, Any]]:
        """The provider section as plain dicts, the shape `agentcli.llm.route.resolve` takes."""
        return {pid: p.model_dump(exclude_none=True) for pid, p in self.provider.items()}


ENV_ONLY_KEYS = frozenset({"output_token_max"})

# The plugins shipped with agentcli, by the name `plugin` lists them under, and their modules. Their
# code is agentcli's own, so naming one in a project config needs no workspace trust.
BUNDLED_PLUGINS: dict[str, str] = {"memory": "agentcli.plugins.memory"}


@dataclass
class LoadedConfig:
    config: Config
    sources: list[Path]  # files actually read, lowest precedence first
    warnings: list[str]
    # Added beyond the brief: dotted key -> the file (or "environment") that set it, for `config list`.
    origins: dict[str, str] = field(default_factory=dict)
    # The permission rules of the user's own files alone: a project's rules are merged over them rule
    # by rule, and every request is also held to them (a project's new pattern cannot loosen them).
    user_permission: dict[str, Any] = field(default_factory=dict)
