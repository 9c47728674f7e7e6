"""``agentcli run "message"``: one turn, non-interactively, like ``opencode run``.

stdout carries the answer (raw text when piped, rendered markdown on a terminal) or JSON lines with
``--format json``; tool lines, notices and the gauge go to stderr. Piped stdin is added to the
message (``cat log | agentcli run "explain"``). Exit 0 on success, 1 when the turn ended in an error
or was stopped unfinished (a doom loop, the step limit), 3 when a tool was refused because nobody
could be asked (no ``--yes``), 130 when cancelled, 141 when stdout was closed early (``| head``: the
request is cancelled, nothing is printed).
"""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from rich.console import Console

from agentcli.app.setup import mentioned_subagent, resolve_session, session_agent, start_mcp, warm_for
from agentcli.cli.common import CliError, is_tty, load_config, open_store, require_trust, too_large_line
from agentcli.cli.model_choice import ModelChoice, build_chosen, default_model, remember_model, session_model
from agentcli.cli.render import TurnRenderer, gauge_for
from agentcli.cli.worker import Turn
from agentcli.session import events
from agentcli.session.agents.subagent import delegate
from agentcli.session.request.input_size import InputTooLarge, check_input
from agentcli.ui.wrap import error_line, stderr_console, warning_line

TITLE_WAIT = 3.0  # seconds to let the background title request land before exiting
EXIT_REFUSED = 3
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader went away


def message_with_stdin(words: list[str], stdin: Any = None) -> str:
    """The message words, then whatever was piped in (as ``opencode run`` and ``claude -p`` take it)."""
    stdin = sys.stdin if stdin is None else stdin
    text = " ".join(words)
    if stdin is None or stdin.isatty():
        return text
    piped = stdin.read()
    return f"{text}\n\n{piped}" if text.strip() and piped.strip() else (text or piped)


