"""One MCP server's life on the host's event loop, through the official SDK: start the transport
(stdio for a local server; streamable HTTP, then SSE, for a remote one), shake hands, list the tools,
serve calls until asked to stop or until the server goes away.

Imported by the host's thread only (it imports the SDK). Every context (transport, task group,
session) is entered and left by the one task that serves the server, as anyio requires.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx
from mcp import ClientSession, McpError, types
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agentcli import __version__
from agentcli.mcp.state import ServerState

T = TypeVar("T")
Page = TypeVar("Page", bound=types.PaginatedResult)

Opener = Callable[[], AbstractAsyncContextManager[Any]]
CLIENT = types.Implementation(name="agentcli", version=__version__)
HTTP_TIMEOUT = httpx.Timeout(30.0, read=300.0)  # the SDK's own defaults for streamable HTTP
# Seconds a tool call may take (the server's ``timeout`` when longer; AGENTCLI_MCP_CALL_TIMEOUT sets
# it outright): the TypeScript SDK's request timeout, which OpenCode's calls get. The call then fails
# as the tool's error and the turn goes on.
CALL_LIMIT = 60.0


def call_limit(state: ServerState) -> float:
    said = os.environ.get("AGENTCLI_MCP_CALL_TIMEOUT", "")
    try:
        return float(said) if float(said) > 0 else max(CALL_LIMIT, state.timeout)
    except ValueError:
        return max(CALL_LIMIT, state.timeout)


class ServerGone(Exception):
    """The server is not connected (it failed, died or was stopped)."""


class CallTimedOut(ServerGone):
    """A call got no answer in time (the server lives on; the call is cancelled)."""


def describe(exc: BaseException) -> str:
    """One line for a failure; the first leaf of an exception group (anyio wraps task failures)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, McpError):
        return exc.error.message
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _stdio(state: ServerState, errlog: Any) -> Opener:
    entry = state.entry
    params = StdioServerParameters(
        command=entry.command[0],
        args=list(entry.command[1:]),
        env={**os.environ, **entry.environment},  # as OpenCode: the user's environment, then the entry's
        cwd=state.directory,
    )
    return lambda: stdio_client(params, errlog=errlog)


@asynccontextmanager
async def _streamable(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    async with (
        httpx.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT) as client,
        streamable_http_client(url, http_client=client) as streams,
    ):
        yield streams


def transports(state: ServerState, errlog: Any) -> list[tuple[str, Opener]]:
    entry = state.entry
    if entry.type == "local":
        return [("stdio", _stdio(state, errlog))]
    headers = dict(entry.headers)
    both: list[tuple[str, Opener]] = [
        ("streamable-http", lambda: _streamable(entry.url, headers)),
        ("sse", lambda: sse_client(entry.url, headers=headers, timeout=HTTP_TIMEOUT.connect or 30.0)),
    ]
    # A config entry tries streamable HTTP, then SSE; an editor's server names its one transport
    # (agentcli.config.McpRemoteOver), so its failure is that transport's and no time goes to the other.
    only = getattr(entry, "transport", None)
    return [(label, opener) for label, opener in both if only in (None, label)]


