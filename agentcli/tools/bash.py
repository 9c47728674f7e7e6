"""bash: run a shell command in its own process group, with a timeout and prompt abort."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

from pydantic import Field

from agentcli.store.records import ToolMetadata
from agentcli.tools import sandbox
from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.common import ask, check_access, resolve
from agentcli.tools.params import ToolParams
from agentcli.tools.truncate import truncate_output

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
_KILL_GRACE_S = 0.2  # SIGTERM first, SIGKILL the group if it is still there after this
_POLL_S = 0.05
MAX_CAPTURE_BYTES = 16 * 1024 * 1024  # a runaway command must not eat the memory; keep the newest

DESCRIPTION = """Run a command in a bash shell (`bash -c`) and return its output.

Usage:
- command is required. workdir sets the directory it runs in (default: the session's working
  directory); use workdir instead of `cd <dir> && ...`.
- timeout is in milliseconds: default 120000 (2 minutes), at most 600000 (10 minutes). A command
  still running then is killed together with every process it started.
- stdout and stderr come back merged, in the order they were written. A non-zero exit code is
  reported after the output.
- description: say in 5-10 words what the command does, e.g. "Shows working tree status".
- Very long output is cut to its last lines; the full output is saved to a file you can read or grep.
- Prefer the read, glob, grep, edit and write tools over cat, find, grep, sed and echo redirection.
- Quote paths that contain spaces. Chain dependent commands with && and independent ones as
  separate calls. Do not start interactive programs: there is no input."""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the whole process group (the shell and everything it started)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + _KILL_GRACE_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                # The leader is gone; SIGKILL any children that ignored SIGTERM.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                return
            time.sleep(0.01)


def _always_pattern(command: str) -> str:
    """What an "always" answer should cover: the command word and its subcommand ("git status *")."""
    words = command.split()
    if not words:
        return "*"
    sub = next((w for w in words[1:] if not w.startswith("-")), None)
    return f"{words[0]} {sub} *" if sub and sub.isidentifier() else f"{words[0]} *"


class _Capture:
    """The command's output, keeping only the newest MAX_CAPTURE_BYTES."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.dropped = 0

    def add(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        while self.size > MAX_CAPTURE_BYTES and len(self.chunks) > 1:
            old = self.chunks.popleft()
            self.size -= len(old)
            self.dropped += len(old)

    def text(self) -> str:
        body = b"".join(self.chunks).decode("utf-8", errors="replace")
        return f"...({self.dropped} bytes of earlier output dropped)...\n{body}" if self.dropped else body


def _read_available(fd: int, sel: selectors.BaseSelector, out: _Capture, wait_s: float) -> bool:
    """Read what the pipe has within ``wait_s``; False once it reached end of file."""
    for _ in sel.select(wait_s):
        data = os.read(fd, 65536)
        if not data:
            return False
        out.add(data)
    return True


def run_command(
    command: str,
    cwd: Path,
    timeout_s: float,
    abort: threading.Event,
    env: dict[str, str] | None = None,
    confined: Any = None,  # a sandbox launcher (tools/sandbox.py) to start it with; None: unconfined
) -> tuple[str, int | None, str | None]:
    """Run ``command``; return (merged output, exit code, "timeout" | "abort" | None)."""
    if confined is not None:
        proc = confined.spawn(["bash", "-c", command], cwd, {**os.environ, **(env or {})})
    else:
        proc = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            env={**os.environ, **env} if env else None,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a kill reaches grandchildren too
        )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    out = _Capture()
    stopped: str | None = None
    deadline = time.monotonic() + timeout_s
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        open_pipe = True
        while True:
            if abort.is_set():
                stopped = "abort"
            elif time.monotonic() >= deadline:
                stopped = "timeout"
            if stopped:
                _kill_group(proc)
                break
            if open_pipe:
                open_pipe = _read_available(fd, sel, out, _POLL_S)
            else:
                with contextlib.suppress(subprocess.TimeoutExpired):  # output closed, still running:
                    proc.wait(_POLL_S)  # back as soon as it exits, not a whole poll later
            # Done when the shell has exited and the pipe is drained (a background child may keep
            # it open forever: take what is there and do not wait for it).
            if proc.poll() is not None and not (open_pipe and sel.select(0)):
                break
        if open_pipe:
            _read_available(fd, sel, out, 0)
    proc.stdout.close()
    try:
        code = proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        code = None
    return out.text(), code, stopped


class BashParams(ToolParams):
    command: str = Field(description="The command to execute")
    timeout: int | None = Field(None, description="Optional timeout in milliseconds (max 600000)")
    workdir: str | None = Field(
        None,
        description="The working directory to run the command in. Defaults to the session's "
        "working directory. Use this instead of 'cd' commands.",
    )
    description: str = Field(description="Clear, concise description of what this command does in 5-10 words")


class BashTool(Tool[BashParams]):
    name = "bash"
    description = DESCRIPTION
    params = BashParams
    self_truncates = True  # keeps the tail (errors come last), not the head

    def execute(self, args: BashParams, ctx: ToolContext) -> ToolResult:
        command, description = args.command, args.description
        if not command.strip():
            raise ToolError("command must not be empty")
        timeout_ms = args.timeout
        if timeout_ms is not None and timeout_ms < 0:
            raise ToolError(f"Invalid timeout value: {timeout_ms}. Timeout must be a positive number.")
        timeout_ms = min(int(timeout_ms or DEFAULT_TIMEOUT_MS), MAX_TIMEOUT_MS)
        cwd = resolve(ctx, args.workdir) if args.workdir else ctx.directory
        if args.workdir:
            check_access(ctx, cwd, "bash workdir", reading=False)
        if not cwd.is_dir():
            raise ToolError(f"workdir is not a directory: {cwd}")

        # Each simple command is matched on its own (see tools/shell_commands.py; loaded on the first
        # call: its grammars are a tenth of a short turn's own import, and most turns run no command).
        from agentcli.tools.shell_commands import bash_request

        request = bash_request(command)
        request.metadata = {"command": command, "always": [_always_pattern(c) for c in request.patterns]}
        ask(
            ctx,
            "bash",
            command,
            request.patterns,
            request.metadata,
            unsure=request.unsure,
            partial=request.partial,
            maybe=request.maybe,
        )
        try:
            confined = sandbox.spawner(ctx.sandbox, ctx.root)
            output, code, stopped = run_command(command, cwd, timeout_ms / 1000, ctx.abort, ctx.env, confined)
        except sandbox.CannotConfine as exc:
            raise ToolError(str(exc)) from None

        notes = []
        if stopped == "timeout":
            notes.append(f"bash tool terminated command after exceeding timeout {timeout_ms} ms")
        elif stopped == "abort":
            notes.append("User aborted the command")
        elif code:
            notes.append(f"Command exited with code {code}")
        cut = truncate_output(
            output,
            max_lines=ctx.max_lines,
            max_bytes=ctx.max_bytes,
            output_dir=ctx.output_dir,
            direction="tail",
        )
        text = cut.content
        if notes:
            text += "\n\n<bash_metadata>\n" + "\n".join(notes) + "\n</bash_metadata>"
        metadata = ToolMetadata(
            output=output[:30_000], exit=code, description=description, truncated=cut.truncated
        )
        if cut.output_path:
            metadata.output_path = str(cut.output_path)
        if stopped == "timeout":
            metadata.timed_out = True
        elif stopped == "abort":
            metadata.aborted = True
        return ToolResult(output=text, title=description or command, metadata=metadata.dump())
