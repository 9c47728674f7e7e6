"""The ``agentcli`` command. Startup is a feature: this module imports typer only; each command
imports what it needs when it runs, and only chat / run / compact ever load litellm — and those only
for a model the lean streaming path does not serve (``agentcli.llm.lean``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from agentcli import __version__
from agentcli.cli import common

app = typer.Typer(
    name="agentcli",
    help="A terminal coding agent whose long sessions never die of a full context window.",
    no_args_is_help=False,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
sessions_app = typer.Typer(
    help="List, show, rename, delete, export and import sessions.", no_args_is_help=True
)
app.add_typer(sessions_app, name="sessions")
mcp_app = typer.Typer(help="The MCP servers of opencode.json's `mcp` key.", no_args_is_help=True)
app.add_typer(mcp_app, name="mcp")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentcli {__version__}")
        raise typer.Exit()


ModelOpt = Annotated[
    str | None,
    typer.Option("--model", "-m", help="A litellm model string or provider/model from opencode.json."),
]
SessionOpt = Annotated[
    str | None, typer.Option("--session", "-s", help="Continue this session (id or id prefix).")
]
ContinueOpt = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the most recent session in this directory.")
]
ApiBaseOpt = Annotated[
    str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server or Ollama.")
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Allow bash, edit and write without asking.")]
AgentOpt = Annotated[
    str | None,
    typer.Option("--agent", help="The primary agent: build (default), plan, or one from opencode.json."),
]
TrustOpt = Annotated[
    bool,
    typer.Option("--trust", help="Trust this folder's project config (remembered; see `agentcli trust`)."),
]


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Database: a file, sqlite:///PATH or postgresql+psycopg://USER@HOST/DB"
            " (default: $AGENTCLI_DB, database.url, or the user data dir).",
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    model: ModelOpt = None,
    session: SessionOpt = None,
    cont: ContinueOpt = False,
    api_base: ApiBaseOpt = None,
    yes: YesOpt = False,
    trust: TrustOpt = False,
    agent: AgentOpt = None,
) -> None:
    # Without a command: the chat, with every option `chat` takes (`agentcli -c` continues the
    # latest session here).
    common.STATE.db = db
    if ctx.invoked_subcommand is None:  # bare `agentcli` starts the chat, as `opencode` and `claude` do
        ctx.invoke(
            chat,
            model=model,
            session=session,
            cont=cont,
            api_base=api_base,
            yes=yes,
            trust=trust,
            agent=agent,
        )
    elif model or session or cont or api_base or yes or trust or agent:
        raise common.fail(
            "--model, --session, --continue, --api-base, --yes, --trust and --agent go after the command"
            " (or with no command, for the chat)",
            2,
        )


@app.command()
def chat(
    model: ModelOpt = None,
    session: SessionOpt = None,
    cont: ContinueOpt = False,
    api_base: ApiBaseOpt = None,
    yes: YesOpt = False,
    trust: TrustOpt = False,
    agent: AgentOpt = None,
) -> None:
    """Start an interactive session (the main job)."""
    from agentcli.cli.chat_cmd import chat as run_chat

    with common.errors():
        run_chat(
            model=model, session=session, cont=cont, api_base=api_base, yes=yes, trust=trust, agent=agent
        )


@app.command("run")
def run_command(
    message: Annotated[
        list[str] | None, typer.Argument(help="The message to send (piped stdin is added to it).")
    ] = None,
    model: ModelOpt = None,
    session: SessionOpt = None,
    cont: ContinueOpt = False,
    api_base: ApiBaseOpt = None,
    yes: YesOpt = False,
    fmt: Annotated[str, typer.Option("--format", help="Output: text or json.")] = "text",
    trust: TrustOpt = False,
    agent: AgentOpt = None,
    command: Annotated[
        str | None,
        typer.Option(
            "--command", help="Run this custom command instead of a message; the message is its arguments."
        ),
    ] = None,
) -> None:
    """Run one turn non-interactively and print the answer."""
    from agentcli.cli.run_cmd import command_arguments, message_with_stdin, run_once

    words = message or []
    with common.errors(json_result=fmt == "json"):
        code = run_once(
            message_with_stdin([command_arguments(words)] if command is not None else words),
            model=model,
            session=session,
            cont=cont,
            api_base=api_base,
            yes=yes,
            fmt=fmt,
            trust=trust,
            agent=agent,
            command=command,
        )
    raise typer.Exit(code)


@app.command()
def compact(
    session: Annotated[
        str | None, typer.Argument(help="Session id or prefix (default: the latest here).")
    ] = None,
    focus: Annotated[str | None, typer.Option("--focus", help="What the summary should keep.")] = None,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    revert: Annotated[
        bool,
        typer.Option(
            "--undo", help="Undo the last compaction instead (refused if the window would not fit)."
        ),
    ] = False,
) -> None:
    """Compact a session now: summarise its history and compact onto the summary (or --undo the last one)."""
    from agentcli.cli.compact_cmd import compact_session

    with common.errors():
        code = compact_session(session, focus=focus, model=model, api_base=api_base, revert=revert)
    raise typer.Exit(code)


@app.command()
def context(
    session: Annotated[
        str | None, typer.Argument(help="Session id or prefix (default: the latest here).")
    ] = None,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
) -> None:
    """Show what fills a session's context window, by category, against the usable budget."""
    from agentcli.cli.context_cmd import show_context

    with common.errors():
        show_context(session, model=model, api_base=api_base)


