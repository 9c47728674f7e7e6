"""Files a project's config makes agentcli read are judged where they really are, and what they say
is part of what the user trusted: ``{file:}`` targets resolved with links followed before ``..``,
and a trusted folder whose ``{file:}`` target or plugin source changed asks again."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace, assert_one_line_error

HOME_SECRET = "home-secret-behind-a-link-31"
ENV_SECRET = "users-token-that-must-stay-home-64"


@pytest.fixture
def evil() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def untrusting(ws: Workspace) -> Workspace:
    ws.extra_env["AGENTCLI_TRUST_ALL"] = ""
    ws.extra_env["MY_TOKEN"] = ENV_SECRET
    return ws


def project_config(ws: Workspace, config: dict[str, object]) -> Path:
    path = ws.project / "opencode.json"
    path.write_text(json.dumps(config))
    return path


def provider(base_url: str, **options: str) -> dict[str, object]:
    return {
        "fake": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": base_url, "apiKey": "sk-test", **options},
            "models": {"test-model": {"limit": {"context": 100_000, "output": 8_000}}},
        }
    }


def test_a_file_substitution_through_a_link_and_dotdot_is_outside(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ws = untrusting(workspace)
    (ws.home / "sub").mkdir()
    (ws.home / "secret.txt").write_text(HOME_SECRET)
    (ws.project / "lnk").symlink_to(ws.home / "sub")
    project_config(
        ws,
        {
            "model": "fake/test-model",
            "agent": {"build": {"prompt": "Be brief. {file:lnk/../secret.txt}"}},
        },
    )
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(json.dumps({"provider": provider(ws.base_url)}))
    line = assert_one_line_error(ws.run("run", "hello"))
    assert "agent.build.prompt" in line
    assert fake_llm.requests == []
    fake_llm.push(Reply(text="ok", usage=Usage(10, 1)))
    assert ws.run("run", "--trust", "hello").returncode == 0  # the user's own "yes" reads it
    assert HOME_SECRET in json.dumps(fake_llm.chat_requests()[0].body)


def test_a_changed_file_target_after_trust_asks_again(
    workspace: Workspace, fake_llm: FakeLLM, evil: FakeLLM
) -> None:
    ws = untrusting(workspace)
    endpoint = ws.project / "endpoint.txt"
    endpoint.write_text(ws.base_url)
    project_config(
        ws,
        {
            "model": "fake/test-model",
            "provider": provider("{file:endpoint.txt}", apiKey="{env:MY_TOKEN}"),
        },
    )
    trusted = ws.run("trust")
    assert trusted.returncode == 0, trusted.stderr
    fake_llm.push(Reply(text="from the trusted server", usage=Usage(10, 1)))
    proc = ws.run("run", "hello")
    assert proc.returncode == 0 and "from the trusted server" in proc.stdout, proc.stderr

    endpoint.write_text(evil.base_url)  # a `git pull` changes the file, not opencode.json
    line = assert_one_line_error(ws.run("run", "hello"))
    assert "provider.fake.options.baseURL" in line and "agentcli trust" in line
    assert evil.requests == []


PLUGIN = """
from pathlib import Path
Path(__file__).with_name("{marker}").write_text("ran")
"""


def test_a_changed_plugin_source_after_trust_asks_again(workspace: Workspace, fake_llm: FakeLLM) -> None:
    ws = untrusting(workspace)
    plugin = ws.project / "tools" / "helper.py"
    plugin.parent.mkdir()
    plugin.write_text(PLUGIN.format(marker="first.marker"))
    project_config(ws, {"plugin": ["tools/helper.py"]})
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True)
    (global_dir / "opencode.json").write_text(
        json.dumps({"model": "fake/test-model", "provider": provider(ws.base_url)})
    )
    assert ws.run("trust").returncode == 0
    fake_llm.push(Reply(text="ok", usage=Usage(10, 1)))
    assert ws.run("run", "hello").returncode == 0
    assert (plugin.parent / "first.marker").exists()

    plugin.write_text(PLUGIN.format(marker="second.marker"))  # new code behind the same config
    line = assert_one_line_error(ws.run("run", "hello"))
    assert "plugin[0]" in line
    assert not (plugin.parent / "second.marker").exists()


# --------------------------------------------------------------------------- instruction files outside

NOTES_SECRET = "private-notes-behind-agents-md-17"


def users_provider(ws: Workspace) -> None:
    global_dir = ws.home / ".config" / "opencode"
    global_dir.mkdir(parents=True, exist_ok=True)
    (global_dir / "opencode.json").write_text(
        json.dumps({"model": "fake/test-model", "provider": provider(ws.base_url)})
    )


@pytest.mark.parametrize("name", ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"])
def test_an_instruction_file_linking_outside_waits_for_trust(
    workspace: Workspace, fake_llm: FakeLLM, name: str
) -> None:
    from agentcli.trusted_config import load_config, record_trust

    ws = untrusting(workspace)
    users_provider(ws)
    (ws.project / "opencode.json").unlink()
    (ws.home / "notes.md").write_text(NOTES_SECRET)
    (ws.project / name).symlink_to(ws.home / "notes.md")
    line = assert_one_line_error(ws.run("run", "hello"))
    assert name in line and "agentcli trust" in line
    assert fake_llm.requests == []

    record_trust(load_config(ws.project, ws.env).trust, False, ws.env)  # type: ignore[arg-type]
    fake_llm.push(Reply(text="ok", usage=Usage(10, 1)))
    proc = ws.run("run", "hello")  # declined: the run goes on without it
    assert proc.returncode == 0, proc.stderr
    assert NOTES_SECRET not in json.dumps(fake_llm.chat_requests()[0].body)

    trusted = ws.run("trust")
    assert trusted.returncode == 0 and name in trusted.stdout, trusted.stdout + trusted.stderr
    fake_llm.requests.clear()
    fake_llm.push(Reply(text="ok", usage=Usage(10, 1)))
    assert ws.run("run", "hello").returncode == 0
    assert NOTES_SECRET in json.dumps(fake_llm.chat_requests()[0].body)

    (ws.home / "notes.md").write_text("changed notes")  # what it says is part of the answer
    assert name in assert_one_line_error(ws.run("run", "hello"))


def test_instructions_in_another_users_home_or_an_absolute_path_need_trust(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    import pwd

    ws = untrusting(workspace)
    users_provider(ws)
    user = pwd.getpwuid(os.getuid()).pw_name  # `~user` is that user's home, whatever HOME says
    project_config(ws, {"instructions": [f"~{user}/.notes.md", "/etc/hostname", "docs/*.md"]})
    line = assert_one_line_error(ws.run("run", "hello"))
    assert "instructions[0]" in line and "instructions[1]" in line and "instructions[2]" not in line
    assert fake_llm.requests == []


# --------------------------------------------------------------------------- the memory plugin's plans

PLAN_TEXT = "1. write the tests first"


def read_plan(name: str, call_id: str) -> ToolCall:
    return ToolCall("memory", {"tool": "plans", "args": {"read": name}}, id=call_id)


def test_memory_plans_read_through_the_read_tools_permission_checks(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    ws = workspace
    ws.write_config({"plugin": ["memory"]})
    (ws.home / ".aws").mkdir()
    (ws.home / ".aws" / "credentials").write_text(f"[default]\n{HOME_SECRET}\n")
    (ws.home / "notes.md").write_text(NOTES_SECRET)
    plans = ws.project / ".opencode" / "plans"
    plans.mkdir(parents=True)
    (plans / "honest.md").write_text(PLAN_TEXT)
    (plans / "creds.md").symlink_to(ws.home / ".aws" / "credentials")
    (plans / "notes.md").symlink_to(ws.home / "notes.md")
    (ws.home / "shared").mkdir()
    (ws.home / "shared" / "elsewhere.md").write_text(NOTES_SECRET)
    (ws.project / ".agentcli").mkdir()
    (ws.project / ".agentcli" / "plans").symlink_to(ws.home / "shared")  # a plans folder leading out
    fake_llm.push(
        Reply(
            tool_calls=[
                read_plan("honest", "call_honest"),
                read_plan("creds", "call_creds"),
                read_plan("notes", "call_notes"),
                read_plan("elsewhere", "call_elsewhere"),
                ToolCall("memory", {"tool": "plans"}, id="call_list"),
            ]
        ),
        Reply(text="done", usage=Usage(100, 5)),
    )
    proc = ws.run("run", "read the plans")  # nobody to ask: what would be asked is refused
    assert proc.returncode == 3, proc.stderr  # 3: a tool was refused because nobody could be asked
    results = {
        m["tool_call_id"]: str(m["content"])
        for m in fake_llm.chat_requests()[-1].body["messages"]
        if m["role"] == "tool"
    }
    assert PLAN_TEXT in results["call_honest"]
    assert "rejected permission" in results["call_creds"] and "rejected permission" in results["call_notes"]
    assert "No plan 'elsewhere'" in results["call_elsewhere"]
    assert "honest.md" in results["call_list"] and "elsewhere" not in results["call_list"]
    assert ".agentcli/plans: not read, permission refused" in results["call_list"]
    body = json.dumps([r.body for r in fake_llm.chat_requests()])
    assert HOME_SECRET not in body and NOTES_SECRET not in body
    assert "credentials" in proc.stderr and "notes.md" in proc.stderr  # the one-line hints say what


@pytest.mark.parametrize(
    ("config_dir", "spec", "file"),
    [
        ("", "tools/helper.py", "tools/helper.py"),
        (".opencode", "file://./plugins/p.py", ".opencode/plugins/p.py"),  # beside the config file
        ("", "file://./p.py", "p.py"),
    ],
)
def test_each_plugin_spec_form_hashes_the_file_it_loads(
    tmp_path: Path, config_dir: str, spec: str, file: str
) -> None:
    from agentcli.trusted_config import load_config, record_trust

    proj, home = tmp_path / "proj", tmp_path / "home"
    (proj / ".git").mkdir(parents=True)
    (proj / config_dir).mkdir(parents=True, exist_ok=True)
    (proj / config_dir / "opencode.json").write_text(json.dumps({"plugin": [spec]}))
    (proj / file).parent.mkdir(parents=True, exist_ok=True)
    (proj / file).write_text("x = 1\n")
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    state = load_config(proj, env).trust
    assert state is not None and state.pending
    record_trust(state, True, env)
    assert load_config(proj, env).trust.trusted  # type: ignore[union-attr]
    (proj / file).write_text("x = 2\n")
    assert load_config(proj, env).trust.pending  # type: ignore[union-attr]


def test_a_module_plugin_is_hashed_without_being_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentcli.trusted_config import load_config, record_trust

    proj, home, site = tmp_path / "proj", tmp_path / "home", tmp_path / "site"
    (proj / ".git").mkdir(parents=True)
    (site / "teamplug").mkdir(parents=True)
    (site / "teamplug" / "__init__.py").write_text("raise SystemExit('imported while hashing')\n")
    (site / "teamplug" / "hooks.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(site))
    (proj / "opencode.json").write_text(json.dumps({"plugin": ["teamplug.hooks"]}))
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    record_trust(load_config(proj, env).trust, True, env)  # type: ignore[arg-type]
    assert load_config(proj, env).trust.trusted  # type: ignore[union-attr]
    (site / "teamplug" / "hooks.py").write_text("x = 2\n")
    assert load_config(proj, env).trust.pending  # type: ignore[union-attr]
