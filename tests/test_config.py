"""Config loading: sources and precedence, JSONC, env flags, substitutions, warnings, errors, user TOML.

Every test passes `env` explicitly and lays files out under tmp_path, so the developer's real
~/.config is never read.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.config import (
    ConfigError,
    data_dir,
    get_user_value,
    global_config_dir,
    list_effective,
    project_root,
    set_user_value,
    unset_user_value,
    user_config_path,
)
from agentcli.trusted_config import load_config

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """A git repository with a nested working directory."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def load_error(proj: Path, env: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(proj, env)
    return str(info.value)


# --------------------------------------------------------------------------- locations and defaults


def test_locations_follow_xdg_and_overrides(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert global_config_dir(env) == tmp_path / ".config/opencode"
    assert user_config_path(env) == tmp_path / ".config/agentcli/config.toml"
    assert data_dir(env) == tmp_path / ".local/share/agentcli"
    env |= {"XDG_CONFIG_HOME": str(tmp_path / "x"), "XDG_DATA_HOME": str(tmp_path / "d")}
    assert global_config_dir(env) == tmp_path / "x/opencode"
    assert user_config_path(env) == tmp_path / "x/agentcli/config.toml"
    assert data_dir(env) == tmp_path / "d/agentcli"
    env["AGENTCLI_CONFIG_DIR"] = str(tmp_path / "mine")
    assert user_config_path(env) == tmp_path / "mine/config.toml"


def test_project_root_is_git_root_or_cwd(proj: Path, tmp_path: Path) -> None:
    assert project_root(proj / "pkg" / "sub") == proj
    loose = tmp_path / "loose" / "deeper"
    loose.mkdir(parents=True)
    assert project_root(loose) == loose


def test_defaults_without_any_file(proj: Path, env: dict[str, str]) -> None:
    loaded = load_config(proj, env)
    cfg = loaded.config
    assert loaded.sources == [] and loaded.warnings == []
    assert cfg.model is None
    assert cfg.compaction.auto is True
    assert cfg.compaction.prune is True  # agentcli prunes by default, unlike OpenCode
    assert cfg.compaction.reserved is None
    assert (cfg.tool_output.max_lines, cfg.tool_output.max_bytes) == (2000, 51200)
    assert cfg.output_token_max == 32000


# --------------------------------------------------------------------------- precedence


def test_sources_merge_in_precedence_order(proj: Path, env: dict[str, str], tmp_path: Path) -> None:
    home = Path(env["HOME"])
    glob = write(
        home / ".config/opencode/opencode.json",
        json.dumps({"model": "g/m", "small_model": "g/small", "instructions": ["a.md", "b.md"],
                    "compaction": {"tail_turns": 1, "reserved": 1}}),
    )  # fmt: skip
    explicit = write(tmp_path / "explicit.json", '{"compaction": {"reserved": 2}, "plugin": ["p1"]}')
    user = write(home / ".config/agentcli/config.toml", 'compaction.reserved = 3\nmodel = "u/m"\n')
    root = write(proj / "opencode.json", '{"compaction": {"reserved": 4}, "instructions": ["c.md"]}')
    mid = write(proj / "pkg" / "opencode.jsonc", '{"compaction": {"reserved": 5}}')
    near = write(proj / "pkg" / "sub" / "opencode.json", '{"compaction": {"preserve_recent_tokens": 6}}')
    dot = write(proj / "pkg" / "sub" / ".opencode" / "opencode.json", '{"model": "dot/m"}')
    env["OPENCODE_CONFIG"] = str(explicit)

    loaded = load_config(proj / "pkg" / "sub", env)
    cfg = loaded.config
    assert loaded.sources == [glob, explicit, user, root, mid, near, dot]
    assert cfg.compaction.reserved == 5  # nearer project file wins
    assert cfg.compaction.tail_turns == 1  # dicts merge: untouched keys survive from the global file
    assert cfg.compaction.preserve_recent_tokens == 6
    assert cfg.instructions == ["c.md"]  # lists replace, never concatenate
    assert cfg.plugin == ["p1"]
    assert cfg.small_model == "g/small"
    assert cfg.model == "dot/m"  # .opencode/ in a dir comes after that dir's opencode.json
    assert loaded.origins["compaction.reserved"] == "../opencode.jsonc"
    assert loaded.origins["small_model"] == "~/.config/opencode/opencode.json"

    env["AGENTCLI_MODEL"] = "env/m"
    assert load_config(proj / "pkg" / "sub", env).config.model == "env/m"


def test_project_files_above_the_git_root_are_ignored(tmp_path: Path, env: dict[str, str]) -> None:
    write(tmp_path / "opencode.json", '{"model": "outside/m"}')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert load_config(repo, env).config.model is None
    write(repo / "opencode.json", '{"model": "inside/m"}')
    assert load_config(repo, env).config.model == "inside/m"


def test_opencode_disable_project_config(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"model": "p/m"}')
    env["OPENCODE_DISABLE_PROJECT_CONFIG"] = "1"
    assert load_config(proj, env).config.model is None


# --------------------------------------------------------------------------- JSONC


def test_jsonc_comments_trailing_commas_and_urls(proj: Path, env: dict[str, str]) -> None:
    write(
        proj / "opencode.jsonc",
        """// leading comment
{
  /* block
     comment */ "model": "local/m", // trailing comment
  "provider": {
    "local": {
      "options": { "baseURL": "http://127.0.0.1:8080/v1", "apiKey": "a/*not a comment*/b", },
      "models": { "m": { "limit": { "context": 1000, "output": 100, }, }, },
    },
  },
  "instructions": ["x // y", "z",],
}
""",
    )
    cfg = load_config(proj, env | {"AGENTCLI_TRUST_ALL": "1"}).config
    assert cfg.model == "local/m"
    assert cfg.provider["local"].options.baseURL == "http://127.0.0.1:8080/v1"
    assert cfg.provider["local"].options.apiKey == "a/*not a comment*/b"
    assert cfg.provider["local"].models["m"].limit.context == 1000
    assert cfg.instructions == ["x // y", "z"]


def test_malformed_json_reports_file_line_and_column(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{\n  // fine\n  "model": "a"\n  "small_model": "b"\n}\n')
    assert load_error(proj, env) == "opencode.json:4:3: invalid JSON: Expecting ',' delimiter"


def test_json_nested_past_the_parser_is_one_line(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert load_error(proj, env) == "opencode.json: invalid JSON: nested too deeply"


def test_unterminated_block_comment(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"model": "a"} /* never closed')
    assert load_error(proj, env) == "opencode.json:1:16: invalid JSON: unterminated /* comment"


def test_top_level_must_be_an_object(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '["model"]')
    assert load_error(proj, env) == "opencode.json: must be a JSON object at the top level"


def test_invalid_user_toml(proj: Path, env: dict[str, str]) -> None:
    write(Path(env["HOME"]) / ".config/agentcli/config.toml", "model = \n")
    message = load_error(proj, env)
    assert message.startswith("~/.config/agentcli/config.toml: invalid TOML: ")
    assert "\n" not in message


# --------------------------------------------------------------------------- env flags


@pytest.mark.parametrize("prefix", ["OPENCODE", "AGENTCLI"])
def test_env_flags_turn_off_autocompact_and_prune(proj: Path, env: dict[str, str], prefix: str) -> None:
    write(proj / "opencode.json", '{"compaction": {"auto": true, "prune": true}}')
    env[f"{prefix}_DISABLE_AUTOCOMPACT"] = "true"
    cfg = load_config(proj, env).config
    assert (cfg.compaction.auto, cfg.compaction.prune) == (False, True)
    env[f"{prefix}_DISABLE_PRUNE"] = "1"
    cfg = load_config(proj, env).config
    assert (cfg.compaction.auto, cfg.compaction.prune) == (False, False)


def test_falsy_env_flag_changes_nothing(proj: Path, env: dict[str, str]) -> None:
    env["OPENCODE_DISABLE_AUTOCOMPACT"] = "0"
    env["OPENCODE_DISABLE_PRUNE"] = ""
    cfg = load_config(proj, env).config
    assert (cfg.compaction.auto, cfg.compaction.prune) == (True, True)


def test_output_token_max_env(proj: Path, env: dict[str, str]) -> None:
    env["OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"] = "8000"
    assert load_config(proj, env).config.output_token_max == 8000
    env["AGENTCLI_OUTPUT_TOKEN_MAX"] = "4096"  # ours wins when both are set
    assert load_config(proj, env).config.output_token_max == 4096
    env["AGENTCLI_OUTPUT_TOKEN_MAX"] = "-5"
    assert load_error(proj, env) == "AGENTCLI_OUTPUT_TOKEN_MAX: must be a positive integer (got '-5')"


def test_output_token_max_is_not_a_file_key(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"output_token_max": 10}')
    loaded = load_config(proj, env)
    assert loaded.config.output_token_max == 32000
    assert loaded.warnings == ["opencode.json: unknown key 'output_token_max'"]


# --------------------------------------------------------------------------- substitutions


def test_env_and_file_substitutions(proj: Path, env: dict[str, str]) -> None:
    write(proj / "prompts" / "build.txt", "  Be brief.\n")
    write(Path(env["HOME"]) / "key.txt", "sk-from-file\n")
    write(
        proj / "opencode.json",
        json.dumps(
            {
                "model": "{env:MY_MODEL}",
                "small_model": "x{env:UNSET_VAR}y",
                "agent": {"build": {"prompt": "{file:prompts/build.txt}"}},
                "provider": {
                    "p": {"options": {"apiKey": "{file:~/key.txt}", "baseURL": "http://{env:HOST}/v1"}}
                },
                "instructions": ["{literal braces}"],
            }
        ),
    )
    env |= {"MY_MODEL": "p/m", "HOST": "h:1", "AGENTCLI_TRUST_ALL": "1"}
    cfg = load_config(proj, env).config
    assert cfg.model == "p/m"
    assert cfg.small_model == "xy"  # an unset variable becomes empty, as in OpenCode
    assert cfg.agent["build"].prompt == "Be brief."
    assert cfg.provider["p"].options.apiKey == "sk-from-file"
    assert cfg.provider["p"].options.baseURL == "http://h:1/v1"
    assert cfg.instructions == ["{literal braces}"]


def test_missing_substituted_file(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"agent": {"build": {"prompt": "{file:nope.txt}"}}}')
    assert load_error(proj, env) == "opencode.json: agent.build.prompt: file not found: nope.txt"


# --------------------------------------------------------------------------- unknown keys


def test_unknown_keys_warn_but_opencode_keys_do_not(proj: Path, env: dict[str, str]) -> None:
    write(
        proj / "opencode.json",
        json.dumps(
            {
                "$schema": "https://opencode.ai/config.json",
                "theme": "dark",
                "mcp": {},
                "keybinds": {},
                "autoupdate": False,
                "modle": "typo",
                "compaction": {"auto": True, "threshold": 0.9},
                "agent": {"build": {"description": "d", "colour": "red"}},
                "provider": {
                    "p": {
                        "api": "x",
                        "options": {"baseURL": "http://h", "custom": 1},
                        "models": {"m": {"cost": {"input": 1}, "reasoning": True}},
                    }
                },
                "permission": {"read": "allow"},
            }
        ),
    )
    loaded = load_config(proj, env)
    assert loaded.warnings == [
        "opencode.json: unknown key 'modle' (did you mean model?)",
        "opencode.json: unknown key 'compaction.threshold'",
        "opencode.json: unknown key 'agent.build.colour'",
    ]
    assert loaded.config.provider["p"].options.model_extra == {"custom": 1}  # passed through


def test_a_key_close_to_a_known_one_says_which_was_meant(proj: Path, env: dict[str, str]) -> None:
    """A provider option passes through unchecked, but a slip of a known one (``baseUrl``) would
    silently send the requests elsewhere: it is warned about, with the key meant."""
    write(
        proj / "opencode.json",
        json.dumps(
            {
                "provider": {"p": {"options": {"baseUrl": "http://h", "custom": 1}}},
                "compaction": {"prnue": False},
            }
        ),
    )
    assert load_config(proj, env).warnings == [
        "opencode.json: unknown key 'provider.p.options.baseUrl' (did you mean baseURL?)",
        "opencode.json: unknown key 'compaction.prnue' (did you mean prune?)",
    ]


def test_example_file_loads_without_warnings(proj: Path, env: dict[str, str]) -> None:
    (proj / "opencode.jsonc").write_text((REPO / "opencode.json.example").read_text())
    loaded = load_config(proj, env | {"AGENTCLI_TRUST_ALL": "1"})
    assert loaded.warnings == []
    cfg = loaded.config
    assert cfg.provider["local"].npm == "@ai-sdk/openai-compatible"
    assert cfg.provider["local"].models["qwen2.5-coder"].limit.context == 32768
    assert cfg.agent["compaction"].model
    assert cfg.small_model and cfg.instructions and cfg.plugin
    assert cfg.permission.bash["rm -rf*"] == "deny"
    assert cfg.mcp["github"].command[0] == "npx" and cfg.mcp["docs"].url.startswith("https://")
    assert cfg.tools == {"github_delete_*": False}


# --------------------------------------------------------------------------- validation errors


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"compaction": {"reserved": -1}}, "compaction.reserved: must be a non-negative integer"),
        ({"compaction": {"reserved": "20000"}}, "compaction.reserved: must be a non-negative integer"),
        ({"compaction": {"tail_turns": True}}, "compaction.tail_turns: must be a non-negative integer"),
        (
            {"compaction": {"preserve_recent_tokens": 1.5}},
            "compaction.preserve_recent_tokens: must be a non-negative integer",
        ),
        ({"compaction": {"auto": "yes"}}, "compaction.auto: must be true or false"),
        ({"compaction": 5}, "compaction: must be an object"),
        ({"model": 5}, "model: must be a string"),
        ({"instructions": "AGENTS.md"}, "instructions: must be a list"),
        ({"instructions": ["a", 1]}, "instructions[1]: must be a string"),
        ({"plugin": [None]}, "plugin[0]: must be a string"),
        ({"permission": {"edit": "maybe"}}, "permission.edit: must be one of allow, ask, deny"),
        (
            {"permission": {"bash": 3}},
            "permission.bash: must be one of allow, ask, deny, or an object mapping patterns to them",
        ),
        (
            {"permission": {"bash": {"git *": "sure"}}},
            "permission.bash.git *: must be one of allow, ask, deny",
        ),
        ({"agent": {"build": {"steps": 0}}}, "agent.build.steps: must be a positive integer"),
        ({"agent": {"build": {"temperature": "hot"}}}, "agent.build.temperature: must be a number"),
        ({"agent": {"build": {"disable": 1}}}, "agent.build.disable: must be true or false"),
        ({"tool_output": {"max_lines": 0}}, "tool_output.max_lines: must be a positive integer"),
        (
            {"provider": {"p": {"models": {"m": {"limit": {"context": -5}}}}}},
            "provider.p.models.m.limit.context: must be a non-negative integer",
        ),
        (
            {"provider": {"p": {"options": {"timeout": "long"}}}},
            "provider.p.options.timeout: must be a positive integer",
        ),
        ({"provider": {"p": "openai"}}, "provider.p: must be an object"),
    ],
)  # fmt: skip
def test_invalid_values_give_one_line_errors(
    proj: Path, env: dict[str, str], doc: dict, message: str
) -> None:
    write(proj / "opencode.json", json.dumps(doc))
    assert load_error(proj, env) == f"opencode.json: {message}"


def test_error_names_the_file_that_is_wrong(proj: Path, env: dict[str, str]) -> None:
    write(Path(env["HOME"]) / ".config/opencode/opencode.jsonc", '{"compaction": {"reserved": -3}}')
    write(proj / "opencode.json", '{"compaction": {"reserved": 10}}')
    assert (
        load_error(proj, env)
        == "~/.config/opencode/opencode.jsonc: compaction.reserved: must be a non-negative integer"
    )


def test_provider_timeout_false_means_none(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"provider": {"p": {"options": {"timeout": false}}}}')
    assert load_config(proj, env).config.provider["p"].options.timeout is None


def test_agent_max_steps_accepts_both_names(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"agent": {"a": {"maxSteps": 7}, "b": {"steps": 3, "maxSteps": 9}}}')
    agents = load_config(proj, env).config.agent
    assert (agents["a"].max_steps, agents["b"].max_steps) == (7, 3)


# --------------------------------------------------------------------------- user TOML and listing


def test_user_toml_round_trip(proj: Path, env: dict[str, str]) -> None:
    path = set_user_value("compaction.reserved", "30000", env)
    assert path == user_config_path(env)
    set_user_value("compaction.auto", "false", env)
    set_user_value("model", "local/qwen", env)
    set_user_value("instructions", '["A.md", "B.md"]', env)
    set_user_value('provider.local.models."qwen2.5".limit.context', "32768", env)

    assert get_user_value("compaction.reserved", env) == 30000
    assert get_user_value("compaction.auto", env) is False
    assert get_user_value("model", env) == "local/qwen"
    assert get_user_value("compaction", env) == {"reserved": 30000, "auto": False}
    assert get_user_value("compaction.tail_turns", env) is None

    cfg = load_config(proj, env).config
    assert cfg.compaction.reserved == 30000 and cfg.compaction.auto is False
    assert cfg.instructions == ["A.md", "B.md"]
    assert cfg.provider["local"].models["qwen2.5"].limit.context == 32768

    assert unset_user_value("compaction.auto", env) is True
    assert unset_user_value("compaction.auto", env) is False
    assert load_config(proj, env).config.compaction.auto is True


@pytest.mark.parametrize(
    ("key", "raw", "message"),
    [
        ("compaction.reserved", "-1", "compaction.reserved: must be a non-negative integer"),
        ("compaction.reserved", "lots", "compaction.reserved: must be a non-negative integer"),
        ("permission.edit", "sometimes", "permission.edit: must be one of allow, ask, deny"),
    ],
)
def test_set_rejects_invalid_values_and_keeps_the_file(
    env: dict[str, str], key: str, raw: str, message: str
) -> None:
    set_user_value("model", "keep/me", env)
    before = user_config_path(env).read_bytes()
    with pytest.raises(ConfigError) as info:
        set_user_value(key, raw, env)
    assert str(info.value) == f"{user_config_path(env)}: {message}"
    assert user_config_path(env).read_bytes() == before


def test_set_rejects_unknown_keys_and_bad_key_syntax(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"^compaction\.treshold: unknown key"):
        set_user_value("compaction.treshold", "1", env)
    with pytest.raises(ConfigError, match=r"^theme: unknown key"):
        set_user_value("theme", "dark", env)
    with pytest.raises(ConfigError, match=r"^invalid key 'compaction\.\.auto'"):
        set_user_value("compaction..auto", "true", env)
    with pytest.raises(ConfigError, match="AGENTCLI_OUTPUT_TOKEN_MAX"):
        set_user_value("output_token_max", "100", env)
    assert not user_config_path(env).exists()


def test_list_effective_flattens_with_defaults(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"model": "p/m", "permission": {"bash": {"git *": "ask"}}}')
    flat = list_effective(load_config(proj, env))
    assert flat["model"] == "p/m"
    assert flat["permission.bash.git *"] == "ask"
    assert flat["compaction.prune"] is True
    assert flat["tool_output.max_bytes"] == 51200
    assert "compaction.reserved" not in flat  # unset optional keys are left out
    assert list(flat) == sorted(flat)


def test_error_path_keeps_keys_that_look_like_types(proj: Path, env: dict[str, str]) -> None:
    write(proj / "opencode.json", '{"permission": {"bash": {"ls [a-z]*": "ok"}}}')
    assert (
        load_error(proj, env) == "opencode.json: permission.bash.ls [a-z]*: must be one of allow, ask, deny"
    )


def test_a_project_may_lower_the_task_bounds_never_raise_them(proj: Path, env: dict[str, str]) -> None:
    global_dir = Path(env["XDG_CONFIG_HOME"]) / "opencode"
    write(global_dir / "opencode.json", json.dumps({"tasks": {"max_depth": 1}}))
    write(proj / "opencode.json", json.dumps({"tasks": {"max_depth": 9, "max_per_turn": 5}}))
    tasks = load_config(proj, env).config.tasks
    assert (tasks.max_depth, tasks.max_per_turn) == (1, 5)
