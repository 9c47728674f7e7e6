"""``agentcli chat``: the interactive REPL.

The prompt shows at once. A model the lean path serves never imports litellm; for any other, litellm
imports in the background while the user types. The loop is built when the first message is sent,
under a spinner that starts at Enter. Enter sends, Alt-Enter (or Esc then Enter)
adds a line, Ctrl-C cancels the running turn (or clears the line), Ctrl-D exits.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from rich.console import Console
from rich.markup import escape

from agentcli import __version__
from agentcli.cli import process
from agentcli.cli.common import CliError, load_config, open_store
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.trust_cmd import ask_in_chat
from agentcli.cli.typeahead import ask
from agentcli.cli.worker import Turn
from agentcli.config import LoadedConfig, data_dir
from agentcli.private_files import touch_private
from agentcli.store.store import Store
from agentcli.tools.base import PermissionAnswer, PermissionRequest

HELP = """\
Commands:
  /help              this help
  /new               start a new session
  /sessions          this directory's recent sessions; type a number to switch to one
  /resume [ID]       switch to a session (default: the latest here), showing where it stands
  /model [NAME]      show or switch the model (litellm string or provider/model)
  /context           what fills the context window, by category
  /compact [focus]   summarise the session now and continue from the summary (also /summarize)
  /compact undo      undo the last compaction: the full history comes back (if it fits)
  /undo, /redo       revert the last turn's file edits and hide it from the model; put it back
  /exit              leave (also /quit, /q, or Ctrl-D)
  /NAME [args]       a custom command (.opencode/command/NAME.md, .agentcli/commands/NAME.md)
  !command           run a shell command here; its output goes into the conversation
  @path              attach a file to the message (Tab completes paths and commands)
