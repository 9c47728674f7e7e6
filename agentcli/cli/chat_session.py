"""A chat's state and its turns: the state the REPL, its slash commands and ``agentcli demo`` share,
the permission question, the banner and where a continued session stands, and running one message,
``!command`` or compaction as a turn (Ctrl-C cancels it, the REPL goes on)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from agentcli import __version__
from agentcli.cli.chat_mcp import Notices
from agentcli.cli.common import CliError, too_large_line
from agentcli.cli.keys import watching
from agentcli.cli.render import TurnRenderer, gauge_for, last_request_cache
from agentcli.cli.worker import Turn
from agentcli.session.request.input_size import InputTooLarge, as_file_for, check_input
from agentcli.store.store import Store
from agentcli.tools.base import PermissionAnswer, PermissionRequest
from agentcli.trusted_config import TrustedConfig
from agentcli.ui.wrap import Wrapped, error_line, stderr_console, warning_line

if TYPE_CHECKING:
    from agentcli.cli.model_choice import ModelChoice
    from agentcli.mcp.host import McpHost
    from agentcli.session.loop import SessionLoop

SHELL_TIMEOUT = 120.0  # seconds for a !command
SHELL_SHOW = 4000  # characters of its output shown
SHELL_KEEP = 50 * 1024  # characters of its output put into the conversation


@dataclass
class ChatState:
    loaded: TrustedConfig
    store: Store
    directory: Path
    model: str | None
    api_base: str | None
    yes: bool
    session_id: str | None = None
    console: Console = field(default_factory=lambda: Console(highlight=False))
    loop: SessionLoop | None = None
    turn: Turn | None = None
    typed_ahead: str = ""  # keys taken away from a permission question, offered as the next message
    custom: dict[str, Any] = field(default_factory=dict)  # custom slash commands by name
    choice: ModelChoice | None = None  # how ``model`` was chosen (None: by /model, or the default)
    mcp: McpHost | None = None  # the MCP servers, started with the chat
    notices: Notices | None = None  # lines from the MCP servers' thread
    agent: str = "build"  # the primary agent the next message goes to (Tab switches it)
    model_pinned: bool = False  # the user chose the model (--model, /model): an agent's does not replace it
    registry: Any = None  # the config's agents (agentcli.session.agents.registry.AgentRegistry), read once

    def ensure_loop(self, renderer: TurnRenderer) -> SessionLoop:
        if self.loop is None:
            from agentcli.cli.model_choice import ModelChoice, build_chosen

            def warn(line: str) -> None:  # the session's own model gave way to the config's
                renderer.pause()
                self.console.print(warning_line(line), soft_wrap=True)

            given = self.choice or ModelChoice(self.model if self.model_pinned else None, self.api_base)
            loop, self.choice = build_chosen(
                self.loaded,
                self.store,
                given,
                warn=warn,
                yes=self.yes,
                asker=self._ask,
                directory=self.directory,
                mcp=self.mcp,
                agent=self.agent,
                notify=self.notices.add if self.notices is not None else None,
            )
            self.model = loop.runtime.model.name
            self.api_base = self.choice.api_base
            loop.runtime.bus.subscribe(renderer)
            self.loop = loop
            self.renderer = renderer
        elif (answering := self.loop.runtime.agent) is not None and answering.name != self.agent:
            try:
                self.loop.runtime.switch_agent(self.agent)
            except Exception:
                self.agent = answering.name  # still the old one
                raise
        return self.loop

    def agents(self) -> Any:
        """The agents of this chat's config (agentcli.session.agents.registry.AgentRegistry)."""
        from agentcli.session.agents.registry import AgentRegistry

        if self.registry is None:
            self.registry = AgentRegistry.from_config(self.loaded.config)
        return self.registry

    def next_agent(self) -> str:
        """Tab: the next primary agent (used from the next message on)."""
        self.agent = self.agents().next_primary(self.agent).name
        return self.agent

    def _ask(self, request: PermissionRequest) -> PermissionAnswer:
        resume = self.renderer.hold()
        assert self.turn is not None
        answer = self.turn.ask(request)
        if answer != "deny":
            resume()  # the tool runs now: its spinner again until its line is printed
        return answer

    def keep_typed(self, text: str) -> None:
        """Keys typed while a turn ran: the start of the next message."""
        self.typed_ahead += text

    def ensure_session(self) -> str:
        """The session the next turn runs in (made now if new), remembering the model it runs on."""
        from agentcli.cli.model_choice import remember_model

        assert self.loop is not None and self.loop.runtime.agent is not None  # ensure_loop built it
        name = self.loop.runtime.model.name
        if self.session_id is None:
            self.session_id = self.store.create_session(
                str(self.directory), name, agent=self.loop.runtime.agent.name
            ).id
        remember_model(self.store, self.session_id, name, self.api_base)
        return self.session_id


