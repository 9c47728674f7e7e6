"""Files at rest: after a full session (a run with tool calls and a spilled output, a chat, a key
set with `config set`, a trusted folder) every file agentcli wrote under its data and config
folders is 0600 and every folder 0700, whatever the umask. And `config list/get` mask secrets."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests import zygote_pty
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.workspace import Workspace, agentcli_argv


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The usual umask (group and others may read), inherited by the agentcli subprocesses."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def modes(folder: Path) -> dict[str, int]:
    found = {str(folder): stat.S_IMODE(folder.stat().st_mode)}
    for path in folder.rglob("*"):
        found[str(path)] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_everything_written_under_data_and_config_dirs_is_private(
    workspace: Workspace, fake_llm: FakeLLM, open_umask: None
) -> None:
    data = workspace.home / ".local" / "share" / "agentcli"
    config = workspace.home / ".config" / "agentcli"
    workspace.db = data / "agentcli.db"  # the default place
    workspace.db_url = ""
    workspace.write_config({"tool_output": {"max_lines": 5}})
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall(
                    "bash", {"command": "seq 1 50; echo DB_PASSWORD=hunter2-secret", "description": "list"}
                )
            ],
            usage=Usage(900, 10),
        ),
        Reply(text="done", usage=Usage(1_000, 5)),
    )
    proc = workspace.run("run", "--yes", "count")
    assert proc.returncode == 0, proc.stderr
    assert (
        workspace.run("config", "set", "provider.fake.options.apiKey", "sk-user-key-123456").returncode == 0
    )
    assert workspace.run("trust").returncode == 0

    fake_llm.push(Reply(text="hello back", usage=Usage(500, 5)))
    argv = agentcli_argv()
    child = zygote_pty.spawn(
        argv[0],
        [*argv[1:], "chat", "--continue"],
        cwd=str(workspace.project),
        env={**workspace.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"},
        encoding="utf-8",
        timeout=30,
        dimensions=(40, 120),
    )
    child.expect("›")
    child.send("hello\r")
    child.expect("hello back")
    child.expect("›")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)

    written = {**modes(data), **modes(config)}
    names = {Path(p).name for p in written}
    spills = [p for p in written if Path(p).parent.name == "tool-output"]
    assert {"agentcli.db", "chat_history", "config.toml", "trust.json", "tool-output"} <= names and spills
    wrong = {p: oct(m) for p, m in written.items() if m != (0o700 if Path(p).is_dir() else 0o600)}
    assert wrong == {}


def run_config(ws: Workspace, *args: str) -> str:
    proc = ws.run("config", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_config_list_and_get_mask_secrets_unless_asked(workspace: Workspace) -> None:
    key = "sk-user-own-key-987654"
    assert key not in run_config(workspace, "set", "provider.mine.options.apiKey", key)
    run_config(workspace, "set", "provider.mine.options.headers", '{"Authorization": "Bearer abc123def456"}')
    listed = run_config(workspace, "list")
    assert key not in listed and "abc123def456" not in listed
    assert 'provider.mine.options.apiKey = "********"' in listed
    assert "compaction.auto = true" in listed  # ordinary values print as they are
    assert run_config(workspace, "get", "provider.mine.options.apiKey").strip() == "********"
    assert "abc123def456" not in run_config(workspace, "get", "provider.mine")
    assert "abc123def456" not in run_config(workspace, "list", "--json")
    assert key in run_config(workspace, "list", "--show-secrets")
    assert run_config(workspace, "get", "--show-secrets", "provider.mine.options.apiKey").strip() == key
    assert (
        run_config(workspace, "get", "--user", "--show-secrets", "provider.mine.options.apiKey").strip()
        == key
    )