Keys: Enter sends · Alt-Enter / Esc Enter adds a line · Ctrl-C cancels a running turn"""


PERMISSION_ANSWERS: dict[str, PermissionAnswer] = {
    **dict.fromkeys(("o", "once", "y", "yes", ""), "once"),
    **dict.fromkeys(("a", "always"), "always"),
    **dict.fromkeys(("d", "deny", "n", "no"), "deny"),
}
PICK = 10  # sessions offered by /sessions
SHELL_TIMEOUT = 120.0  # seconds for a !command
SHELL_SHOW = 4000  # characters of its output shown
SHELL_KEEP = 50 * 1024  # characters of its output put into the conversation
BUILTINS = {
    "help": "this help",
    "new": "a new session",
    "sessions": "switch session",
    "resume": "continue a session",
    "model": "show or switch the model",
    "undo": "revert the last turn",
    "redo": "put it back",
    "context": "what fills the window",
    "compact": "summarise now",
    "exit": "leave",
}


@dataclass
class ChatState:
    loaded: LoadedConfig
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

    def ensure_loop(self, renderer: TurnRenderer) -> object:
        if self.loop is None:
            from agentcli.cli.setup import build_loop

            loop = build_loop(
                self.loaded,
                self.store,
                model=self.model,
                api_base=self.api_base,
                yes=self.yes,
                asker=self._ask,
                directory=self.directory,
            )
            loop.bus.subscribe(renderer)
            self.loop = loop
            self.renderer = renderer
        return self.loop

    def _ask(self, request: PermissionRequest) -> PermissionAnswer:
        resume = self.renderer.hold()
        assert self.turn is not None
        answer = self.turn.ask(request)
        if answer != "deny":
            resume()  # the tool runs now: its spinner again until its line is printed
        return answer

    def ensure_session(self) -> str:
        if self.session_id is None:
            self.session_id = self.store.create_session(str(self.directory), self.loop.model.name).id  # type: ignore[attr-defined]
        return self.session_id


def _preload() -> None:
    """Import what the first turn needs while the user types (a failure resurfaces at that turn)."""
    with contextlib.suppress(Exception):
        import agentcli.cli.setup  # noqa: F401 - the loop, tools, compaction, model routing
        import agentcli.llm.lean_path  # noqa: F401 - httpx
        from agentcli.llm import modelmap

        modelmap.model_map()  # litellm's price and limit map, as JSON


def _bindings() -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event) -> None:  # type: ignore[no-untyped-def]
        event.current_buffer.insert_text("\n")

    return kb


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


def chat(
    *,
    model: str | None,
    session: str | None,
    cont: bool,
    api_base: str | None,
    yes: bool,
    trust: bool = False,
) -> None:
    require_terminal()
    directory = Path.cwd()
    loaded, early = ask_in_chat(load_config(directory, trust=trust), directory)
    from agentcli.cli.setup import resolve_session, warm_for

    # Only a model the lean path does not serve needs litellm: its import overlaps with the typing.
    # The session loop's own modules (tools, compaction, the HTTP client) load meanwhile too.
    warm_for(loaded, model, api_base)
    threading.Thread(target=_preload, name="agentcli-preload", daemon=True).start()
    store = open_store()

    state = ChatState(
        loaded=loaded,
        store=store,
        directory=directory,
        model=model or loaded.config.model,
        api_base=api_base,
        yes=yes,
        session_id=resolve_session(store, session, cont, directory),
        typed_ahead=early,
    )
    renderer = open_chat(state)
    _warn_missing_key(state)
    repl(state, renderer)


def _warn_missing_key(state: ChatState) -> None:
    """At startup, without litellm: a key the chosen model surely needs and does not have."""
    from agentcli.llm.keys import key_message, missing_key
    from agentcli.llm.route import resolve

    if not state.model:
        return
    try:
        route = resolve(state.model, state.loaded.config.providers_dict(), state.api_base)
    except ValueError:
        return  # the first message reports a bad name with the full check
    missing = missing_key(route)
    if missing:
        state.console.print(
            f"[yellow]{key_message(state.model, missing)}[/]", highlight=False, soft_wrap=True
        )


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
        f"[bold]agentcli[/] {__version__} · model [cyan]{state.model or '(none: /model NAME, or try agentcli demo)'}[/] · "
        f"{title} · [dim]/help for commands[/]"
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


def repl(state: ChatState, renderer: TurnRenderer) -> None:
    """Read messages and commands until /exit or Ctrl-D; then leave the process at once."""
    console = state.console
    try:
        history_path = touch_private(data_dir() / "chat_history")  # what the user typed: private
        history: FileHistory | InMemoryHistory = FileHistory(str(history_path))
    except OSError:
        history = InMemoryHistory()
    from agentcli.cli import custom_commands
    from agentcli.cli.chat_input import ChatCompleter
    from agentcli.config import global_config_dir

    trust = state.loaded.trust
    state.custom = custom_commands.load(
        state.directory, global_config_dir(), trusted=trust is None or trust.trusted
    )
    names = {**BUILTINS, **{n: c.description or "custom command" for n, c in state.custom.items()}}
    prompt: PromptSession[str] = PromptSession(
        history=history,
        key_bindings=_bindings(),
        multiline=False,
        completer=ChatCompleter(state.directory, names),
        complete_while_typing=False,
    )

    while True:
        try:
            text = prompt.prompt("› ", default=state.typed_ahead.strip("\r\n"))
            state.typed_ahead = ""
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        if not text.strip():
            continue
        line = text.strip()
        if line.startswith("!") and len(line) > 1:
            _shell(state, line[1:].strip())
            continue
        if line.startswith("/"):
            name, _, args = line[1:].partition(" ")
            if name in state.custom and name not in BUILTINS:
                expanded = state.custom[name].expand(args.strip())
                console.print(
                    f"[dim]/{name} →[/] {expanded.splitlines()[0] if expanded else ''}", highlight=False
                )
                send(state, renderer, expanded)
            elif _slash(state, line, renderer) == "exit":
                break
            continue
        send(state, renderer, text)
    console.print("[dim]bye[/]")
    process.finish(0)  # daemon threads (title requests, litellm warm-up) must not delay the exit


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
    _turn(state, renderer, lambda loop, sid, abort: loop.prompt(sid, text, abort, attached=parts))


def _shell(state: ChatState, command: str) -> None:
    """``!command``: run it here (the bash permission rules apply: a denied command is not run) and
    put its output into the conversation as the user's context, without asking the model anything."""
    from agentcli.session.permission import PermissionPolicy
    from agentcli.store import ids
    from agentcli.store.records import TextPart, UserMessage
    from agentcli.tools.bash import run_command

    policy = PermissionPolicy(rules=state.loaded.config.permission.model_dump(exclude_none=True))
    if policy.action(PermissionRequest(tool="bash", title=command, patterns=[command])) == "deny":
        state.console.print(
            f"[bold red]refused:[/] the bash permission rules deny `{command}`", highlight=False
        )
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


def _turn(state: ChatState, renderer: TurnRenderer, action) -> None:  # type: ignore[no-untyped-def]
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


