"""One typed Config from OpenCode's opencode.json files, agentcli's user TOML and env flags.

Cheap to import on purpose (stdlib + pydantic only): `agentcli --help`, `sessions` and `config`
load it and must stay fast, so neither litellm nor sqlmodel may appear here. A leaf: it imports
nothing of agentcli but ``private_files`` (the user TOML is written privately).

    paths   where the files are (global, user, project, data, trust answers)
    jsonc   OpenCode's JSON with comments
    model   the pydantic Config and checking a source against it
    load    reading the sources, substituting ``{env:}``/``{file:}``, merging, env flags
    merge   deep merge, and a project's file over the user's (it cannot lower their rules)
    user    editing the user TOML (``agentcli config set|unset``)

Workspace trust is applied by the caller: ``agentcli.trusted_config.load_config`` reads the sources
here, leaves out what an untrusted project may not set, and merges the rest.
"""

from agentcli.config.errors import ConfigError
from agentcli.config.jsonc import parse_jsonc, strip_jsonc
from agentcli.config.load import Source, flatten, list_effective, merge_sources, read_sources
from agentcli.config.merge import deep_merge, merge_project
from agentcli.config.model import (
    BUNDLED_PLUGINS,
    AgentConfig,
    CompactionConfig,
    Config,
    DatabaseConfig,
    LoadedConfig,
    McpLocal,
    McpRemote,
    McpRemoteOver,
    McpToggle,
    ModelLimit,
    PermissionConfig,
    ProviderConfig,
    ProviderModel,
    ProviderOptions,
    RedactConfig,
    ToolOutputConfig,
)
from agentcli.config.paths import (
    candidate_paths,
    data_dir,
    display_path,
    global_config_dir,
    project_paths,
    project_root,
    trust_file,
    user_config_path,
)
from agentcli.config.user import (
    get_user_value,
    parse_raw_value,
    set_user_value,
    split_key,
    unset_user_value,
    user_database_url,
)
from agentcli.config.validation import unknown_keys, validate_source

__all__ = [
    "BUNDLED_PLUGINS",
    "AgentConfig",
    "CompactionConfig",
    "Config",
    "ConfigError",
    "DatabaseConfig",
    "LoadedConfig",
    "McpLocal",
    "McpRemote",
    "McpRemoteOver",
    "McpToggle",
    "ModelLimit",
    "PermissionConfig",
    "ProviderConfig",
    "ProviderModel",
    "ProviderOptions",
    "RedactConfig",
    "Source",
    "ToolOutputConfig",
    "candidate_paths",
    "data_dir",
    "deep_merge",
    "display_path",
    "flatten",
    "get_user_value",
    "global_config_dir",
    "list_effective",
    "merge_project",
    "merge_sources",
    "parse_jsonc",
    "parse_raw_value",
    "project_paths",
    "project_root",
    "read_sources",
    "set_user_value",
    "split_key",
    "strip_jsonc",
    "trust_file",
    "unknown_keys",
    "unset_user_value",
    "user_config_path",
    "user_database_url",
    "validate_source",
]