def _question(state: ChatState, request: PermissionRequest) -> PermissionAnswer:
    """The permission question (``permission_question``); Ctrl-C or Esc raises KeyboardInterrupt."""
    from agentcli.cli.permission_question import ask_permission

    answer, early = ask_permission(state.console, request, typed_ahead=bool(state.typed_ahead.strip()))
    state.typed_ahead += early
    return answer


def require_terminal() -> None:
    if not sys.stdin.isatty():
        raise CliError('chat needs a terminal; for scripts and pipes use: agentcli run "message"', 2)


def open_chat(state: ChatState) -> TurnRenderer:
    """The renderer for this chat, and the banner line."""
    err = stderr_console()
    renderer = TurnRenderer(state.console, err, cwd=state.directory, tool_details=True)
    state.renderer = renderer
    title = state.store.get_session(state.session_id).title if state.session_id else "new session"
    state.console.print(
        Wrapped(
            f"[bold]agentcli[/] {__version__} · "
            f"model [cyan]{state.model or '(none: /model NAME, or try agentcli demo)'}[/] · "
            f"agent [magenta]{state.agent}[/] · {title} · [dim]/help for commands, Tab switches agent[/]"
        ),
        soft_wrap=True,
    )
    if state.session_id:
        show_where(state)
    return renderer


def show_where(state: ChatState) -> None:
    """A continued session: its last exchanges and the gauge, before the prompt."""
    from agentcli.ui.recap import recap

    assert state.session_id is not None
    for renderable in recap(state.store.messages(state.session_id)):
        state.console.print(renderable)
    gauge = _gauge_now(state)
    if gauge is not None:
        state.console.print(gauge)


def _gauge_now(state: ChatState) -> object | None:
    """The gauge from the stored count and the model's limits (no loop needed)."""
    from agentcli.config import data_dir
    from agentcli.session.compaction import overflow
    from agentcli.session.model import resolve_model
    from agentcli.session.request.figure import figure
    from agentcli.session.window import WindowFinder, session_window
    from agentcli.ui.gauge import Gauge, GaugeData

    session = state.store.get_session(state.session_id or "")
    try:
        model = resolve_model(
            state.model or session.model or "",
            state.loaded.config.providers_dict(),
            state.api_base,
            windows=WindowFinder(data_dir(), discover=False),
            default_context=state.loaded.config.compaction.default_context,
        )
        model = session_window(state.store, session.id, model)
    except Exception:  # an unknown model is reported when a message is sent
        return None
    cfg = state.loaded.config
    cache_read, request_input = last_request_cache(state.store, session.id)
    now = figure(state.store, session.id)
    return Gauge(
        GaugeData(
            used=now.tokens,
            estimated=now.estimated,
            context_limit=model.limits.context,
            usable=overflow.usable(model.limits, cfg.compaction.reserved, cfg.output_token_max),
            cost=session.cost,
            model=model.name,
            cache_read=cache_read,
            request_input=request_input,
        )
    )


