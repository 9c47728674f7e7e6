"""The chat's slash commands (``/help``, ``/new``, ``/sessions``, ``/resume``, ``/model``, ``/undo``,
``/redo``, ``/context``, ``/compact``, ``/exit``): each one line of result or error, the REPL goes on."""

from __future__ import annotations

import difflib
from typing import Any

from prompt_toolkit import PromptSession
from rich.text import Text

from agentcli.cli.chat_mcp import show_mcp
from agentcli.cli.chat_session import ChatState, run_turn, show_where
from agentcli.cli.common import CliError
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.ui.wrap import Wrapped, described, error_line, help_renderable

HELP = """\
Commands:
  /help              this help
  /new               start a new session
  /sessions          this directory's recent sessions; type a number to switch to one
  /resume [ID]       switch to a session (default: the latest here), showing where it stands
  /model [NAME]      show or switch the model (litellm string or provider/model)
  /agent [NAME]      show the agents, or switch the primary agent (also Tab on an empty line)
  /context           what fills the context window, by category
  /mcp               the MCP servers: status, tools, what their schemas cost
  /compact [focus]   summarise the session now and continue from the summary (also /summarize)
  /compact undo      undo the last compaction: the full history comes back (if it fits)
  /undo, /redo       revert the last turn's file edits and hide it from the model; put it back
  /exit              leave (also /quit, /q, or Ctrl-D)
  /NAME [args]       a custom command (.opencode/command/NAME.md, .agentcli/commands/NAME.md)
  /SERVER:PROMPT …   an MCP server's prompt as your message (listed below)
  !command           run a shell command here; its output goes into the conversation
  @path              attach a file to the message (Tab completes paths and commands)
  @agent message     send the message to that subagent; its answer comes back here
Keys: Enter sends · Alt-Enter / Esc Enter adds a line · Tab switches the primary agent
      · Ctrl-C or Esc cancels a running turn
Permission questions: one key, o once · a always · d deny · Ctrl-C or Esc cancels the turn"""


PICK = 10  # sessions offered by /sessions
BUILTINS = {
    "help": "this help",
    "new": "a new session",
    "sessions": "switch session",
    "resume": "continue a session",
    "model": "show or switch the model",
    "agent": "show or switch the agent",
    "undo": "revert the last turn",
    "redo": "put it back",
    "context": "what fills the window",
    "mcp": "MCP servers",
    "compact": "summarise now",
    "exit": "leave",
}


def _model_usable(state: ChatState, name: str) -> bool:
    """``/model NAME`` checks the name (and the key it needs) at once, keeping the old model if bad."""
    from agentcli.app.setup import check_key, model_info

    try:
        info = model_info(state.loaded, name, state.api_base)
        check_key(info)
        if state.api_base:
            _check_served(info)
    except CliError as exc:
        state.console.print(error_line(str(exc), f"(still {state.model or 'no model'})"), soft_wrap=True)
        return False
    return True


def _check_served(info: Any) -> None:
    """With ``--api-base``, the name must be one the server lists (when it lists any)."""
    from agentcli.llm.window import server_models
    from agentcli.session.window import server_model

    served = server_models(info.route.api_base, info.route.api_key) if info.route.api_base else None
    wanted = server_model(info.route)
    if served and wanted not in served:
        listed = ", ".join(served[:8]) + (", …" if len(served) > 8 else "")
        raise CliError(f"the server at {info.route.api_base} has no model '{wanted}' (it lists: {listed})")


def _undo_turn(state: ChatState, *, again: bool) -> None:
    from agentcli.app.actions import apply_undo

    if state.session_id is None:
        state.console.print("[dim]nothing to undo yet[/]")
        return
    try:
        state.console.print(apply_undo(state.store, state.session_id, again=again), highlight=False)
    except CliError as exc:
        state.console.print(error_line(str(exc)), soft_wrap=True)


def _show_context(state: ChatState, renderer: TurnRenderer) -> None:
    from agentcli.app.actions import context_renderable_for

    try:
        loop = state.ensure_loop(renderer)
    except CliError as exc:
        state.console.print(error_line(str(exc)), soft_wrap=True)
        return
    state.console.print(context_renderable_for(loop.runtime, state.session_id or ""))


def _undo_compaction(state: ChatState, renderer: TurnRenderer) -> None:
    from agentcli.app.actions import undo_compaction

    try:
        loop = state.ensure_loop(renderer)
        state.console.print(
            Wrapped(Text(undo_compaction(loop.runtime, state.session_id or ""))), soft_wrap=True
        )
    except CliError as exc:
        state.console.print(error_line(str(exc)), soft_wrap=True)
        return
    renderer.notes.compacted = False  # the compaction the label told of is undone
    state.console.print(gauge_for(loop.runtime, state.session_id or "", renderer.notes))


