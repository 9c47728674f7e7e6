"""Startup is a feature: the light commands never import litellm (it takes seconds to import)."""

from __future__ import annotations

import subprocess

import pytest

from tests.workspace import Workspace, agentcli_argv


def imported_modules(ws: Workspace, *args: str) -> set[str]:
    proc = subprocess.run([*agentcli_argv(), *args], cwd=ws.project, env={**ws.env, "PYTHONPROFILEIMPORTTIME": "1"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize(
    "args",
    [("--help",), ("--version",), ("sessions", "list"), ("sessions", "list", "--json"), ("config", "list"),
     ("config", "path"), ("sessions", "--help"), ("run", "--help"), ("models", "gpt-4o")],
)
def test_light_commands_never_import_litellm(workspace: Workspace, args: tuple[str, ...]) -> None:
    modules = imported_modules(workspace, *args)
    assert "typer" in modules  # the probe works: imports are being reported
    assert not any(m == "litellm" or m.startswith("litellm.") for m in modules)


def test_sessions_show_never_imports_litellm(workspace: Workspace) -> None:
    store = workspace.store()
    sid = store.create_session(str(workspace.project), "fake/test-model", title="t").id
    modules = imported_modules(workspace, "sessions", "show", sid)
    assert "litellm" not in modules


def test_version_output() -> None:
    proc = subprocess.run([*agentcli_argv(), "--version"], capture_output=True, text=True, timeout=30)
    from agentcli import __version__

    assert proc.stdout.strip() == f"agentcli {__version__}"


def test_help_lists_every_command_including_the_lazily_mounted_config() -> None:
    proc = subprocess.run([*agentcli_argv(), "--help"], capture_output=True, text=True, timeout=30)
    for command in ("chat", "run", "compact", "models", "sessions", "config"):
        assert f"  {command} " in proc.stdout, proc.stdout


def test_a_turn_on_the_lean_path_never_imports_litellm(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply, ToolCall

    fake_llm.push(Reply(text="Looking.", tool_calls=[ToolCall("glob", {"pattern": "*.py"})]), Reply(text="hi there"))
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"  # the default choice, even when the suite runs forced
    modules = imported_modules(workspace, "run", "--yes", "say hi")
    assert "agentcli.llm.lean_path" in modules  # the probe works: the turn ran on the lean path
    assert not any(m == "litellm" or m.startswith(("litellm.", "openai")) for m in modules)
    [session] = workspace.store().list_sessions()
    assert session.title == "Scripted title" and session.tokens.total > 0  # title and usage without litellm


def test_the_litellm_path_can_be_forced(workspace: Workspace, fake_llm) -> None:  # type: ignore[no-untyped-def]
    from tests.fakellm import Reply

    fake_llm.push(Reply(text="hi there"))
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "litellm"
    modules = imported_modules(workspace, "run", "say hi")
    assert "litellm" in modules and "agentcli.llm.lean_path" not in modules
