"""A chat's state and its turns: the state the REPL, its slash commands and ``agentcli demo`` share,
the permission question, the banner and where a continued session stands, and running one message,
``!command`` or compaction as a turn (Ctrl-C cancels it, the REPL goes on)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from agentcli import __version__
from agentcli.cli.chat_mcp import Notices
from agentcli.cli.common import CliError
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.typeahead import ask
from agentcli.cli.worker import Turn
from agentcli.store.store import Store
from agentcli.tools.base import PermissionAnswer, PermissionRequest
from agentcli.trusted_config import TrustedConfig

PERMISSION_ANSWERS: dict[str, PermissionAnswer] = {
    **dict.fromkeys(("o", "once", "y", "yes", ""), "once"),
    **dict.fromkeys(("a", "always"), "always"),
    **dict.fromkeys(("d", "deny", "n", "no"), "deny"),
}
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
    loop: object | None = None
    turn: Turn | None = None
    typed_ahead: str = ""  # keys taken away from a permission question, offered as the next message
    custom: dict[str, Any] = field(default_factory=dict)  # custom slash commands by name
    mcp: Any = None  # the MCP servers, started with the chat (agentcli.mcp.host.McpHost)
    notices: Notices | None = None  # lines from the MCP servers' thread
    agent: str = "build"  # the primary agent the next message goes to (Tab switches it)
    model_pinned: bool = False  # the user chose the model (--model, /model): an agent's does not replace it
    registry: Any = None  # the config's agents (agentcli.session.agents.AgentRegistry), read once

    def ensure_loop(self, renderer: TurnRenderer) -> object:
        if self.loop is None:
            from agentcli.cli.setup import build_loop

            loop = build_loop(
                self.loaded,
                self.store,
                model=self.model if self.model_pinned else None,
                api_base=self.api_base,
                yes=self.yes,
                asker=self._ask,
                directory=self.directory,
                mcp=self.mcp,
                agent=self.agent,
                notify=self.notices.add if self.notices is not None else None,
            )
            loop.bus.subscribe(renderer)
            self.loop = loop
            self.renderer = renderer
        elif self.loop.agent.name != self.agent:  # type: ignore[attr-defined]
            try:
                self.loop.switch_agent(self.agent)  # type: ignore[attr-defined]
            except Exception:
                self.agent = self.loop.agent.name  # type: ignore[attr-defined]  (still the old one)
                raise
        return self.loop

    def agents(self) -> Any:
        """The agents of this chat's config (agentcli.session.agents.AgentRegistry)."""
        from agentcli.session.agents import AgentRegistry

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

    def ensure_session(self) -> str:
        if self.session_id is None:
            loop: Any = self.loop
            self.session_id = self.store.create_session(
                str(self.directory), loop.model.name, agent=loop.agent.name
            ).id
        return self.session_id


def _question(state: ChatState, request: PermissionRequest) -> PermissionAnswer:
    console = state.console
    console.print(
        f"[bold yellow]permission[/] [bold]{request.tool}[/]: {escape(request.title)}", highlight=False
    )
    for reason in request.unsure:
        console.print(f"[dim]  asked because {escape(reason)}[/]", highlight=False)
    diff = request.metadata.get("diff") if request.metadata else None
    if isinstance(diff, str) and diff.strip():
        from rich.syntax import Syntax

        console.print(Syntax(diff[:4000], "diff", theme="ansi_dark"))
    # Keys typed before this question was on screen must not answer it: they come back as the
    # start of the next message.
    answer, early = ask(
        "allow? [o]nce / [a]lways / [d]eny › ",
        PERMISSION_ANSWERS,
        tell=lambda line: console.print(f"[dim]{line}[/]"),
        kept_for="next",
    )
    state.typed_ahead += early
    return answer or "deny"


def require_terminal() -> None:
    if not sys.stdin.isatty():
        raise CliError('chat needs a terminal; for scripts and pipes use: agentcli run "message"', 2)