def _switch(state: ChatState, session_id: str) -> None:
    from agentcli.cli.model_choice import session_model

    state.session_id = session_id
    session = state.store.get_session(session_id)
    state.console.print(f"[dim]now in[/] {session.title or session.id} [dim]({session.id})[/]")
    choice = session_model(state.store, session_id, None, None)
    if choice.model and choice.model != state.model:  # the session goes on with its own model
        state.model, state.api_base, state.choice, state.loop = choice.model, choice.api_base, choice, None
        state.model_pinned = True
        state.console.print(f"[dim]model:[/] {choice.model}", highlight=False)
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
        state.console.print(error_line(str(exc).splitlines()[0]), soft_wrap=True)
        return
    _switch(state, target)


def _pick_session(state: ChatState) -> None:
    """``/sessions``: this directory's recent sessions, numbered; a number switches in place."""
    from agentcli.ui.tables import sessions_table

    rows = state.store.list_sessions(PICK, directory=str(state.directory), roots=True)
    if not rows:
        state.console.print("no sessions yet")
        return
    for n, line in enumerate(sessions_table(rows).lines(state.console.width - 4)):
        state.console.print(f"{n - 1:>2}  {line}" if n >= 2 else f"    {line}", highlight=False, markup=False)
    try:
        reply = PromptSession[str]().prompt("number to switch to (Enter keeps this one) › ").strip()
    except (KeyboardInterrupt, EOFError):
        return
    if reply.isdigit() and 1 <= int(reply) <= len(rows):
        _switch(state, rows[int(reply) - 1].id)
    elif reply:
        state.console.print(f"no session number {reply}")


def _model(state: ChatState, name: str) -> None:
    """``/model NAME``: the chat's model from the next message on, and the session's at once (a later
    `agentcli -c` resumes on it even if nothing more is sent)."""
    from agentcli.cli.model_choice import remember_model

    if not name:
        state.console.print(f"model: {state.model or '(none)'}")
    elif _model_usable(state, name):
        state.model, state.model_pinned, state.choice = name, True, None
        state.loop = None  # rebuilt with the new model on the next message
        if state.session_id is not None:
            remember_model(state.store, state.session_id, name, state.api_base)
        state.console.print(f"model: {name}")


def _agent(state: ChatState, name: str) -> None:
    """``/agent``: the agents, the current one marked; ``/agent NAME`` switches the primary agent."""
    from agentcli.session.agents.registry import AgentError

    registry = state.agents()
    if not name:
        rows = [
            (f"{'›' if a.name == state.agent else ' '} {a.name}", a.description) for a in registry.primary()
        ]
        rows += [(f"  @{a.name}", a.description) for a in registry.subagents() if not a.hidden]
        state.console.print(described(rows, indent=0))
        return
    try:
        state.agent = registry.require_primary(name).name
    except AgentError as exc:
        state.console.print(error_line(str(exc)), soft_wrap=True)
        return
    state.console.print(f"agent: {state.agent}")


def _prompts_help(state: ChatState) -> str:
    """The MCP prompts ready now, one line each, under /help."""
    from agentcli.app.custom_commands import mcp_commands

    found = sorted(mcp_commands(state.mcp).values(), key=lambda c: c.name)
    lines = [f"  /{c.name} {c.hint}".rstrip() + f"  {c.description}" for c in found]
    return "\nMCP prompts:\n" + "\n".join(lines) if lines else ""


def slash(state: ChatState, line: str, renderer: TurnRenderer) -> str | None:
    name, _, arg = line[1:].partition(" ")
    arg = arg.strip()
    console = state.console
    if name in ("exit", "quit", "q"):
        return "exit"
    shown = {  # commands that only show something
        "help": lambda: console.print(help_renderable(HELP + _prompts_help(state))),
        "mcp": lambda: show_mcp(
            console, state.mcp, state.loaded, registry=state.agents(), agent=state.agent, loop=state.loop
        ),
    }
    if name in shown:
        shown[name]()
    elif name == "new":
        state.session_id = None
        console.print("[dim]new session: your next message starts it[/]")
    elif name == "sessions":
        _pick_session(state)
    elif name == "resume":
        _resume(state, arg)
    elif name == "model":
        _model(state, arg)
    elif name == "agent":
        _agent(state, arg)
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
            run_turn(
                state, renderer, lambda loop, sid, abort: loop.compact(sid, focus=arg or None, abort=abort)
            )
    else:
        near = difflib.get_close_matches(name, [*BUILTINS, "summarize", "quit"], n=1, cutoff=0.6)
        hint = f"did you mean /{near[0]}? " if near else ""
        console.print(f"unknown command /{name} ({hint}try /help)", highlight=False, markup=False)
    return None
