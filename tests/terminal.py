"""Driving agentcli in a real pseudo-terminal (pexpect), as a user at a terminal does."""

from __future__ import annotations

import pexpect

from tests.workspace import Workspace, agentcli_argv

PROMPT = "›"  # prompt_toolkit moves the cursor instead of printing the space


def spawn(
    ws: Workspace, *args: str, env: dict[str, str] | None = None, timeout: float = 30, prompt: bool = True
) -> pexpect.spawn:
    """``agentcli *args`` in a 40x160 terminal; waits for the first prompt unless ``prompt`` is False."""
    argv = agentcli_argv()
    full_env = {**ws.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", **(env or {})}
    child = pexpect.spawn(
        argv[0],
        [*argv[1:], *args],
        cwd=str(ws.project),
        env=full_env,
        encoding="utf-8",
        timeout=timeout,
        dimensions=(40, 160),
    )
    if prompt:
        child.expect(PROMPT)
    return child


def leave(child: pexpect.spawn) -> int:
    """Ctrl-D at the prompt; the exit status."""
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


def say(child: pexpect.spawn, line: str, *expected: str) -> None:
    """Type ``line`` and Enter; wait for each of ``expected`` in turn, then for the next prompt."""
    child.send(line + "\r")
    for pattern in expected:
        child.expect(pattern)
    child.expect(PROMPT)
