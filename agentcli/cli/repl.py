"""The chat's read loop: a message, a ``!command``, a custom command or a slash command at a time,
until ``/exit`` or Ctrl-D; then the process leaves at once."""

from __future__ import annotations

from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import get_app
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.filters import Condition
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from agentcli.cli import lifecycle
from agentcli.cli.chat_session import ChatState, send, shell
from agentcli.cli.common import say
from agentcli.cli.paste import PasteHistory, Pastes
from agentcli.cli.render import TurnRenderer
from agentcli.cli.slash import BUILTINS, slash
from agentcli.config import data_dir
from agentcli.private_files import touch_private
from agentcli.ui.wrap import error_line


def _switches_agent(buffer: Buffer) -> bool:
    """Tab switches the agent only on an empty line: with text typed it completes (a slash command,
    an ``@`` mention) or does nothing, so a message being written never changes its agent."""
    return buffer.complete_state is None and not buffer.text.strip()


def _bindings(state: ChatState, pastes: Pastes) -> KeyBindings:
    kb = KeyBindings()

    @kb.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    # Tab on an empty line switches the primary agent, as in OpenCode (the prompt shows which);
    # otherwise prompt_toolkit's own Tab completes.
    @kb.add("tab", filter=Condition(lambda: _switches_agent(get_app().current_buffer)))
    def _next_agent(event: KeyPressEvent) -> None:
        state.next_agent()
        event.app.invalidate()

    pastes.bind(kb)
    return kb


def repl(state: ChatState, renderer: TurnRenderer) -> None:
    """Read messages and commands until /exit or Ctrl-D; then leave the process at once."""
    console = state.console
    try:
        history_path = touch_private(data_dir() / "chat_history")  # what the user typed: private
        history: FileHistory | InMemoryHistory = FileHistory(str(history_path))
    except OSError:
        history = InMemoryHistory()
    from agentcli.app import custom_commands
    from agentcli.cli.chat_input import ChatCompleter
    from agentcli.config import global_config_dir

    trust = state.loaded.trust
    state.custom = custom_commands.load(
        state.directory,
        global_config_dir(),
        trusted=trust is None or trust.trusted,
        configured=state.loaded.config.command,
    )
    names: dict[str, str] = {}
    mentions = {a.name: a.description or "subagent" for a in state.agents().subagents() if not a.hidden}
    pastes = Pastes()
    prompt: PromptSession[str] = PromptSession(
        history=PasteHistory(history, pastes),
        key_bindings=_bindings(state, pastes),
        multiline=False,
        completer=ChatCompleter(state.directory, names, mentions),
        complete_while_typing=False,
    )

    if state.notices is not None:
        state.notices.app = prompt.app
    while True:
        if state.notices is not None:
            state.notices.flush()  # what an MCP server said while a turn ran
        names.clear()  # the MCP servers' prompts join as their servers connect
        names.update(BUILTINS)
        names.update({n: _described(c) for n, c in custom_commands.with_mcp(state.custom, state.mcp).items()})
        try:
            text = prompt.prompt(lambda: f"{state.agent} › ", default=state.typed_ahead.strip("\r\n"))
            state.typed_ahead = ""
        except KeyboardInterrupt:
            continue
        except EOFError:
            break
        if not text.strip():
            continue
        try:
            if _dispatch(state, renderer, pastes.expand(text)) == "exit":
                break
        except Exception as exc:  # the database gone, a bug: one line, and the chat goes on
            renderer.pause()
            first = str(exc).splitlines()[0] if str(exc).strip() else type(exc).__name__
            console.print(error_line(first), soft_wrap=True)
    console.print("[dim]bye[/]")
    hint = resume_hint(state)
    if hint:
        say(hint)
    lifecycle.finish(0)  # daemon threads (title requests, litellm warm-up) must not delay the exit


def _described(command: Any) -> str:
    hint = f" ({command.hint})" if command.hint else ""
    return (command.description or "custom command") + hint


def resume_hint(state: ChatState) -> str | None:
    """The line that says how to come back to a session that holds messages: ``-c`` when it is the
    latest here (what ``-c`` would pick), else its id."""
    if state.session_id is None:
        return None
    try:
        if state.store.get_session(state.session_id).messages == 0:
            return None
        latest = state.store.latest_session(str(state.directory))
    except Exception:  # the database gone: leaving must not fail
        return None
    if latest is not None and latest.id == state.session_id:
        return "resume with: agentcli -c"
    return f"resume with: agentcli -s {state.session_id}"


def _dispatch(state: ChatState, renderer: TurnRenderer, text: str) -> str | None:
    """One line the user entered: a ``!command``, a custom or slash command, or a message."""
    line = text.strip()
    if line.startswith("!") and len(line) > 1:
        shell(state, line[1:].strip())
        return None
    if line.startswith("/"):
        from agentcli.app.custom_commands import find

        name, _, args = line[1:].partition(" ")
        try:  # an MCP prompt asks its server (waiting for it if it is still starting)
            command = find(name, state.custom, state.mcp) if name not in BUILTINS else None
            expanded = command.expand(args.strip()) if command is not None else ""
        except ValueError as exc:  # an MCP prompt: an argument missing, or the server refused
            state.console.print(error_line(str(exc)))
            return None
        except KeyboardInterrupt:
            state.console.print("[dim]cancelled[/]")
            return None
        if command is not None:
            state.console.print(
                f"[dim]/{name} →[/] {expanded.splitlines()[0] if expanded else ''}", highlight=False
            )
            send(state, renderer, expanded)
            return None
        return slash(state, line, renderer)
    send(state, renderer, text)
    return None