def send(state: ChatState, renderer: TurnRenderer, text: str) -> None:
    """One user message, as a turn; files and folders it mentions with ``@path`` go with it. One that
    cannot go (a binary file, an unreadable folder) stops the message: it comes back in the prompt."""
    from agentcli.app.attach import AttachRefused, attachments, mentioned_paths, refuse_missing
    from agentcli.app.mcp_attach import mcp_attachments, mcp_mentions

    paths = mentioned_paths(text, state.directory)
    resources = mcp_mentions(text, state.mcp)  # @server:uri
    try:
        refuse_missing(text, state.directory, tuple(f"{s}:{u}" for s, u in resources))
        parts = attachments(paths, state.directory) + mcp_attachments(resources, state.mcp)
    except KeyboardInterrupt:  # reading an MCP resource (or waiting for its server)
        state.console.print("[dim]cancelled: your message is back in the prompt[/]")
        state.typed_ahead = text
        return
    except AttachRefused as exc:
        state.console.print(error_line(str(exc)), soft_wrap=True)
        state.console.print("[dim](not sent: your message is back in the prompt to edit)[/]")
        state.typed_ahead = text
        return
    if paths or resources:
        names = [p.name for p in paths] + [f"{s}:{u}" for s, u in resources]
        state.console.print(f"[dim]attached: {escape(', '.join(names))}[/]", highlight=False)
    from agentcli.app.setup import mentioned_subagent
    from agentcli.session.agents.subagent import delegate

    def action(loop: Any, sid: str, abort: Any) -> Any:
        subagent = mentioned_subagent(loop.runtime, text, state.directory)
        if subagent is not None:  # `@agent message`: straight to that subagent
            return delegate(loop.runtime, sid, subagent, text, abort)
        return loop.prompt(sid, text, abort, attached=parts)

    try:
        run_turn(
            state,
            renderer,
            action,
            check=lambda loop: check_input(loop.runtime, state.session_id, text, parts),
        )
    except InputTooLarge as exc:
        _offer_as_file(state, renderer, text, parts, exc)


def _offer_as_file(
    state: ChatState, renderer: TurnRenderer, text: str, parts: list[Any], exc: InputTooLarge
) -> None:
    """A message larger than the model's window is not sent; it may go as a file the model pages."""
    from agentcli.cli.typeahead import ESC, ask_key

    state.console.print(f"[yellow]{too_large_line(exc)}: not sent[/]", highlight=False)
    try:
        choice, early = ask_key(
            "send it as a file the model reads a part at a time? [f]ile / [c]ancel › ",
            {"f": True, "c": False, "n": False, ESC: False},
            tell=lambda line: state.console.print(f"[dim]{line}[/]"),
            kept_for="next",
            hint="press f to send it as a file, c (or Esc, Ctrl-D) not to send it",
        )
    except KeyboardInterrupt:
        choice, early = False, ""
    state.typed_ahead += early
    if not choice:
        state.console.print("[dim]not sent[/]")
        return
    assert state.loop is not None  # the check that refused the message built it
    as_file = as_file_for(state.loop.runtime, text)
    state.console.print(f"[dim]{escape(as_file.rsplit(chr(10), 1)[-1])}[/]", highlight=False)
    try:
        run_turn(state, renderer, lambda loop, sid, abort: loop.prompt(sid, as_file, abort, attached=parts))
    except InputTooLarge as again:  # the attached files alone are too large
        state.console.print(f"[yellow]{too_large_line(again)}: not sent[/]", highlight=False)