UndoSessionArg = Annotated[
    str | None, typer.Argument(help="Session id or prefix (default: the latest here).")
]


@app.command()
def undo(session: UndoSessionArg = None) -> None:
    """Revert the last turn's file edits and hide the turn from the model (refused if a file changed
    since)."""
    from agentcli.cli.undo_cmd import undo_command

    with common.errors():
        undo_command(session, again=False)


@app.command()
def redo(session: UndoSessionArg = None) -> None:
    """Put back the turn the last undo reverted."""
    from agentcli.cli.undo_cmd import undo_command

    with common.errors():
        undo_command(session, again=True)


@app.command()
def demo(
    no_chat: Annotated[
        bool, typer.Option("--no-chat", help="Play the demo and exit instead of opening the chat.")
    ] = False,
    fast: Annotated[bool, typer.Option("--fast", help="No pauses: play the demo at full speed.")] = False,
) -> None:
    """A short real session with a scripted local model: no key, no network."""
    from agentcli.cli.demo_cmd import run_demo

    with common.errors():
        run_demo(chat=not no_chat, fast=fast)


@app.command()
def acp(
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    agent: AgentOpt = None,
    log_file: Annotated[
        Path | None, typer.Option("--log", help="Write the log to this file instead of stderr.")
    ] = None,
) -> None:
    """Serve the Agent Client Protocol on stdio, for editors (Zed, JetBrains, Neovim, Emacs)."""
    from agentcli.cli.acp_cmd import serve_acp

    with common.errors():
        serve_acp(model=model, api_base=api_base, log_file=log_file, agent=agent)


@app.command()
def models(search: Annotated[str | None, typer.Argument(help="Filter by substring.")] = None) -> None:
    """List the models litellm knows, with their limits."""
    from agentcli.cli.models_cmd import list_models

    with common.errors():
        list_models(search)


@app.command("trust")
def trust_command(
    directory: Annotated[
        Path | None, typer.Argument(help="The project folder (default: the current one).")
    ] = None,
    forget: Annotated[
        bool, typer.Option("--forget", help="Forget the answer for this folder (ask again).")
    ] = False,
    show: Annotated[bool, typer.Option("--list", help="List the folders answered, trusted or not.")] = False,
) -> None:
    """Trust a folder's project config: its plugins, outside files, {env:} and provider URLs take effect."""
    from agentcli.cli.trust_cmd import trust_folder

    with common.errors():
        trust_folder(directory, forget=forget, show=show)