def open_chat(state: ChatState) -> TurnRenderer:
    """The renderer for this chat, and the banner line."""
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    renderer = TurnRenderer(state.console, err, cwd=state.directory, tool_details=True)
    state.renderer = renderer  # type: ignore[attr-defined]
    title = state.store.get_session(state.session_id).title if state.session_id else "new session"
    state.console.print(
        f"[bold]agentcli[/] {__version__} · "
        f"model [cyan]{state.model or '(none: /model NAME, or try agentcli demo)'}[/] · "
        f"agent [magenta]{state.agent}[/] · {title} · [dim]/help for commands, Tab switches agent[/]"
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
    from agentcli.session import overflow
    from agentcli.session.model import resolve_model
    from agentcli.ui.gauge import Gauge, GaugeData

    session = state.store.get_session(state.session_id or "")
    try:
        model = resolve_model(
            state.model or session.model or "", state.loaded.config.providers_dict(), state.api_base
        )
    except Exception:  # an unknown model is reported when a message is sent
        return None
    cfg = state.loaded.config
    return Gauge(
        GaugeData(
            used=session.context_tokens,
            estimated=session.context_estimated,
            context_limit=model.limits.context,
            usable=overflow.usable(model.limits, cfg.compaction.reserved, cfg.output_token_max),
            cost=session.cost,
            model=model.name,
        )
    )


def send(state: ChatState, renderer: TurnRenderer, text: str) -> None:
    """One user message, as a turn; files it mentions with ``@path`` go with it."""
    from agentcli.cli.chat_input import attachments, mentioned_files

    paths = mentioned_files(text, state.directory)
    try:
        parts = attachments(paths, state.directory)
    except OSError as exc:
        state.console.print(
            f"[bold red]error:[/] cannot attach {exc.filename}: {exc.strerror}", highlight=False
        )
        return
    if paths:
        state.console.print(f"[dim]attached: {', '.join(p.name for p in paths)}[/]", highlight=False)
    from agentcli.cli.setup import mentioned_subagent
    from agentcli.session.subagent import delegate

    def action(loop: Any, sid: str, abort: Any) -> Any:
        subagent = mentioned_subagent(loop, text, state.directory)
        if subagent is not None:  # `@agent message`: straight to that subagent
            return delegate(loop, sid, subagent, text, abort)
        return loop.prompt(sid, text, abort, attached=parts)

    run_turn(state, renderer, action)


def shell(state: ChatState, command: str) -> None:
    """``!command``: run it here and put its output into the conversation as the user's context,
    without asking the model anything. The bash rules hold as for the bash tool: a line with a denied
    command does not run, and one whose commands cannot be known is asked about."""
    from agentcli.session.permission import PermissionPolicy
    from agentcli.store import ids
    from agentcli.store.records import TextPart, UserMessage
    from agentcli.tools.bash import run_command
    from agentcli.tools.shell_commands import bash_request

    policy = PermissionPolicy.for_config(state.loaded)
    request = bash_request(command)  # the bash tool's own question: every command the line runs
    if policy.action(request) == "deny":
        denied = next((p for p in request.patterns if policy.subject_action("bash", p) == "deny"), command)
        state.console.print(
            f"[bold red]refused:[/] the bash permission rules deny `{escape(denied)}`", highlight=False
        )
        return
    # You typed it, so it runs without the question "ask" rules put to the model's commands; but
    # when the rules cannot tell what it runs (a name from a variable), they cannot vouch for it.
    if request.unsure and not state.yes and _question(state, request) == "deny":
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


def run_turn(state: ChatState, renderer: TurnRenderer, action) -> None:  # type: ignore[no-untyped-def]
    try:
        _run_turn(state, renderer, action)
    except KeyboardInterrupt:  # outside the worker (e.g. while litellm is still loading)
        renderer.pause()
        state.console.print("[yellow]cancelled[/]")


def _run_turn(state: ChatState, renderer: TurnRenderer, action) -> None:  # type: ignore[no-untyped-def]
    renderer.waiting()  # from Enter on, something moves (litellm may still be importing for some models)
    try:
        loop = state.ensure_loop(renderer)
    except CliError as exc:
        renderer.pause()
        state.console.print(f"[bold red]error:[/] {exc}")
        return
    except Exception as exc:  # config/plugin problems: one line, the REPL goes on
        renderer.pause()
        state.console.print(
            f"[bold red]error:[/] {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        )
        return
    sid = state.ensure_session()
    renderer.reset()
    state.turn = Turn()
    try:
        state.turn.run(lambda abort: action(loop, sid, abort), answer=lambda req: _question(state, req))
    except Exception as exc:
        renderer.pause()
        state.console.print(
            f"[bold red]error:[/] {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        )
        return
    renderer.pause()
    if state.turn.cancelled:
        state.console.print("[yellow]cancelled[/] [dim](the session is kept; type to continue)[/]")
    state.console.print(gauge_for(loop, sid, renderer.notes))
