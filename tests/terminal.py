"""Driving agentcli in a real pseudo-terminal (pexpect), as a user at a terminal does."""

from __future__ import annotations

import pexpect
import pyte

from tests import zygote_pty
from tests.workspace import Workspace, agentcli_argv

PROMPT = "›"  # prompt_toolkit moves the cursor instead of printing the space


def spawn(
    ws: Workspace,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 30,
    prompt: bool = True,
    size: tuple[int, int] = (40, 160),
) -> pexpect.spawn:
    """``agentcli *args`` in a terminal of ``size`` (rows, columns), 40x160 unless told; waits for the
    first prompt unless ``prompt`` is False."""
    argv = agentcli_argv()
    full_env = {**ws.env, "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1", **(env or {})}
    if size != (40, 160):
        full_env["COLUMNS"] = ""  # the terminal's own width, as in a user's shell (ws.env pins 120)
    child = zygote_pty.spawn(
        argv[0],
        [*argv[1:], *args],
        cwd=str(ws.project),
        env=full_env,
        encoding="utf-8",
        timeout=timeout,
        dimensions=size,
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


class Screen:
    """What the user sees in ``child``'s terminal: everything it writes, run through a terminal emulator
    (pyte) of the same size, so that lines wrap where the terminal wraps them. Attach before the
    output to watch starts (``Screen(spawn(..., prompt=False), size)``)."""

    def __init__(self, child: pexpect.spawn, size: tuple[int, int]) -> None:
        rows, columns = size
        self.columns = columns
        self._screen = pyte.Screen(columns, rows)
        self._stream = pyte.Stream(self._screen)
        child.logfile_read = self

    def write(self, data: str) -> None:  # pexpect's logfile interface
        self._stream.feed(data)

    def flush(self) -> None:
        pass

    @property
    def lines(self) -> list[str]:
        return [line.rstrip() for line in self._screen.display]

    def shows(self, text: str) -> bool:
        """``text`` is on screen with its words whole (however it is wrapped or indented)."""
        joined = " ".join(line.strip() for line in self.lines if line.strip())
        return " ".join(text.split()) in joined

    def __str__(self) -> str:
        return "\n".join(line for line in self.lines if line)


def words_split(lines: list[str], source: str) -> list[str]:
    """The words of ``source`` that ``lines`` (a rendering of it) show cut in two across a line end."""
    shown = set(" ".join(lines).split())
    return [word for word in source.split() if word not in shown]
