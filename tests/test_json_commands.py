"""OpenCode's JSON ``command`` entries are slash commands like ``.opencode/command/*.md`` files: in
the chat, and advertised and run over ACP."""

from __future__ import annotations

from pathlib import Path

from agentcli.acp import commands as acp_commands
from agentcli.app import custom_commands
from agentcli.config.model import Config
from tests.fakellm import FakeLLM, Reply, Usage
from tests.terminal import leave, say, spawn
from tests.workspace import Workspace


def _config() -> Config:
    return Config.model_validate(
        {
            "command": {
                "test": {"template": "Run the tests in $1 and fix $ARGUMENTS", "description": "Run tests"},
                "review": {"template": "JSON review"},
            }
        }
    )


def test_json_commands_are_loaded_and_a_command_file_overrides_one_by_name(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    folder = tmp_path / ".opencode" / "command"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("File review")
    found = custom_commands.load(tmp_path, None, configured=_config().command)
    assert found["test"].expand("tests/ a b") == "Run the tests in tests/ and fix tests/ a b"
    assert found["test"].description == "Run tests"
    assert found["review"].template == "File review"


def test_acp_advertises_and_recognises_json_commands(tmp_path: Path) -> None:
    found = custom_commands.load(tmp_path, None, trusted=False, configured=_config().command)
    advertised = {c.name: c.description for c in acp_commands.available(found)}
    assert advertised["test"] == "Run tests"
    slash = acp_commands.parse("/test unit", found)
    assert slash is not None and slash.custom is not None
    assert slash.custom.expand(slash.arguments) == "Run the tests in unit and fix unit"


def test_a_json_command_sends_its_template_in_the_chat(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"command": {"fixit": {"template": "Fix $ARGUMENTS now", "description": "Fix"}}})
    fake_llm.push(Reply(text="Fixed.", usage=Usage(800, 5)))
    child = spawn(workspace)
    say(child, "/fixit app.py", "Fixed.")
    assert leave(child) == 0
    users = [m for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "user"]
    assert users[-1]["content"] == "Fix app.py now"


def _last_user(fake_llm: FakeLLM) -> str:
    users = [m for m in fake_llm.chat_requests()[0].body["messages"] if m["role"] == "user"]
    return users[-1]["content"]


def test_run_command_sends_a_json_commands_template_with_the_message_as_arguments(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"command": {"test": {"template": "Run the tests in $1 and fix $ARGUMENTS"}}})
    fake_llm.push(Reply(text="Tests fixed.", usage=Usage(800, 5)))
    proc = workspace.run("run", "--command", "test", "unit tests", "fast")
    assert proc.returncode == 0, proc.stderr
    assert "Tests fixed." in proc.stdout
    # opencode run quotes a word with a space: it stays one $1
    assert _last_user(fake_llm) == 'Run the tests in unit tests and fix "unit tests" fast'


def test_run_command_runs_a_command_file_without_a_message(workspace: Workspace, fake_llm: FakeLLM) -> None:
    folder = workspace.project / ".opencode" / "command"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: Review\n---\nReview the latest change.\n")
    fake_llm.push(Reply(text="Reviewed.", usage=Usage(800, 5)))
    proc = workspace.run("run", "--command", "review")
    assert proc.returncode == 0, proc.stderr
    assert _last_user(fake_llm) == "Review the latest change."


def test_run_command_with_an_unknown_name_says_which_there_are(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"command": {"test": {"template": "Test"}, "ship": {"template": "Ship"}}})
    proc = workspace.run("run", "--command", "nope", "x")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        'agentcli: error: command not found: "nope". Available commands: ship, test'
    ]
    assert fake_llm.chat_requests() == []
