"""The MCP servers of one process, run in the background.

One daemon thread runs an asyncio loop that owns every client session; the servers start in
parallel as soon as the host starts, each with its own deadline (``timeout``), so the prompt never
waits for them. The turn's thread asks for what is ready (``tools``), waits only where the loop says
so (``prepare_step``: a turn's first step waits for servers still starting, at most to their
deadline), and calls tools through the loop (``call``). The SDK is imported by that thread only.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from agentcli.mcp.naming import tool_name
from agentcli.mcp.prompts import McpPrompt, as_text
from agentcli.mcp.resources import resource_tools
from agentcli.mcp.state import ServerState
from agentcli.mcp.status import ServerStatus, ToolInfo
from agentcli.mcp.tool import McpTool, Progress
from agentcli.store.records import SessionNotice
from agentcli.tools.base import Tool, ToolError

SETTLE_GRACE = 1.0  # seconds past a deadline for the loop (busy, or late) to record a timed-out start
CALL_POLL = 0.1  # how often a waiting call looks at Ctrl-C
CLOSE_WAIT = 3.0  # seconds servers get to exit when the process ends
WIND_DOWN = 5.0  # seconds a dead server's transport may take to close (the SDK signals after 2 s)


class McpHost:
    def __init__(
        self,
        entries: Mapping[str, Any],
        *,
        directory: Path,
        log_dir: Path | None,
        notify: Callable[[str], None],
        disabled: tuple[tuple[str, str], ...] = (),
        owner: str | None = None,
        changed: Callable[[], None] | None = None,
    ) -> None:
        self.notify = notify
        self.changed = changed  # a server connected or its prompts changed (on the host's thread)
        self.owner = owner  # the agent whose own servers these are (None: the config's `mcp`)
        # Each server that failed to start or died, as the line the user was told; the loop notes
        # them on the sessions they affect (appended by the host's thread, read by the turn's).
        self.notices: list[SessionNotice] = []
        self.disabled = disabled  # (name, kind) configured with "enabled": false: listed, never started
        self.log_dir = log_dir
        self.states = {
            name: ServerState(name=name, entry=entry, directory=directory) for name, entry in entries.items()
        }
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_ready = threading.Event()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="agentcli-mcp", daemon=True)
        self._tools: dict[tuple[str, int], list[McpTool]] = {}

    # --- life ------------------------------------------------------------------------------

    def start(self) -> McpHost:
        for state in self.states.values():
            state.begin()  # deadlines count from now: the SDK's import is part of a server's start
        self._thread.start()
        atexit.register(self.close)
        return self

    def _run(self) -> None:
        # The SDK logs warnings (a refused session delete, a reconnect) that are not the user's business.
        quiet = logging.getLogger("mcp")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        loop = asyncio.new_event_loop()
        self.loop = loop
        try:
            from agentcli.mcp import server  # the SDK, imported here, off the prompt's thread

            self._server = server
            for state in self.states.values():
                self._launch(state)
        except Exception as exc:  # the SDK is missing or broken: every server fails, the rest works
            for state in self.states.values():
                state.status, state.error = "failed", f"cannot load the mcp package: {exc}"
                state.settled.set()
                self._record(state.name, f"mcp server {state.name} failed to start: {state.error}")
            self.notify(f"mcp: cannot load the mcp package ({exc}); no MCP server is started")
        self._loop_ready.set()
        loop.run_forever()

    def _launch(self, state: ServerState) -> None:
        """On the loop: open the server's log, start serving it, and arm its deadline."""
        assert self.loop is not None
        state.errlog = self._open_log(state)
        state.on_ready = lambda: self.notify(_joined(state))
        state.on_change = self.changed
        state.task = self.loop.create_task(self._serve(state))
        self.loop.call_at(self.loop.time() + max(0.0, state.limit - time.monotonic()), self._deadline, state)

    async def _serve(self, state: ServerState) -> None:
        try:
            await self._server.serve(state, lambda line: self._tell(state.name, line))
        finally:
            if state.errlog is not None:
                state.errlog.close()
                state.errlog = None

    def _record(self, server: str, line: str) -> None:
        key = uuid.uuid4().hex
        self.notices.append(SessionNotice(key=key, subject=server, agent=self.owner, text=line))

    def _tell(self, server: str, line: str) -> None:
        """A server failed or died: one line to the user, and a notice for the sessions."""
        self._record(server, line)
        self.notify(line)

    def _deadline(self, state: ServerState) -> None:
        if state.status == "starting" and state.task is not None and not state.task.done():
            self._server.time_out(state, lambda line: self._tell(state.name, line))

    def _open_log(self, state: ServerState) -> Any:
        if state.kind != "local":
            return None
        if self.log_dir is None:
            return open(os.devnull, "w")  # noqa: SIM115 - closed when the server ends
        self.log_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        state.log_path = self.log_dir / f"{state.name}.log"
        fd = os.open(state.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        state.log_offset = os.fstat(fd).st_size
        return os.fdopen(fd, "a", encoding="utf-8")

    def close(self, wait: float = CLOSE_WAIT) -> None:
        """Stop every server (a local one gets its stdin closed, then a signal), at most ``wait`` s."""
        atexit.unregister(self.close)
        loop = self.loop
        if self._closed or loop is None or not self._loop_ready.wait(wait) or loop.is_closed():
            return
        self._closed = True

        async def shutdown() -> None:
            tasks = []
            for state in self.states.values():
                state.closing = True
                if state.stop is not None:
                    state.stop.set()
                if state.task is not None and not state.task.done():
                    if state.status == "starting":
                        state.task.cancel()
                    tasks.append(state.task)
            if tasks:
                await asyncio.wait(tasks, timeout=wait)

        with contextlib.suppress(concurrent.futures.TimeoutError, RuntimeError):
            asyncio.run_coroutine_threadsafe(shutdown(), loop).result(wait + 1)
        loop.call_soon_threadsafe(loop.stop)

    # --- the turn's side ---------------------------------------------------------------------

    def prepare_step(self, first: bool, abort: threading.Event | None = None) -> None:
        """Before a step: restart (once) a local server that died, and wait for the servers this
        step should see — those restarted now, and on a turn's first step those still starting."""
        waiting: list[ServerState] = []
        for state in self.states.values():
            if state.died and not state.settled.is_set():  # died just now: let it be wound down first
                state.settled.wait(WIND_DOWN)
            if state.restartable() and self._loop_ready.is_set():
                state.restarts += 1
                state.begin()
                assert self.loop is not None
                self.loop.call_soon_threadsafe(self._launch, state)
                waiting.append(state)
            elif first and state.status == "starting":
                waiting.append(state)
        for state in waiting:
            until = state.deadline
            while not state.settled.wait(min(CALL_POLL, max(0.0, until - time.monotonic()))):
                if time.monotonic() >= until or (abort is not None and abort.is_set()):
                    break
            if state.status == "starting" and not state.late:
                # It keeps starting in the background (an `npx -y` install) and joins when ready.
                state.late = True
                self.notify(
                    f"mcp server {state.name} is still starting after {state.timeout:g} s; "
                    "the turn goes on, its tools join when it is ready"
                )

    def tools(self) -> list[Tool[Any]]:
        """The tools of every connected server, as the model will see them (no waiting)."""
        out: list[Tool[Any]] = []
        for state in self.states.values():
            if state.status != "connected" or state.died:
                continue
            listed = state.tools
            key = (state.name, id(listed))
            if key not in self._tools:  # built once per tool list (a server may send a new one)
                self._tools = {k: v for k, v in self._tools.items() if k[0] != state.name}
                self._tools[key] = [
                    McpTool(
                        tool_name(state.name, t.name),
                        state.name,
                        t.name,
                        t.description or "",
                        t.inputSchema,
                        self,
                    )
                    for t in listed
                    if not needs_tasks(t)
                ]
            out += self._tools[key]
        if any(state.resources for state in self.connected()):
            out += resource_tools(self)  # OpenCode's list_mcp_resources and read_mcp_resource
        return out

    def call(
        self,
        server: str,
        tool: str,
        args: dict[str, Any],
        abort: threading.Event | None,
        progress: Progress | None = None,
    ) -> Any:
        """Call a tool on the loop and wait for its result; Ctrl-C (``abort``) cancels the call.
        ``progress`` hears the server's progress notifications (on the host's thread)."""
        state = self._state(server)
        return self._wait(state, lambda: self._server.call(state, tool, args, progress), abort)

    def request(
        self, server: str, what: str, make: Callable[[Any], Any], abort: threading.Event | None
    ) -> Any:
        """Another request to a server (``make(session)`` is the SDK coroutine): a resource, a prompt."""
        state = self._state(server)
        return self._wait(state, lambda: self._server.request(state, what, make), abort)

    def _state(self, server: str) -> ServerState:
        state = self.states.get(server)
        if state is None or self.loop is None:
            raise ToolError(f"MCP server {server} is not configured")
        return state

    def _wait(self, state: ServerState, make: Callable[[], Any], abort: threading.Event | None) -> Any:
        assert self.loop is not None
        future = asyncio.run_coroutine_threadsafe(make(), self.loop)
        while True:
            try:
                return future.result(CALL_POLL)
            except concurrent.futures.TimeoutError:
                if abort is not None and abort.is_set():
                    future.cancel()
                    raise ToolError("Tool execution aborted") from None
            except self._server.ServerGone as exc:
                raise ToolError(str(exc)) from None
            except Exception as exc:
                why = self._server.describe(exc)
                if state.status != "connected":
                    why = f"MCP server {state.name} stopped during the call ({state.error or why})"
                raise ToolError(why) from None

    def connected(self) -> list[ServerState]:
        return [s for s in self.states.values() if s.status == "connected" and not s.died]

    def prompts(self) -> list[McpPrompt]:
        """Every connected server's prompts, as the chat's and the editor's slash commands."""
        return [McpPrompt.of(state.name, p) for state in self.connected() for p in state.prompts]

    def prompt_text(self, prompt: McpPrompt, line: str, abort: threading.Event | None = None) -> str:
        """The prompt got from its server with the arguments ``line`` gives, as one user message.
        ValueError (one line) when an argument is missing or the server refuses."""
        values = prompt.values(line)
        try:
            result = self.request(
                prompt.server, f"prompt {prompt.name}", lambda s: s.get_prompt(prompt.name, values), abort
            )
        except ToolError as exc:
            raise ValueError(f"/{prompt.command}: {exc}") from None
        return as_text(result)

    def statuses(self) -> list[ServerStatus]:
        from agentcli.llm.tokens import estimate_json

        out = []
        ready = [t for t in self.tools() if isinstance(t, McpTool)]
        for state in self.states.values():
            tools = [
                ToolInfo(name=t.name, tokens=estimate_json(t.schema()))
                for t in ready
                if t.server == state.name
            ]
            out.append(
                ServerStatus(
                    name=state.name,
                    kind=state.kind,
                    status=state.status,
                    error=state.error,
                    transport=state.transport,
                    tools=tools,
                    restarts=state.restarts,
                    start_ms=round(state.ready_after * 1000) if state.ready_after is not None else None,
                    agent=self.owner,
                )
            )
        out += [
            ServerStatus(name=name, kind=kind, status="disabled", agent=self.owner)
            for name, kind in self.disabled
        ]
        return out

    def wait_all(self) -> None:
        """Until every server has connected or failed (``agentcli mcp list``): up to its start limit."""
        for state in self.states.values():
            state.settled.wait(max(0.0, state.limit + SETTLE_GRACE - time.monotonic()))


def needs_tasks(tool: Any) -> bool:
    """A tool that can only be run as an MCP task (spec 2025-11-25: ``execution.taskSupport`` is
    "required"): agentcli calls tools directly, so it is not offered (it would always fail)."""
    execution = getattr(tool, "execution", None)
    return getattr(execution, "taskSupport", None) == "required"


def _joined(state: ServerState) -> str:
    n = len(state.tools)
    took = state.ready_after or 0.0
    return f"mcp server {state.name} is ready ({n} tool{'' if n == 1 else 's'}, after {took:.0f} s)"


def from_config(
    servers: Mapping[str, Any],
    *,
    directory: Path,
    log_dir: Path | None,
    notify: Callable[[str], None],
    owner: str | None = None,
    changed: Callable[[], None] | None = None,
) -> McpHost | None:
    """A started host for the configured servers; None when none is enabled (the SDK is then never
    imported). An ``{"enabled": …}`` entry that names no server defined elsewhere is left out."""
    entries = {n: e for n, e in servers.items() if getattr(e, "type", None) and e.enabled}
    disabled = tuple(
        (n, str(e.type)) for n, e in servers.items() if getattr(e, "type", None) and not e.enabled
    )
    if not entries:
        return None
    host = McpHost(
        entries,
        directory=directory,
        log_dir=log_dir,
        notify=notify,
        disabled=disabled,
        owner=owner,
        changed=changed,
    )
    return host.start()