def shell(state: ChatState, command: str) -> None:
    """``!command``: run it here and put its output into the conversation as the user's context,
    without asking the model anything. The bash rules hold as for the bash tool: a line with a denied
    command does not run, and one whose commands cannot be known is asked about."""
    from agentcli.session.permission import PermissionPolicy
    from agentcli.store import ids
    from agentcli.store.records import TextPart, UserMessage
    from agentcli.tools.bash import run_command
    from agentcli.tools.shell_commands import bash_request

    policy = PermissionPolicy.for_config(state.loaded, yes=state.yes, asker=lambda r: _question(state, r))
    request = bash_request(command)  # the bash tool's own question: every command the line runs
    if policy.action(request) == "deny":
        denied = next((p for p in request.patterns if policy.subject_action("bash", p) == "deny"), command)
        state.console.print(
            f"[bold red]refused:[/] the bash permission rules deny `{escape(denied)}`", highlight=False
        )
        return
    # You typed it, so it runs without the question "ask" rules put to the model's commands; but
    # when the rules cannot tell what it runs, they cannot vouch for it: the bash tool's own decision
    # then (asked; --yes answers only when no deny rule could be behind it).
    if policy.doubted("bash", request):
        try:
            allowed = policy.decide(request) != "deny"
        except KeyboardInterrupt:
            allowed = False
        if not allowed:
            state.console.print("[yellow]not run[/]")
            return
    turn = Turn()
    result = turn.run(lambda abort: run_command(command, state.directory, SHELL_TIMEOUT, abort))
    if result is None:
        state.console.print("[yellow]cancelled[/]")
        return
    output, code, stopped = result
    shown = output.rstrip()
    state.console.print(
        shown[-SHELL_SHOW:] if shown else "[dim](no output)[/]", highlight=False, markup=not shown
    )
    status = f"stopped: {stopped}" if stopped else f"exit {code}"
    body = output if len(output) <= SHELL_KEEP else "…" + output[-SHELL_KEEP:]
    if state.session_id is None:
        state.session_id = state.store.create_session(str(state.directory), state.model).id
    user = UserMessage(id=ids.ascending("msg"), session_id=state.session_id, model=state.model)
    state.store.put_message(user)
    state.store.put_part(
        TextPart(
            id=ids.ascending("prt"),
            session_id=state.session_id,
            message_id=user.id,
            text=f"I ran `{command}` ({status}):\n```\n{body.rstrip()}\n```",
        )
    )
    state.console.print(f"[dim]({status}; the output is in the conversation for the next message)[/]")


def run_turn(
    state: ChatState,
    renderer: TurnRenderer,
    action: Callable[..., Any],
    check: Callable[[SessionLoop], None] | None = None,
) -> None:
    """``action(loop, session_id, abort)`` as a turn. ``check(loop)``, before a session is made,
    may refuse the turn by raising (InputTooLarge reaches the caller)."""
    try:
        _run_turn(state, renderer, action, check)
    except KeyboardInterrupt:  # outside the worker (e.g. while litellm is still loading)
        renderer.pause()
        state.console.print("[yellow]cancelled[/]")


def _run_turn(
    state: ChatState,
    renderer: TurnRenderer,
    action: Callable[..., Any],
    check: Callable[[SessionLoop], None] | None,
) -> None:
    renderer.waiting()  # from Enter on, something moves (litellm may still be importing for some models)
    try:
        loop = state.ensure_loop(renderer)
    except CliError as exc:
        renderer.pause()
        state.console.print(error_line(str(exc)), soft_wrap=True)
        return
    except Exception as exc:  # config/plugin problems: one line, the REPL goes on
        renderer.pause()
        state.console.print(
            error_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__), soft_wrap=True
        )
        return
    if check is not None:
        try:
            check(loop)
        finally:
            renderer.pause()
        renderer.waiting()
    sid = state.ensure_session()
    renderer.reset()

    def tell(line: str) -> None:
        renderer.pause()
        state.console.print(f"[yellow]{line}[/]")

    state.turn = Turn(tell=tell)
    try:
        with watching(state.keep_typed) as keys:
            state.turn.run(
                lambda abort: action(loop, sid, abort),
                answer=lambda req: _question(state, req),
                escape=keys.escape if keys is not None else None,
            )
    except InputTooLarge:
        renderer.pause()
        raise
    except Exception as exc:
        renderer.pause()
        state.console.print(
            error_line(str(exc).splitlines()[0] if str(exc) else type(exc).__name__), soft_wrap=True
        )
        return
    renderer.pause()
    if state.turn.abandoned:  # still running: the session goes on without it, and it writes nothing more
        state.store.abandon(sid)
    if state.turn.cancelled:
        state.console.print("[yellow]cancelled[/] [dim](the session is kept; type to continue)[/]")
    state.console.print(gauge_for(loop.runtime, sid, renderer.notes))
