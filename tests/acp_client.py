"""An ACP client for the tests: ``agentcli acp`` spawned as a subprocess, spoken to through the
``agent-client-protocol`` package's own client side, every line the agent writes on stdout kept
raw (to check that each is JSON-RPC), stderr kept in a file.

``Editor`` is the client: it records every session update, answers permission questions from a
script of option ids, and (with ``fs=True``) serves file reads and writes from its own buffers,
falling back to the disk like an editor with the file not open."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tests import zygote_async
from tests.workspace import Workspace, agentcli_argv

STREAM_LIMIT = 50 * 1024 * 1024


@dataclass
class Asked:
    session_id: str
    tool_call: ToolCallUpdate
    options: list[PermissionOption]


@dataclass
class Editor:
    """The client side: what the agent sends it, and how it answers."""

    answers: list[str] = field(default_factory=list)  # option ids, one per permission question
    fs: bool = False
    buffers: dict[str, str] = field(default_factory=dict)  # path → unsaved text the editor holds
    updates: list[tuple[str, Any]] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    writes: list[tuple[str, str]] = field(default_factory=list)
    on_update: Callable[[Any], None] | None = None
    hold: asyncio.Event | None = None  # set: questions wait for it, then are answered "cancelled"
    asking: asyncio.Event = field(default_factory=asyncio.Event)  # a question has arrived

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(Asked(session_id, tool_call, options))
        self.asking.set()
        if self.hold is not None:
            await self.hold.wait()  # as the protocol asks, a cancelled turn's question is answered so
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answers.pop(0))
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        if self.on_update is not None:
            self.on_update(update)

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        return ReadTextFileResponse(content=text if text is not None else Path(path).read_text())

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content)  # the editor saves, as Zed does
        return WriteTextFileResponse()

    def capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(fs=FileSystemCapabilities(read_text_file=self.fs, write_text_file=self.fs))

    # --- what was sent ---------------------------------------------------------------------------

    def of_kind(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if getattr(u, "session_update", None) == kind]

    def text(self, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of_kind(kind) if hasattr(u.content, "text"))


@dataclass
class Agent:
    """A running ``agentcli acp``: the package's connection to it and what it wrote."""

    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    stdout_lines: list[bytes]
    stderr_path: Path

    async def start(self, editor: Editor, cwd: Path) -> str:
        await self.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
        session = await self.conn.new_session(cwd=str(cwd), mcp_servers=[])
        return session.session_id

    async def say(self, session_id: str, text: str) -> Any:
        return await self.conn.prompt(session_id=session_id, prompt=[text_block(text)])

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")


@contextlib.asynccontextmanager
async def running_agent(ws: Workspace, editor: Editor, *args: str) -> AsyncIterator[Agent]:
    """``agentcli acp`` in the project, connected to ``editor``; stopped (stdin closed) at the end."""
    stderr_path = ws.root / f"acp-stderr-{len(list(ws.root.glob('acp-stderr-*')))}.log"
    with stderr_path.open("wb") as err:
        process = await zygote_async.create_subprocess_exec(
            *agentcli_argv(),
            "acp",
            *args,
            cwd=ws.project,
            env=ws.env,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            limit=STREAM_LIMIT,
        )
    assert process.stdin is not None and process.stdout is not None
    lines: list[bytes] = []
    tee = asyncio.StreamReader(limit=STREAM_LIMIT)
    pump = asyncio.create_task(_tee(process.stdout, tee, lines))
    conn = ClientSideConnection(editor, process.stdin, tee)
    try:
        yield Agent(conn, process, lines, stderr_path)
    finally:
        with contextlib.suppress(Exception):
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), 30)
        except TimeoutError:
            process.kill()
            await process.wait()
        with contextlib.suppress(Exception):  # a reply still on its way to a process that has left
            await conn.close()
        pump.cancel()


async def _tee(source: asyncio.StreamReader, sink: asyncio.StreamReader, lines: list[bytes]) -> None:
    while line := await source.readline():
        lines.append(line)
        sink.feed_data(line)
    sink.feed_eof()


def every_line_is_json_rpc(lines: list[bytes]) -> None:
    assert lines, "the agent wrote nothing"
    for line in lines:
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0", line


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def raw_exchange(ws: Workspace, lines: list[bytes]) -> list[dict[str, Any]]:
    """Write raw lines to ``agentcli acp`` and read one reply line for each (no client library:
    the lines may be anything). Every line the agent writes must be JSON."""
    process = await zygote_async.create_subprocess_exec(
        *agentcli_argv(),
        "acp",
        cwd=ws.project,
        env=ws.env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=STREAM_LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None
    replies = []
    try:
        for line in lines:
            process.stdin.write(line)
            await process.stdin.drain()
            replies.append(json.loads(await asyncio.wait_for(process.stdout.readline(), 60)))
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 60)
    return replies
