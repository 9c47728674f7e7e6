"""agentcli as an ACP agent: the protocol's methods (``initialize``, ``session/new``,
``session/load``, ``session/prompt``, ``session/cancel``) over agentcli's own sessions.

Sessions: an ACP session id is agentcli's session id, so ``session/load`` works across processes and
with ``agentcli sessions``. A new session is stored with its first message. A turn runs in a worker
thread (``AcpSession``); its events become updates through the outbox; ``session/cancel`` sets its
abort flag, and the prompt answers ``cancelled`` once the loop has closed what it had open.

Session modes are agentcli's primary agents (``modes.py``): ``session/new`` and ``session/load``
answer them (and the same choice as a config option); ``session/set_mode`` or
``session/set_config_option`` switches the session's agent, which its record keeps.
MCP: the client's ``mcpServers`` (stdio, http, sse) are joined to the config's servers for that
session (``client_mcp.py`` says how and which wins); they start with the session's loop and stop
when the session is replaced or the agent ends. A server that fails is one notice to the client.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_agent_message_text, update_available_commands, update_current_mode
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionConfigOptionSelect,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from agentcli import __version__
from agentcli.acp import client_mcp, commands, modes
from agentcli.acp.files import ClientFiles, with_client_files
from agentcli.acp.outbox import Outbox
from agentcli.acp.permission import ClientAsker, ask_trust
from agentcli.acp.prompt import prompt_input
from agentcli.acp.replay import replay
from agentcli.acp.session import AcpSession, refusal
from agentcli.acp.updates import notice
from agentcli.config import project_root
from agentcli.session.agents.registry import AgentError
from agentcli.store import ids
from agentcli.store.records import AssistantMessage
from agentcli.store.store import NotFound, Store
from agentcli.trusted_config import load_config, record_trust

log = logging.getLogger(__name__)
SHUTDOWN_GRACE = 10.0  # seconds a cancelled turn gets to close its records when the client leaves


def failure(exc: BaseException) -> RequestError:
    return RequestError(-32603, refusal(exc))


def session_modes(session: AcpSession) -> SessionModeState:
    """The session's modes: agentcli's primary agents, and the session's own."""
    return modes.mode_state(session.registry(), session.agent)


def session_options(session: AcpSession) -> list[SessionConfigOptionSelect]:
    return modes.config_options(session.registry(), session.agent)