class StdoutGuard:
    """Wraps stdout listeners: when the reader goes away (``| head``) the turn is cancelled, and
    nothing more is written — no BrokenPipeError on every later event, nor at exit."""

    def __init__(self, turn: Turn) -> None:
        self.turn = turn
        self.closed = False

    def wrap(self, listener: Any) -> Any:
        def guarded(event: Any) -> None:
            if not self.closed:
                self.call(listener, event)

        return guarded

    def call(self, fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except OSError as exc:
            if not isinstance(exc, BrokenPipeError) and exc.errno != errno.EPIPE:
                raise
            self.closed = True
            self.turn.abort.set()
            # Later writes (and the interpreter's final flush) go nowhere instead of failing.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)


class _JsonListener:
    """``run --format json``: one JSON object per line. A compaction's summary is its own event
    type ("summary"), so a script joining "text" events gets only the answer."""

    def __init__(self) -> None:
        self.summary = False  # the step streaming now writes a compaction summary
        self.pending: list[dict[str, Any]] = []  # its text, told once the summary has succeeded

    def __call__(self, event: Any) -> None:
        if isinstance(event, events.StepStarted):
            self.summary = event.message.summary
            self.pending.clear()  # a new attempt
        elif isinstance(event, events.CompactionFinished | events.CompactionFailed):
            self.summary = False
            # What a summary that failed part-way streamed (a cut or stalled stream) is not the summary.
            if isinstance(event, events.CompactionFinished) and not event.fallback:
                for out in self.pending:
                    _emit(out)
            self.pending.clear()
        if isinstance(event, events.TextDelta) and not event.reasoning and not self.summary:
            # The answer as it streams; the part's whole text still follows as its "text" event.
            _emit({"type": "text_delta", "part_id": event.part_id, "text": event.text})
        elif isinstance(event, events.TextEnded) and not event.reasoning and self.summary:
            self.pending.append({"type": "summary", "part_id": event.part_id, "text": event.text})
        elif isinstance(event, events.ErrorOccurred) and self.summary:
            return  # a failed summary is told by its "compaction_failed" event
        else:
            _json_event(event)


def _emit(out: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def _json_event(event: Any) -> None:
    out: dict[str, Any] | None = None
    if isinstance(event, events.TextEnded) and not event.reasoning:
        out = {"type": "text", "part_id": event.part_id, "text": event.text}
    elif isinstance(event, events.ToolUpdated) and event.part.state.status in ("completed", "error"):
        out = {"type": "tool", "part": event.part.model_dump(mode="json")}
    elif isinstance(event, events.StepFinished):
        out = {
            "type": "step_finish",
            "message_id": event.message.id,
            "tokens": event.message.tokens.model_dump(),
            "cost": event.message.cost,
            "finish": event.message.finish,
        }
    elif isinstance(event, events.ErrorOccurred):
        out = {"type": "error", "kind": event.kind, "message": event.message}
    elif isinstance(event, events.CompactionFinished):
        out = {
            "type": "compacted",
            "auto": event.auto,
            "overflow": event.overflow,
            "tokens_before": event.tokens_before,
            "tokens_after": event.tokens_after,
            "cost": event.cost,
            "fallback": event.fallback,
            "background": event.background,
        }
    elif isinstance(event, events.PermissionRefused):
        out = {"type": "permission_refused", "tool": event.tool, "hint": event.hint}
    elif isinstance(event, events.CompactionFailed):
        out = {"type": "compaction_failed", "message": event.message}
    elif isinstance(event, events.StepLimitReached):
        out = {"type": "step_limit", "max_steps": event.max_steps}
    elif isinstance(event, events.Pruned):
        out = {"type": "pruned", "tokens": event.tokens, "parts": event.parts}
    if out is not None:
        _emit(out)


def _session_for(loop: Any, session_id: str | None, text: str, directory: Path, api_base: str | None) -> str:
    """The session the turn runs in: made now if new, once the message is known to fit the model's
    window (one that cannot is refused, and nothing is written); it remembers the model it runs on."""
    try:
        check_input(loop.runtime, session_id, text)
    except InputTooLarge as exc:
        raise CliError(
            f"{too_large_line(exc)}; nothing was sent. Save it to a file and name the file in the"
            " message: the model reads it a part at a time",
            2,
        ) from None
    store = loop.runtime.store
    if session_id is None:
        session_id = store.create_session(
            str(directory), loop.runtime.model.name, agent=loop.runtime.agent.name
        ).id
    remember_model(store, session_id, loop.runtime.model.name, api_base)
    return session_id


def _attached(text: str, directory: Path, servers: Collection[str]) -> list[Any]:
    """What the message's ``@path`` mentions attach, as in the chat; one that cannot go (no such
    file, a binary one) stops the run before anything is sent. ``@server:uri`` (an MCP resource of
    one of ``servers``) is left for ``_resources``, once the servers are started."""
    from agentcli.app.attach import MENTION, AttachRefused, attachments, mentioned_paths, refuse_missing

    others = tuple(w for m in MENTION.finditer(text) if (w := m.group(1)).partition(":")[0] in servers)
    try:
        refuse_missing(text, directory, others)
        return attachments(mentioned_paths(text, directory), directory)
    except AttachRefused as exc:
        raise CliError(f"{exc}; nothing was sent", 2) from None


def _resources(text: str, mcp: Any) -> list[Any]:
    """The MCP resources ``@server:uri`` attaches, as in the chat (waiting for a server starting)."""
    from agentcli.app.attach import AttachRefused
    from agentcli.app.mcp_attach import mcp_attachments, mcp_mentions

    try:
        return mcp_attachments(mcp_mentions(text, mcp), mcp)
    except AttachRefused as exc:
        raise CliError(f"{exc}; nothing was sent", 2) from None


def _check_arguments(fmt: str, text: str, command: str | None) -> None:
    if fmt not in ("text", "json"):
        raise CliError(f"--format must be text or json, not '{fmt}'", 2)
    if not text.strip() and command is None:
        raise CliError("the message is empty", 2)


def command_arguments(words: list[str]) -> str:
    """``run --command``'s words as the command's arguments, as ``opencode run`` joins them: a word
    with a space is quoted, so it stays one ``$1``."""
    return " ".join('"' + w.replace('"', '\\"') + '"' if " " in w else w for w in words)


def _command_text(loaded: Any, directory: Path, name: str, arguments: str, mcp: Any = None) -> str:
    """The message ``run --command NAME`` sends: the custom command's template (or, for
    ``server:prompt``, the MCP prompt's messages, ``mcp`` being started) expanded as ``/NAME arguments``
    is in the chat; an unknown name or a refused prompt stops the run, saying why."""
    from agentcli.app import custom_commands
    from agentcli.config import global_config_dir

    trust = loaded.trust
    found = custom_commands.load(
        directory,
        global_config_dir(),
        trusted=trust is None or trust.trusted,
        configured=loaded.config.command,
    )
    name = name.removeprefix("/")
    try:
        command = custom_commands.find(name, found, mcp) if mcp is not None else found.get(name)
        text = command.expand(arguments.strip()) if command is not None else ""
    except ValueError as exc:  # an MCP prompt: an argument missing, or its server refused
        raise CliError(f"command {name}: {exc}", 2) from None
    if command is None:
        names = ", ".join(sorted(custom_commands.with_mcp(found, mcp) if mcp is not None else found))
        raise CliError(
            f'command not found: "{name}". '
            + (f"Available commands: {names}" if names else "There are no custom commands here"),
            2,
        )
    if not text.strip():
        raise CliError(f"command {name} expands to an empty message", 2)
    return text


def _say_resumed(err: Console, choice: ModelChoice) -> None:
    """`-c` without --api-base goes back to the session's stored base URL: one line says which."""
    if (resumed := choice.resumed_line()) is not None:
        err.print(f"agentcli: {resumed}", markup=False)


def run_once(
    text: str,
    *,
    model: str | None,
    session: str | None,
    cont: bool,
    api_base: str | None,
    yes: bool,
    fmt: str,
    trust: bool = False,
    agent: str | None = None,
    command: str | None = None,
) -> int:
    _check_arguments(fmt, text, command)
    directory = Path.cwd()
    loaded = load_config(directory, trust=trust)
    require_trust(loaded)
    # `--command NAME`: the command's template, the message its arguments. An MCP prompt
    # (`server:prompt`) is expanded once its server has started, below.
    prompt = command is not None and ":" in command
    if command is not None and not prompt:
        text = _command_text(loaded, directory, command, text)
    attached = [] if prompt else _attached(text, directory, loaded.config.mcp)
    store = open_store()
    session_id = resolve_session(store, session, cont, directory)
    if agent is None and session_id is not None:  # a continued session goes on with its agent
        agent = session_agent(loaded, store.get_session(session_id).agent)
    # ... and on its model
    choice = session_model(store, session_id, model, api_base, default_model(loaded, agent))
    # A model the lean path serves never imports litellm; any other starts importing it now, in the
    # background, while the loop is built.
    warm_for(loaded, choice.model, choice.api_base)
    mcp = start_mcp(loaded, directory)  # in the background: the first step waits for what is still starting
    if command is not None and prompt:
        text = _command_text(loaded, directory, command, text, mcp)
        attached = _attached(text, directory, loaded.config.mcp)
    attached += _resources(text, mcp)
    err = stderr_console()
    renderer = TurnRenderer(
        Console(highlight=False),
        err,
        cwd=directory,
        raw_stdout=not is_tty(sys.stdout),
        show_reasoning=is_tty(sys.stdout),
    )
    if fmt == "text":
        renderer.waiting()
    try:
        loop, choice = build_chosen(
            loaded,
            store,
            choice,
            warn=lambda line: err.print(warning_line(line)),
            yes=yes,
            asker=None,
            directory=directory,
            mcp=mcp,
            agent=agent,
        )
    finally:
        renderer.pause()
    _say_resumed(err, choice)
    session_id = _session_for(loop, session_id, text, directory, choice.api_base)

    def tell(line: str) -> None:
        renderer.pause()
        err.print(f"agentcli: {line}", markup=False)

    turn = Turn(tell=tell)
    guard = StdoutGuard(turn)
    loop.runtime.bus.subscribe(guard.wrap(_JsonListener() if fmt == "json" else renderer))
    if fmt == "json":
        loop.runtime.bus.subscribe(
            lambda e: renderer.notes.errors.append(e.message) if isinstance(e, events.ErrorOccurred) else None
        )
    subagent = mentioned_subagent(loop.runtime, text, directory)
    if subagent is not None:  # `@agent message`: straight to that subagent
        last = turn.run(lambda abort: delegate(loop.runtime, session_id, subagent, text, abort))
    else:
        last = turn.run(lambda abort: loop.prompt(session_id, text, abort, attached=attached))
    if guard.closed:
        return EXIT_PIPE_CLOSED  # the reader has what it wanted; the session is kept
    if loop.title_thread is not None:
        loop.title_thread.join(TITLE_WAIT)

    if turn.cancelled:
        err.print("cancelled")
        return 130
    # A turn that ends while the model still wanted tools (doom loop, step limit) did not finish either.
    failed = last is None or last.error is not None or last.finish == "tool-calls"
    code = 1 if failed else EXIT_REFUSED if loop.runtime.policy.refused else 0
    if fmt == "json":
        info = store.get_session(session_id)
        guard.call(
            sys.stdout.write,
            json.dumps(
                {
                    "type": "result",
                    "session_id": session_id,
                    "message_id": last.id if last else None,
                    "error": _result_error(last, renderer.notes.errors) if failed else None,
                    "exit_code": code,  # the process's exit status, always
                    "tokens": info.tokens.model_dump(),
                    "cost": info.cost,
                    "context_tokens": info.context_tokens,
                }
            )
            + "\n",
        )
        guard.call(sys.stdout.flush)
    elif is_tty(sys.stderr):
        err.print(gauge_for(loop.runtime, session_id, renderer.notes))
    if failed and last is not None and last.error is not None and fmt == "text" and not renderer.notes.errors:
        err.print(error_line(str(last.error.message)), soft_wrap=True)
    if failed:
        err.print(
            f'session {session_id} kept; continue it with: agentcli run --session {session_id} "..."',
            style="dim",
        )
    # 3: each refusal was told on stderr with how to allow it (PermissionRefused)
    return code


def _result_error(last: Any, errors: list[str]) -> dict[str, Any]:
    """Why the turn failed, for the JSON ``result`` event (non-null whenever the exit status is 1)."""
    if last is not None and last.error is not None:
        return dict(last.error.model_dump())
    reason = errors[-1] if errors else "the turn ended before the model gave an answer"
    return {"name": "TurnStopped", "message": reason}