def _model_usable(state: ChatState, name: str) -> bool:
    """``/model NAME`` checks the name (and the key it needs) at once, keeping the old model if bad."""
    from agentcli.cli.setup import check_key, model_info

    try:
        check_key(model_info(state.loaded, name, state.api_base))
    except CliError as exc:
        state.console.print(
            f"[bold red]error:[/] {exc} [dim](still {state.model or 'no model'})[/]", highlight=False
        )
        return False
    return True


def _undo_turn(state: ChatState, *, again: bool) -> None:
    from agentcli.cli.undo_cmd import apply

    if state.session_id is None:
        state.console.print("[dim]nothing to undo yet[/]")
        return
    try:
        state.console.print(apply(state.store, state.session_id, again=again), highlight=False)
    except CliError as exc:
        state.console.print(f"[bold red]error:[/] {exc}", highlight=False)


def _show_context(state: ChatState, renderer: TurnRenderer) -> None:
    from agentcli.cli.context_cmd import context_renderable_for

    try:
        loop = state.ensure_loop(renderer)
    except CliError as exc:
        state.console.print(f"[bold red]error:[/] {exc}", highlight=False)
        return
    state.console.print(context_renderable_for(loop, state.session_id or ""))


def _undo_compaction(state: ChatState, renderer: TurnRenderer) -> None:
    from agentcli.cli.compact_cmd import undo

    try:
        loop = state.ensure_loop(renderer)
        state.console.print(undo(loop, state.session_id or ""))
    except CliError as exc:
        state.console.print(f"[bold red]error:[/] {exc}", highlight=False)
        return
    state.console.print(gauge_for(loop, state.session_id or "", renderer.notes))


def _switch(state: ChatState, session_id: str) -> None:
    state.session_id = session_id
    session = state.store.get_session(session_id)
    state.console.print(f"[dim]now in[/] {session.title or session.id} [dim]({session.id})[/]")
    show_where(state)


def _resume(state: ChatState, ref: str) -> None:
    """``/resume [ID]``: the given session, else the latest one here."""
    try:
        if ref:
            target = state.store.find_session(ref).id
        else:
            latest = state.store.latest_session(str(state.directory))
            if latest is None:
                raise CliError("no session to resume here")
            target = latest.id
    except Exception as exc:
        state.console.print(f"[bold red]error:[/] {str(exc).splitlines()[0]}", highlight=False)
        return
    _switch(state, target)


def _pick_session(state: ChatState) -> None:
    """``/sessions``: this directory's recent sessions, numbered; a number switches in place."""
    from agentcli.ui.tables import sessions_table

    rows = state.store.list_sessions(PICK, directory=str(state.directory))
    if not rows:
        state.console.print("no sessions yet")
        return
    for n, line in enumerate(sessions_table(rows).lines(state.console.width - 4)):
        state.console.print(f"{n - 1:>2}  {line}" if n >= 2 else f"    {line}", highlight=False, markup=False)
    try:
        reply = PromptSession().prompt("number to switch to (Enter keeps this one) › ").strip()
    except (KeyboardInterrupt, EOFError):
        return
    if reply.isdigit() and 1 <= int(reply) <= len(rows):
        _switch(state, rows[int(reply) - 1].id)
    elif reply:
        state.console.print(f"no session number {reply}")


def _slash(state: ChatState, line: str, renderer: TurnRenderer) -> str | None:
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    console = state.console
    if name in ("exit", "quit", "q"):
        return "exit"
    if name == "help":
        console.print(HELP, highlight=False, markup=False)
    elif name == "new":
        state.session_id = None
        console.print("[dim]new session: your next message starts it[/]")
    elif name == "sessions":
        _pick_session(state)
    elif name == "resume":
        _resume(state, arg)
    elif name == "model":
        if not arg:
            console.print(f"model: {state.model or '(none)'}")
        elif _model_usable(state, arg):
            state.model = arg
            state.loop = None  # rebuilt with the new model on the next message
            console.print(f"model: {arg}")
    elif name in ("undo", "redo"):
        _undo_turn(state, again=name == "redo")
    elif name == "context":
        if state.session_id is None:
            console.print("[dim]nothing in the window yet[/]")
        else:
            _show_context(state, renderer)
    elif name in ("compact", "summarize"):
        if state.session_id is None:
            console.print("[dim]nothing to compact yet[/]")
        elif arg == "undo":
            _undo_compaction(state, renderer)
        else:
            _turn(state, renderer, lambda loop, sid, abort: loop.compact(sid, focus=arg or None, abort=abort))
    else:
        console.print(f"unknown command /{name} (try /help)")
    return None
