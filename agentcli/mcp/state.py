"""One server's state, shared by the host's loop thread (which writes it) and the turn's thread
(which reads it and waits on ``settled``). No SDK types are needed to read it."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentcli.mcp.status import Status

# How long a server may take to start (spawn, install, handshake) before it has failed: the SDK's own
# request timeout, which is all OpenCode gives a starting server (an `npx -y` first run takes 14-23 s).
# Its ``timeout`` bounds the tool listing once it has started, and how long a turn waits for it.
START_LIMIT = 60.0


@dataclass
class ServerState:
    name: str
    entry: Any  # agentcli.config.McpLocal | McpRemote
    directory: Path  # where a local server runs (the project)
    log_path: Path | None = None  # a local server's stderr goes there (private), not to the terminal
    errlog: Any = None  # that file, open while the server runs
    log_offset: int = 0  # its size when this run started: what the run wrote comes after
    status: Status = "starting"
    error: str = ""
    transport: str = ""
    tools: list[Any] = field(default_factory=list)  # the server's tool definitions (mcp.types.Tool)
    prompts: list[Any] = field(default_factory=list)  # its prompts (mcp.types.Prompt): slash commands
    resources: bool = False  # it declared the resources capability (the resource tools are offered)
    session: Any = None  # mcp.ClientSession while connected
    restarts: int = 0
    deadline: float = 0.0  # time.monotonic() until which a turn's first step waits for it
    limit: float = 0.0  # time.monotonic() by which it must be connected (START_LIMIT)
    late: bool = False  # a turn went on without it; it joins the session when ready (told then)
    started: float = 0.0
    ready_after: float | None = None  # seconds from start to its tools listed
    died: bool = False  # it was connected, then the connection ended without being asked to
    timed_out: bool = False
    closing: bool = False
    settled: threading.Event = field(default_factory=threading.Event)  # connected, or failed
    stop: Any = None  # asyncio.Event, made on the loop
    task: Any = None  # asyncio.Task serving it
    on_ready: Any = None  # called on the loop when a late server connects
    on_change: Any = None  # called on the loop when it connects or its prompts change (the commands)

    def changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # a listener's failure must not end the server
                return

    @property
    def kind(self) -> str:
        return str(self.entry.type)

    @property
    def timeout(self) -> float:
        return self.entry.timeout / 1000

    def begin(self) -> None:
        """(Re)start: a fresh deadline, nothing known yet."""
        self.status, self.error, self.transport = "starting", "", ""
        self.tools, self.session, self.ready_after = [], None, None
        self.prompts, self.resources = [], False
        self.died = self.timed_out = self.closing = self.late = False
        self.started = time.monotonic()
        self.deadline = self.started + self.timeout
        self.limit = self.started + max(START_LIMIT, self.timeout)
        self.settled.clear()

    def restartable(self) -> bool:
        """A local server that died while serving is started again once (at the next step)."""
        return self.kind == "local" and self.died and self.restarts == 0 and self.status == "failed"
