"""The ACP SDK's own example client, unmodified, driving ``agentcli acp``: npm's
@zed-industries/agent-client-protocol 0.4.5 ships ``typescript/examples/client.ts`` (the Python SDK
``agent-client-protocol`` 0.12.1 and npm's ``@agentclientprotocol/sdk`` 2.4.0 ship no example client).
The example spawns ``npx tsx <its folder>/agent.ts``; an ``npx`` first on PATH starts agentcli instead.
It says "Hello, agent!", prints the permission question's title and options, and answers from stdin."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace, agentcli_argv

NPM_DIR = Path(
    os.environ.get("AGENTCLI_TEST_NPM_DIR", Path(__file__).parent.parent / ".ci" / "cache" / "npm")
)
EXAMPLE = NPM_DIR / "node_modules" / "@zed-industries" / "agent-client-protocol" / "typescript" / "examples"


def test_the_sdks_example_client_is_asked_about_a_named_call_and_the_turn_ends(
    workspace: Workspace, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    tsx = NPM_DIR / "node_modules" / ".bin" / "tsx"
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the example client cannot run")
    if not (EXAMPLE / "client.ts").exists() or not tsx.exists():
        pytest.skip(f"the ACP example client is not installed (.ci/run: npm install in {NPM_DIR})")
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    agent = " ".join(shlex.quote(a) for a in [*agentcli_argv(), "acp"])
    (fake_bin / "npx").write_text(f'#!/bin/sh\ncase "$2" in */agent.ts) exec {agent} ;; esac\nexit 99\n')
    (fake_bin / "npx").chmod(0o755)
    workspace.write_config({"permission": {"bash": "ask"}})
    touch = ToolCall("bash", {"command": "touch made.txt", "description": "make the file"})
    fake_llm.push(Reply(tool_calls=[touch]), Reply(text="Hello from agentcli."))
    env = {**workspace.env, "PATH": f"{fake_bin}:{os.environ['PATH']}"}
    proc = subprocess.run(
        [str(tsx), str(EXAMPLE / "client.ts")],
        cwd=workspace.project,
        env=env,
        input="1\n",  # the first option: allow once
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout
    assert "Connected to agent (protocol v1)" in out, proc.stdout + proc.stderr
    assert "Permission requested: bash make the file" in out  # the call's title, not "undefined"
    assert "1. Allow once (allow_once)" in out
    assert "Hello from agentcli." in out
    assert "Agent completed with: end_turn" in out
    assert (workspace.project / "made.txt").exists()