class AcpAgent:
    def __init__(
        self,
        store: Store,
        *,
        model: str | None = None,
        api_base: str | None = None,
        agent: str | None = None,
    ) -> None:
        self.store = store
        self.model = model
        self.api_base = api_base
        self.agent = agent  # `agentcli acp --agent`: the agent new sessions start in
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
                # Both served by the MCP client (streamable HTTP, SSE); ACP's own transport is not.
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            agent_info=Implementation(name="agentcli", title="agentcli", version=__version__),
            auth_methods=[],
        )

    def _images_here(self) -> bool:
        """Before any session names its folder: the model the config here chooses."""
        from agentcli.session.capabilities import accepts_images

        try:
            config = load_config(Path.cwd()).config
        except Exception:  # a broken config is reported when a session starts
            return False
        return accepts_images(config, self.model or config.model, self.api_base)

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(ids.ascending("ses"), cwd, mcp_servers, stored_model=None)
        await asyncio.to_thread(session.ensure_stored)  # loadable before its first prompt
        self._advertise(session)  # sent after this answer, which gives the client the session id
        return NewSessionResponse(
            session_id=session.id, modes=session_modes(session), config_options=session_options(session)
        )

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
        session = await self._open(
            session_id, where, mcp_servers, stored_model=info.model, stored_agent=info.agent
        )
        messages = await asyncio.to_thread(self.store.messages, session_id)
        outbox = self._outbox()
        for update in replay(messages, session.directory):
            outbox.notify(session_id, update)
        self._advertise(session)
        await outbox.flush()  # the whole history before the answer, as the protocol asks
        return LoadSessionResponse(modes=session_modes(session), config_options=session_options(session))

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.busy:
            raise RequestError.invalid_request({"details": "a prompt is already running in this session"})
        session.abort = threading.Event()  # busy from here: a second prompt is refused
        try:
            await self._ready(session)
            try:
                given = prompt_input(prompt, session.directory, images=session.images())
            except ValueError as exc:
                raise RequestError.invalid_params({"details": refusal(exc)}) from None
            slash = commands.parse(given.text.strip(), session.commands())
            if slash is None and commands.names_a_prompt(given.text) and session.mcp is not None:
                # An MCP prompt of a server still starting: wait for it as a first step would.
                await asyncio.to_thread(session.mcp.prepare_step, True, session.abort)
                slash = commands.parse(given.text.strip(), session.commands())
            if slash is not None and slash.custom is not None:
                command, arguments = slash.custom, slash.arguments
                try:  # an MCP prompt asks its server
                    given.text = await asyncio.to_thread(command.expand, arguments)
                except ValueError as exc:
                    raise RequestError.invalid_params({"details": str(exc)}) from None
                slash = None
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

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        await self._switch(self._session(session_id), mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        modes.checked_option(config_id)
        await self._switch(session, value)
        return SetSessionConfigOptionResponse(config_options=session_options(session))

    async def _switch(self, session: AcpSession, mode_id: object) -> None:
        """The session's agent becomes ``mode_id``; the client is told (both ways it may show it)."""
        name = modes.checked_mode(session.registry(), mode_id)
        if name == session.agent:
            return
        try:
            await asyncio.to_thread(session.switch_agent, name)
        except Exception as exc:
            raise failure(exc) from None
        outbox = self._outbox()
        outbox.notify(session.id, update_current_mode(session.agent))
        outbox.notify(session.id, modes.options_update(session_options(session)))
        await outbox.flush()

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None and session.abort is not None:
            session.abort.set()

    # --- sessions --------------------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            details = "unknown session: create it with session/new or load it with session/load first"
            raise RequestError.invalid_params({"sessionId": session_id, "details": details})
        return session

    def _outbox(self) -> Outbox:
        assert self.outbox is not None, "on_connect has not run"
        return self.outbox

    async def _open(
        self,
        session_id: str,
        cwd: str,
        mcp_servers: list[Any] | None,
        *,
        stored_model: str | None,
        stored_agent: str | None = None,
    ) -> AcpSession:
        directory = Path(cwd)
        if not directory.is_absolute() or not directory.is_dir():
            raise RequestError.invalid_params(
                {"cwd": cwd, "details": "cwd must be an existing absolute folder"}
            )
        client = client_mcp.convert(mcp_servers, timeout=client_mcp.start_timeout(os.environ))
        try:
            loaded = await asyncio.to_thread(load_config, directory)
        except Exception as exc:
            raise failure(exc) from None
        for warning in loaded.warnings:
            log.warning("%s", warning)
        for name in client_mcp.replaced(loaded.config.mcp, client):
            log.info("the client's MCP server %s replaces the config's for session %s", name, session_id)
        model = self.model or (None if loaded.config.model else stored_model)
        from agentcli.app.setup import warm_for

        warm_for(loaded, model, self.api_base)  # a litellm model's first stream, rehearsed meanwhile
        session = AcpSession(
            session_id,
            directory,
            loaded,
            self.store,
            model=model,
            api_base=self.api_base,
            client_servers=client.entries,
        )
        for line in client.problems:
            session.notices.add(line)
        try:
            session.choose_agent(self.agent, stored_agent)
        except AgentError as exc:
            raise failure(exc) from None
        if not (loaded.trust and loaded.trust.pending):
            await self._build(session)  # a missing model or key is told now, not at the first prompt
        previous = self.sessions.get(session_id)
        self.sessions[session_id] = session
        if previous is not None:  # loaded again: the earlier servers make way for this load's
            await asyncio.to_thread(previous.close)
        return session

    def _advertise(self, session: AcpSession) -> None:
        outbox = self._outbox()
        session.notices.release(lambda line: outbox.notify(session.id, notice(line)))
        session.on_commands = lambda: outbox.notify(
            session.id, update_available_commands(commands.available(session.commands()))
        )
        session.advertised = True  # before the list is made: a server connecting now is in it or told
        session.on_commands()
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
            self._agents_trusted(session)
            self._advertise(session)
        if session.loop is None:
            await self._build(session)

    def _agents_trusted(self, session: AcpSession) -> None:
        """The trusted config's agents may differ (a project's own): the session keeps its agent if
        it is still there, and the client is given the agents as they are now."""
        try:
            session.choose_agent(self.agent, session.agent)
        except AgentError as exc:
            raise failure(exc) from None
        outbox = self._outbox()
        outbox.notify(session.id, modes.options_update(session_options(session)))
        outbox.notify(session.id, update_current_mode(session.agent))

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
        if fs is not None and (fs.read_text_file or fs.write_text_file) and loop.runtime.tools:
            files = ClientFiles(
                outbox,
                self.client,
                session.id,
                project_root(session.directory),
                can_read=bool(fs.read_text_file),
                can_write=bool(fs.write_text_file),
                abort=lambda: session.abort,
            )
            with_client_files(loop.runtime.tools, files)

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
        if (
            session.loop is not None
            and session.loop.runtime.agent is not None
            and session.loop.runtime.agent.name != session.agent
        ):
            try:  # a mode chosen during the turn: the session records it now, not at the next turn
                await asyncio.to_thread(session.apply_agent)
            except Exception as exc:  # the next turn tries again, and says why it cannot
                log.warning("switching to agent %s: %s", session.agent, refusal(exc))
                self._outbox().notify(session.id, update_current_mode(session.agent))  # the one still on
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
        # Then every session's MCP servers, together: none outlives the agent.
        await asyncio.gather(*(asyncio.to_thread(s.close) for s in self.sessions.values()))
