"""Every environment variable agentcli reads, with what it does: the one list the reference page
(docs/reference/environment.md, written by scripts/gen_docs.py) is made from.

The modules that read a variable keep their own constant or literal (each reads it where it is used, with
its own parsing); tests/test_env_registry.py keeps this list and the code in step: every ``AGENTCLI_*`` or
``OPENCODE_*`` name the code spells must be listed here, and every one listed here must be read somewhere.
Nothing here is imported at run time.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnvVar:
    name: str
    default: str  # as a user would write it; "" when unset means off
    meaning: str
    group: str


SESSION = "Models, requests and the session"
CONFIG = "Configuration and files"
PLUGINS = "Plugins, MCP and ACP"
PROVIDER = "Read as litellm reads them (provider keys and URLs)"

VARIABLES: tuple[EnvVar, ...] = (
    EnvVar(
        "AGENTCLI_MODEL",
        "",
        "the session model, over the config's `model` (`--model` wins over both)",
        SESSION,
    ),
    EnvVar(
        "AGENTCLI_LLM_PATH",
        "",
        "`litellm`: stream every model through litellm instead of agentcli's lean OpenAI-compatible and "
        "Anthropic paths",
        SESSION,
    ),
    EnvVar(
        "AGENTCLI_MAX_RETRIES",
        "4",
        "retries of a rate-limited or overloaded provider (a timeout is retried once, a refused "
        "connection never)",
        SESSION,
    ),
    EnvVar(
        "AGENTCLI_FIRST_BYTE_TIMEOUT",
        "300",
        "seconds of silence allowed before the answer starts, when the provider's `options.headerTimeout` "
        "sets none",
        SESSION,
    ),
    EnvVar(
        "AGENTCLI_IDLE_TIMEOUT",
        "120",
        "seconds of silence allowed between streamed chunks, when the provider's `options.chunkTimeout` "
        "sets none",
        SESSION,
    ),
    EnvVar(
        "OPENCODE_DISABLE_AUTOCOMPACT", "", "set: no automatic compaction (`compaction.auto: false`)", SESSION
    ),
    EnvVar("AGENTCLI_DISABLE_AUTOCOMPACT", "", "the same as `OPENCODE_DISABLE_AUTOCOMPACT`", SESSION),
    EnvVar(
        "OPENCODE_DISABLE_PRUNE",
        "",
        "set: no pruning of old tool outputs (`compaction.prune: false`)",
        SESSION,
    ),
    EnvVar("AGENTCLI_DISABLE_PRUNE", "", "the same as `OPENCODE_DISABLE_PRUNE`", SESSION),
    EnvVar(
        "OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX",
        "32000",
        "the most output tokens asked for and reserved per request (a positive integer)",
        SESSION,
    ),
    EnvVar(
        "OPENCODE_EXPERIMENTAL_OXFMT",
        "",
        "set: the oxfmt formatter runs for a project that depends on oxfmt (unset: `OPENCODE_EXPERIMENTAL` "
        "decides, as in OpenCode)",
        CONFIG,
    ),
    EnvVar("OPENCODE_EXPERIMENTAL", "", "set: OpenCode's experimental features agentcli has (oxfmt)", CONFIG),
    EnvVar(
        "AGENTCLI_OUTPUT_TOKEN_MAX",
        "32000",
        "the same as `OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX`, and wins over it; never read from a file",
        SESSION,
    ),
    EnvVar(
        "AGENTCLI_DEBUG",
        "",
        "set: an unexpected error prints its traceback; `agentcli acp` logs at debug level",
        SESSION,
    ),
    EnvVar(
        "AGENTCLI_DB",
        "",
        "the session database: a file, `sqlite:///PATH` or `postgresql+psycopg://…` (`--db` wins; else "
        "`database.url`, else `$XDG_DATA_HOME/agentcli/agentcli.db`)",
        CONFIG,
    ),
    EnvVar(
        "AGENTCLI_DB_BUSY_TIMEOUT", "10", "seconds a SQLite write waits for another program's lock", CONFIG
    ),
    EnvVar("AGENTCLI_SESSION_WAIT", "60", "seconds to wait for a session busy in another agent", CONFIG),
    EnvVar(
        "AGENTCLI_SESSION_LEASE_TTL",
        "30",
        "seconds a dead agent on another machine keeps its session locked",
        CONFIG,
    ),
    EnvVar(
        "AGENTCLI_CONFIG_DIR",
        "",
        "the folder of the user TOML (`config.toml`) and `trust.json` (default `$XDG_CONFIG_HOME/agentcli`)",
        CONFIG,
    ),
    EnvVar("OPENCODE_CONFIG", "", "one more global config file, read after `~/.config/opencode/`", CONFIG),
    EnvVar(
        "OPENCODE_DISABLE_PROJECT_CONFIG",
        "",
        "set: no project `opencode.json` is read, as in OpenCode",
        CONFIG,
    ),
    EnvVar(
        "OPENCODE_DISABLE_CLAUDE_CODE",
        "",
        "set: `~/.claude/CLAUDE.md` is not added to the system prompt",
        CONFIG,
    ),
    EnvVar(
        "AGENTCLI_TRUST_ALL",
        "",
        "`1`: trust every project folder (for CI containers and test harnesses)",
        CONFIG,
    ),
    EnvVar("XDG_CONFIG_HOME", "~/.config", "where `opencode/` and `agentcli/` config folders live", CONFIG),
    EnvVar(
        "XDG_DATA_HOME", "~/.local/share", "where `agentcli/` keeps the database, spills and logs", CONFIG
    ),
    EnvVar("HOME", "", "your home: `~` in paths and patterns, and the default of the XDG folders", CONFIG),
    EnvVar("AGENTCLI_DISABLE_PLUGINS", "", "`1`: load no plugin", PLUGINS),
    EnvVar(
        "AGENTCLI_LOAD_PLUGINS",
        "",
        "comma-separated names: load only these plugins (a configured one by its spec, an installed one by "
        "its entry-point or distribution name); empty: none. Trust still applies",
        PLUGINS,
    ),
    EnvVar(
        "AGENTCLI_MCP_CALL_TIMEOUT",
        "60",
        "seconds an MCP tool call may take, outright (default: 60, or the server's `timeout` when longer)",
        PLUGINS,
    ),
    EnvVar(
        "AGENTCLI_MCP_TIMEOUT",
        "5000",
        "milliseconds an editor's MCP server gets to start under `agentcli acp`",
        PLUGINS,
    ),
    EnvVar("ANTHROPIC_API_KEY", "", "the Anthropic key (also for the lean Messages path)", PROVIDER),
    EnvVar(
        "ANTHROPIC_AUTH_TOKEN",
        "",
        "an Anthropic auth token, sent as litellm sends it (`Authorization: Bearer`)",
        PROVIDER,
    ),
    EnvVar(
        "ANTHROPIC_BASE_URL",
        "https://api.anthropic.com",
        "the Anthropic base URL (or `ANTHROPIC_API_BASE`)",
        PROVIDER,
    ),
    EnvVar("ANTHROPIC_API_BASE", "", "the same as `ANTHROPIC_BASE_URL`, and wins over it", PROVIDER),
    EnvVar(
        "LITELLM_ANTHROPIC_DISABLE_URL_SUFFIX",
        "",
        "`true`: the Anthropic base URL is used as is, without `/v1/messages`",
        PROVIDER,
    ),
    EnvVar(
        "DEFAULT_MAX_TOKENS",
        "4096",
        "`max_tokens` added to a thinking budget for an Anthropic model with no known output limit",
        PROVIDER,
    ),
    EnvVar(
        "DEFAULT_ANTHROPIC_CHAT_MAX_TOKENS",
        "4096",
        "`max_tokens` for an Anthropic model with no known output limit",
        PROVIDER,
    ),
    EnvVar(
        "OPENAI_API_KEY", "", "the OpenAI key; others (`GROQ_API_KEY`, …) as litellm names them", PROVIDER
    ),
    EnvVar(
        "OPENAI_BASE_URL",
        "",
        "an OpenAI base URL (or `OPENAI_API_BASE`): decides whether `prompt_cache_key` is sent",
        PROVIDER,
    ),
    EnvVar("OPENAI_API_BASE", "", "the same as `OPENAI_BASE_URL`", PROVIDER),
    EnvVar(
        "LITELLM_LOCAL_MODEL_COST_MAP",
        "True",
        "set by agentcli unless you set it: litellm reads its bundled model map, never fetches one",
        PROVIDER,
    ),
    EnvVar("LITELLM_LOG", "ERROR", "set by agentcli unless you set it: litellm's log level", PROVIDER),
)