async def all_pages(method: Callable[..., Awaitable[Page]], items: Callable[[Page], list[T]]) -> list[T]:
    """Every item of a paginated MCP listing, following ``nextCursor`` to the last page."""
    found: list[T] = []
    cursor: str | None = None
    while True:
        page = await method(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        found += items(page)
        cursor = page.nextCursor
        if not cursor:
            return found


async def list_tools(session: ClientSession) -> list[types.Tool]:
    return await all_pages(session.list_tools, lambda page: page.tools)


async def _pump(source: Any, sink: Any, state: ServerState) -> None:
    """Forward the transport's messages to the session; when they end, the server went away."""
    async with sink:
        async for item in source:
            await sink.send(item)
    if not state.closing and state.status == "connected":
        state.died = True  # its tools are not offered from now on
        state.settled.clear()  # set again once it is wound down (then it may be restarted)
    state.stop.set()


async def _session(state: ServerState, label: str, opener: Opener) -> None:
    async with opener() as streams, anyio.create_task_group() as tasks:
        sink, inbound = anyio.create_memory_object_stream[Any](0)
        tasks.start_soon(_pump, streams[0], sink, state)

        async def on_message(message: Any) -> None:
            root = getattr(message, "root", None)
            if isinstance(root, types.ToolListChangedNotification):
                tasks.start_soon(_relist, state)  # not here: the answer arrives through this same loop
            elif isinstance(root, types.PromptListChangedNotification):
                tasks.start_soon(_relist_prompts, state)

        async with ClientSession(
            inbound, streams[1], client_info=CLIENT, message_handler=on_message
        ) as session:
            await session.initialize()
            try:  # started: its ``timeout`` bounds the listing (OpenCode: "Failed to get tools")
                state.tools = await asyncio.wait_for(list_tools(session), state.timeout)
            except TimeoutError:
                raise RuntimeError(f"did not list its tools within {state.timeout:g} s") from None
            caps = session.get_server_capabilities()
            state.resources = caps is not None and caps.resources is not None
            if caps is not None and caps.prompts is not None:
                await _list_prompts(state, session)
            state.session, state.transport = session, label
            state.ready_after = time.monotonic() - state.started
            state.status = "connected"
            state.settled.set()
            if state.late and state.on_ready is not None:
                state.on_ready()
            state.changed()
            await state.stop.wait()
            state.session = None
        tasks.cancel_scope.cancel()


async def _relist(state: ServerState) -> None:
    session = state.session
    if session is not None:
        try:
            state.tools = await list_tools(session)
        except Exception:  # keep the tools it had; a dead server is noticed by the pump
            return


async def list_prompts(session: ClientSession) -> list[types.Prompt]:
    return await all_pages(session.list_prompts, lambda page: page.prompts)


async def _list_prompts(state: ServerState, session: ClientSession) -> None:
    """Its prompts (the chat's ``/server:prompt`` commands); a server that fails to list them keeps
    its tools (OpenCode logs the failure and offers no command)."""
    try:
        state.prompts = await asyncio.wait_for(list_prompts(session), state.timeout)
    except Exception:
        state.prompts = []


async def _relist_prompts(state: ServerState) -> None:
    if state.session is not None:
        await _list_prompts(state, state.session)
        state.changed()


async def _connect(state: ServerState) -> str:
    """Serve until stopped; the reason it ended (empty when asked to stop)."""
    error = "no transport"
    for label, opener in transports(state, state.errlog):
        try:
            await _session(state, label, opener)
        except Exception as exc:
            error = describe(exc)
            if state.status == "connected":  # it was serving: the connection broke
                state.died = not state.closing
                return error
            continue  # the next transport (SSE after streamable HTTP)
        return "" if state.closing else "the connection closed"
    return error


async def serve(state: ServerState, notify: Callable[[str], None]) -> None:
    """Run one server from start to end, recording how it ended and telling the user in one line."""
    state.stop = asyncio.Event()
    try:
        reason = await _connect(state)
    except asyncio.CancelledError:
        state.session = None
        if state.timed_out:  # failed and told at its deadline (see time_out)
            return
        state.status = "stopped"  # the host is closing
        state.settled.set()
        raise
    state.session = None
    if state.closing:
        state.status = "stopped"
        state.settled.set()
    else:
        _fail(state, reason, notify)


def time_out(state: ServerState, notify: Callable[[str], None]) -> None:
    """Its deadline passed while it was still starting: failed and told now, not once the SDK has wound
    the process down (seconds for one that ignores its closed stdin: a `run` would have left unheard)."""
    state.timed_out = True
    _fail(state, f"did not start within {state.limit - state.started:g} s", notify)
    state.task.cancel()


def _fail(state: ServerState, reason: str, notify: Callable[[str], None]) -> None:
    state.status = "failed"
    state.error = _with_log(reason, state)
    notify(_notice(state))
    state.settled.set()


def _notice(state: ServerState) -> str:
    if not state.died:
        return f"mcp server {state.name} failed to start: {state.error}"
    then = (
        "it is restarted at the next step" if state.restartable() else "its tools are gone for this session"
    )
    return f"mcp server {state.name} stopped ({state.error}); {then}"


def _with_log(reason: str, state: ServerState) -> str:
    """A local server's last line on stderr usually says why it failed (a missing module, a bad flag)."""
    if state.log_path is None:
        return reason
    try:
        with open(state.log_path, encoding="utf-8", errors="replace") as fh:
            fh.seek(state.log_offset)
            lines = [line.strip() for line in fh.read()[-4000:].splitlines() if line.strip()]
    except OSError:
        return reason
    if not lines:
        return reason
    last = lines[-1] if len(lines[-1]) <= 200 else lines[-1][:199] + "…"
    return f"{reason} — {last}"


def _connected(state: ServerState) -> ClientSession:
    session = state.session
    if state.status != "connected" or session is None:
        why = f"{state.status}: {state.error}" if state.error else state.status
        raise ServerGone(f"MCP server {state.name} is not connected ({why})")
    return session


Progress = Callable[[float, float | None, str | None], None]


async def call(
    state: ServerState, tool: str, args: dict[str, Any], report: Progress | None = None
) -> types.CallToolResult:
    session = _connected(state)

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if report is not None:
            report(progress, total, message)

    # With a callback the SDK sends a progressToken, which is what makes a server report progress.
    calling = session.call_tool(tool, args, progress_callback=on_progress if report else None)
    return await _raced(state, calling, f"MCP tool {tool}")


async def request(state: ServerState, what: str, make: Callable[[ClientSession], Any]) -> Any:
    """Another request than a tool call (a resource read, a prompt), under the same limit and race."""
    return await _raced(state, make(_connected(state)), what)


async def _raced(state: ServerState, coro: Any, what: str) -> Any:
    # Raced against the server's end: a call in flight when the server dies must not wait forever.
    stopped = asyncio.ensure_future(state.stop.wait())
    calling = asyncio.ensure_future(coro)
    limit = call_limit(state)
    try:
        await asyncio.wait((calling, stopped), timeout=limit, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
        if not calling.done():
            calling.cancel()
    if not calling.done() and not state.stop.is_set():  # the turn goes on: the call is the tool's error
        raise CallTimedOut(f"{what} of server {state.name} did not answer within {limit:g} s")
    if not calling.done() or calling.cancelled():
        raise ServerGone(f"MCP server {state.name} stopped during the call")
    return calling.result()
