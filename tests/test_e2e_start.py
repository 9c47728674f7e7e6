"""The first minutes: bare `agentcli` opens the chat, `-h` is `--help`."""

from __future__ import annotations

import subprocess

from tests.fakellm import FakeLLM, Reply, Usage
from tests.terminal import PROMPT, leave, spawn
from tests.workspace import Workspace, agentcli_argv


def test_bare_agentcli_starts_the_chat(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="Hi there from a bare start", usage=Usage(700, 5)))
    child = spawn(workspace)
    child.send("hello\r")
    child.expect("Hi there from a bare start")
    child.expect(PROMPT)
    assert leave(child) == 0


def test_dash_h_is_help_everywhere(workspace: Workspace) -> None:
    for args in ((), ("sessions",), ("run",)):
        long = workspace.run(*args, "--help")
        short = workspace.run(*args, "-h")
        assert short.returncode == 0, short.stderr
        assert short.stdout == long.stdout
        assert "Usage:" in short.stdout


def test_bare_agentcli_in_a_pipe_points_to_run(workspace: Workspace) -> None:
    proc = subprocess.run(agentcli_argv(), cwd=workspace.project, env=workspace.env, input="",
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert "agentcli run" in proc.stderr and "Traceback" not in proc.stderr
