"""An OpenCode setup's keys agentcli does not carry out are said, one line each, never ignored
silently; OpenCode's JS/TS plugins are named in one line and the rest of the config still loads."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply
from tests.workspace import Workspace, assert_one_line_error


def test_opencode_only_keys_and_js_plugins_are_one_line_each_and_the_rest_loads(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(
        {
            "plugin": ["@tarquinen/opencode-dcp@3"],
            "formatter": {"ruff": {"command": ["ruff", "format", "$FILE"], "extensions": [".py"]}},
            "command": {"test": {"template": "run the tests"}},
            "lsp": {"pyright": {"disabled": True}},
            "enabled_providers": ["fake"],
            "reference": ["docs/*.md"],
            "agent": {"build": {"prompt": "CONFIG STILL LOADED"}},
        }
    )
    fake_llm.push(Reply(text="fine"))
    proc = workspace.run("run", "hi")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "No module named" not in err and "Traceback" not in err
    assert err.count("plugin '@tarquinen/opencode-dcp@3' is an OpenCode JS/TS plugin") == 1
    for key in ("lsp", "enabled_providers"):
        assert err.count(f"'{key}' is not used: ") == 1, (key, err)
    assert "'formatter' is not used" not in err and "'command' is not used" not in err  # both are carried out
    assert "reference" not in err  # OpenCode accepts it: no false "unknown key"
    assert "CONFIG STILL LOADED" in str(fake_llm.chat_requests()[0].body["messages"][0])


def test_agents_expected_from_a_js_plugin_are_named_as_missing(workspace: Workspace) -> None:
    workspace.write_config(
        {
            "plugin": ["opencode-agents-pack"],
            "agent": {"build": {"disable": True}, "plan": {"disable": True}},
        }
    )
    line = assert_one_line_error(workspace.run("run", "hi"))
    assert "no primary agent" in line and "OpenCode plugin opencode-agents-pack" in line
