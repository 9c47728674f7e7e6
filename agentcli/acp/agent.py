"""agentcli as an ACP agent: the protocol's methods (``initialize``, ``session/new``,
``session/load``, ``session/prompt``, ``session/cancel``) over agentcli's own sessions.

Sessions: an ACP session id is agentcli's session id, so ``session/load`` works across processes and
with ``agentcli sessions``. A new session is stored with its first message. A turn runs in a worker
thread (``AcpSession``); its events become updates through the outbox; ``session/cancel`` sets its
abort flag, and the prompt answers ``cancelled`` once the loop has closed what it had open.

Session modes and agents (build, plan, …) plug in at ``modes()``: ``session/new`` and
``session/load`` answer what it returns, and a ``set_session_mode`` method then switches the loop's
agent. Until agents exist it returns None, and a client asking to switch gets "Method not found".
The client's MCP servers are accepted and left unused (noted in the log) until MCP exists.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_agent_message_text, update_available_commands
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionModeState,
)

from agentcli import __version__
from agentcli.acp import commands
from agentcli.acp.files import ClientFiles, with_client_files
from agentcli.acp.outbox import Outbox
from agentcli.acp.permission import ClientAsker, ask_trust
from agentcli.acp.prompt import prompt_input
from agentcli.acp.replay import replay
from agentcli.acp.session import AcpSession, refusal
from agentcli.config import project_root
from agentcli.store import ids
from agentcli.store.records import AssistantMessage
from agentcli.store.store import NotFound, Store
from agentcli.trusted_config import load_config, record_trust

log = logging.getLogger(__name__)
SHUTDOWN_GRACE = 10.0  # seconds a cancelled turn gets to close its records when the client leaves


def failure(exc: BaseException) -> RequestError:
    return RequestError(-32603, refusal(exc))


def modes(session: AcpSession) -> SessionModeState | None:
    """The session's modes (agentcli's agents) for the client; None until agents exist."""
    return None


class AcpAgent:
    def __init__(self, store: Store, *, model: str | None = None, api_base: str | None = None) -> None:
        self.store = store
        self.model = model
        self.api_base = api_base
        self.sessions: dict[str, AcpSession] = {}
        self.turns: dict[str, threading.Thread] = {}
        self.client: Any = None
        self.outbox: Outbox | None = None
        self.capabilities = ClientCapabilities()

    def on_connect(self, conn: Any) -> None:
        self.client = conn
        self.outbox = Outbox(asyncio.get_running_loop(), conn.session_update)

    # --- protocol methods ----------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.capabilities = client_capabilities or ClientCapabilities()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=self._images_here(), embedded_context=True),
            ),
            agent_info=Implementation(name="agentcli", title="agentcli", version=__version__),
            auth_methods=[],
        )

    def _images_here(self) -> bool:
        """Before any session names its folder: the model the config here chooses."""
        from agentcli.acp.capabilities import accepts_images

        try:
            config = load_config(Path.cwd()).config
        except Exception:  # a broken config is reported when a session starts
            return False
        return accepts_images(config, self.model or config.model, self.api_base)

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(ids.ascending("ses"), cwd, mcp_servers, stored_model=None)
        self._advertise(session)  # sent after this answer, which gives the client the session id
        return NewSessionResponse(session_id=session.id, modes=modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        try:
            info = await asyncio.to_thread(self.store.get_session, session_id)
        except NotFound:
            raise RequestError.invalid_params(
                {"sessionId": session_id, "details": "no such session"}
            ) from None
        if session_id in self.sessions and self.sessions[session_id].busy:
            raise RequestError.invalid_request({"details": "a prompt is running in this session"})
        # The session's own folder (where its files and config are), unless it has gone since.
        where = info.directory if info.directory and Path(info.directory).is_dir() else cwd
        session = await self._open(session_id, where, mcp_servers, stored_model=info.model)
        messages = await asyncio.to_thread(self.store.messages, session_id)
        outbox = self._outbox()
        for update in replay(messages, session.directory):
            outbox.notify(session_id, update)
        self._advertise(session)
        await outbox.flush()  # the whole history before the answer, as the protocol asks
        return LoadSessionResponse(modes=modes(session))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            details = "unknown session: create it with session/new or load it with session/load first"
            raise RequestError.invalid_params({"sessionId": session_id, "details": details})
        if session.busy:
            raise RequestError.invalid_request({"details": "a prompt is already running in this session"})
        session.abort = threading.Event()  # busy from here: a second prompt is refused
        try:
            await self._ready(session)
            try:
                given = prompt_input(prompt, session.directory, images=session.images())
            except ValueError as exc:
                raise RequestError.invalid_params({"details": refusal(exc)}) from None
            slash = commands.parse(given.text.strip(), session.custom)
            if slash is not None and slash.custom is not None:
                given.text, slash = slash.custom.expand(slash.arguments), None
            last = None
            if slash is not None:
                line = await self._in_thread(session, lambda abort: session.slash(slash, abort))
                if line:
                    self._outbox().notify(session_id, update_agent_message_text(line))
            else:
                last = await self._in_thread(session, lambda abort: session.prompt(given, abort))
            return await self._finish(session, last)
        finally:
            session.abort = None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.abort is not None:
            session.abort.set()

    # --- sessions --------------------------------------------------------------------------------

    def _outbox(self) -> Outbox:
        assert self.outbox is not None, "on_connect has not run"
        return self.outbox

    async def _open(
        self, session_id: str, cwd: str, mcp_servers: list[Any] | None, *, stored_model: str | None
    ) -> AcpSession:
        directory = Path(cwd)
        if not directory.is_absolute() or not directory.is_dir():
            raise RequestError.invalid_params(
                {"cwd": cwd, "details": "cwd must be an existing absolute folder"}
            )
        if mcp_servers:
            log.warning("ignoring the client's %d MCP server(s): agentcli has no MCP yet", len(mcp_servers))
        try:
            loaded = await asyncio.to_thread(load_config, directory)
        except Exception as exc:
            raise failure(exc) from None
        for warning in loaded.warnings:
            log.warning("%s", warning)
        model = self.model or (None if loaded.config.model else stored_model)
        session = AcpSession(session_id, directory, loaded, self.store, model=model, api_base=self.api_base)
        if not (loaded.trust and loaded.trust.pending):
            await self._build(session)  # a missing model or key is told now, not at the first prompt
        self.sessions[session_id] = session
        return session

    def _advertise(self, session: AcpSession) -> None:
        outbox = self._outbox()
        outbox.notify(session.id, update_available_commands(commands.available(session.custom)))
        for update in (session.usage(), session.title_update()):
            if update is not None:
                outbox.notify(session.id, update)

    async def _ready(self, session: AcpSession) -> None:
        """Before the first turn: the trust question if it is pending, then the loop."""
        state = session.loaded.trust
        if session.loop is None and state is not None and state.pending and not session.trust_asked:
            session.trust_asked = True
            answer = await ask_trust(self._outbox(), self.client, session.id, state)
            if answer is not None:
                await asyncio.to_thread(record_trust, state, answer)
            session.loaded = await asyncio.to_thread(load_config, session.directory)
            session.load_commands()
            self._advertise(session)
        if session.loop is None:
            await self._build(session)

    async def _build(self, session: AcpSession) -> None:
        outbox = self._outbox()
        asker = ClientAsker(outbox, self.client, session.id, session.updates, lambda: session.abort)

        def publish(event: Any) -> None:
            for update in session.updates(event):
                outbox.notify(session.id, update)

        try:
            loop = await asyncio.to_thread(session.build, asker, publish)
        except Exception as exc:
            raise failure(exc) from None
        fs = self.capabilities.fs
        if fs is not None and (fs.read_text_file or fs.write_text_file) and loop.options.tools:
            files = ClientFiles(
                outbox,
                self.client,
                session.id,
                project_root(session.directory),
                can_read=bool(fs.read_text_file),
                can_write=bool(fs.write_text_file),
                abort=lambda: session.abort,
            )
            with_client_files(loop.options.tools, files)

    # --- turns -------------------------------------------------------------------------------------

    async def _in_thread(self, session: AcpSession, work: Callable[[threading.Event], Any]) -> Any:
        """Run blocking work in a thread of its own; a refusal or failure becomes a JSON-RPC error."""
        assert session.abort is not None
        abort = session.abort
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def settle(value: Any, error: BaseException | None) -> None:
            if done.done():
                return
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(value)

        def target() -> None:
            value, error = None, None
            try:
                value = work(abort)
            except BaseException as exc:  # handed to the protocol side
                error = exc
            loop.call_soon_threadsafe(settle, value, error)

        thread = threading.Thread(target=target, name=f"acp-turn-{session.id}", daemon=True)
        self.turns[session.id] = thread
        thread.start()
        try:
            return await asyncio.shield(done)
        except RequestError:
            raise
        except Exception as exc:
            raise failure(exc) from None

    async def _finish(self, session: AcpSession, last: AssistantMessage | None) -> PromptResponse:
        """The prompt's answer, once every update of the turn is out: why the turn stopped."""
        assert session.abort is not None
        cancelled = session.abort.is_set()
        outbox = self._outbox()
        for update in (session.usage(), session.title_update()):
            if update is not None:
                outbox.notify(session.id, update)
        await outbox.flush()
        if cancelled:
            return PromptResponse(stop_reason="cancelled")
        if session.step_limit:
            return PromptResponse(stop_reason="max_turn_requests")
        if last is not None and last.finish == "length":
            return PromptResponse(stop_reason="max_tokens")
        return PromptResponse(stop_reason="end_turn")

    async def shutdown(self) -> None:
        """The client is gone: cancel every running turn and let each close its records and release
        its session (the lease) before the process ends."""
        for session in self.sessions.values():
            if session.abort is not None:
                session.abort.set()
        for thread in list(self.turns.values()):
            await asyncio.to_thread(thread.join, SHUTDOWN_GRACE)