@sessions_app.command("list")
def sessions_list(
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
    count: Annotated[
        int | None, typer.Option("-n", "--max-count", help="Show at most N sessions (default 20).")
    ] = None,
    everywhere: Annotated[
        bool, typer.Option("--all", "-a", help="Sessions of every directory, not only this one.")
    ] = False,
) -> None:
    """List this directory's sessions, most recently updated first."""
    from agentcli.cli.sessions_cmd import list_sessions

    with common.errors():
        list_sessions(as_json=as_json, count=count, everywhere=everywhere)


@sessions_app.command("copy")
def sessions_copy(
    source: Annotated[
        str,
        typer.Option("--from", help="Database to read: a file, sqlite:///PATH or postgresql+psycopg://..."),
    ],
    target: Annotated[str, typer.Option("--to", help="Database to write (created and migrated if new).")],
    sessions: Annotated[
        list[str] | None, typer.Argument(help="Session ids or id prefixes (default: all).")
    ] = None,
) -> None:
    """Copy sessions between databases (SQLite <-> PostgreSQL); copying again is harmless."""
    from agentcli.cli.sessions_cmd import copy_sessions

    with common.errors():
        copy_sessions(source, target, sessions or [])


@sessions_app.command("show")
def sessions_show(
    session: Annotated[str, typer.Argument(help="Session id or id prefix.")],
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
    full: Annotated[
        bool, typer.Option("--full", help="Show pruned tool outputs and untrimmed results.")
    ] = False,
) -> None:
    """Show a session's whole transcript, compactions and pruned outputs included."""
    from agentcli.cli.sessions_cmd import show_session

    with common.errors():
        show_session(session, as_json=as_json, full=full)


SessionArg = Annotated[str, typer.Argument(help="Session id or id prefix.")]


@sessions_app.command("delete")
def sessions_delete(
    session: SessionArg, yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False
) -> None:
    """Delete a session and its whole history."""
    from agentcli.cli.sessions_cmd import delete_session

    with common.errors():
        delete_session(session, yes=yes)


@sessions_app.command("rename")
def sessions_rename(
    session: SessionArg, title: Annotated[str, typer.Argument(help="The new title.")]
) -> None:
    """Give a session a new title."""
    from agentcli.cli.sessions_cmd import rename_session

    with common.errors():
        rename_session(session, title)


@sessions_app.command("export")
def sessions_export(
    session: SessionArg,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="json (complete, re-importable), md, or opencode (for `opencode import`)."
        ),
    ] = "json",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file (private) instead of stdout.")
    ] = None,
) -> None:
    """Export a session as JSON, Markdown or OpenCode's JSON."""
    from agentcli.cli.sessions_cmd import export_session

    with common.errors():
        export_session(session, fmt=fmt, output=output)


@sessions_app.command("import")
def sessions_import(
    source: Annotated[
        str,
        typer.Argument(
            help="A JSON file from `agentcli sessions export` or `opencode export` (- for stdin)."
        ),
    ],
    here: Annotated[bool, typer.Option("--here", help="Make it a session of the current directory.")] = False,
) -> None:
    """Import a session: agentcli's JSON export or OpenCode's `opencode export`."""
    from agentcli.cli.sessions_cmd import import_session

    with common.errors():
        import_session(source, here=here)


@mcp_app.command("list")
def mcp_list(as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False) -> None:
    """Start each configured MCP server and show its status, tools and the tokens their schemas cost."""
    from agentcli.cli.mcp_cmd import list_servers

    with common.errors():
        code = list_servers(as_json=as_json)
    raise typer.Exit(code)


def _mount_config() -> None:
    from agentcli.cli.config_cmd import app as config_app

    app.add_typer(config_app, name="config", help="Read and write agentcli's user configuration.")


def run() -> None:
    # The config sub-app imports the config schema (pydantic models): mount it only when the command
    # line can reach it, so `sessions list` and friends don't pay for it.
    argv = sys.argv[1:]
    if "config" in argv or "--help" in argv or "-h" in argv:
        _mount_config()
    app()
