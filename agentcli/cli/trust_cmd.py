"""``agentcli trust [DIR]`` and the chat's one-time trust question (see `agentcli.trust`)."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.common import CliError, load_config
from agentcli.config import trust_file
from agentcli.trust import TrustState, TrustStore
from agentcli.trusted_config import TrustedConfig, record_trust


def trust_folder(directory: Path | None, *, forget: bool, show: bool) -> None:
    if show:
        for root, answer in TrustStore(trust_file()).folders().items():
            keys = f"  ({', '.join(answer.keys)})" if answer.keys else ""
            typer.echo(f"{'trusted' if answer.trusted else 'not trusted':<12} {root}{keys}")
        return
    folder = (directory or Path.cwd()).expanduser().resolve()
    if not folder.is_dir():
        raise CliError(f"not a folder: {folder}", 2)
    state = load_config(folder).trust
    assert state is not None
    if forget:
        gone = TrustStore(trust_file()).forget(state.root)
        typer.echo(f"forgot {state.root}" if gone else f"nothing remembered for {state.root}")
        return
    record_trust(state, True)
    if state.risks:
        typer.echo(f"trusted {state.root}: its project config may now use {', '.join(state.keys())}")
    else:
        typer.echo(f"trusted {state.root} (its project config sets nothing that needs trust)")


def describe(state: TrustState) -> list[str]:
    return [f"  {risk.key}: {risk.reason}" for risk in state.risks]


def ask_in_chat(loaded: TrustedConfig, directory: Path) -> tuple[TrustedConfig, str]:
    """Ask once, before the first prompt, when this folder's risky config has no recorded answer.
    Yes or no is remembered for this config; Ctrl-C / Ctrl-D leaves it untrusted for this chat only.
    Returns the config to use and what the user typed before the question was on screen: those keys
    must not answer it (an early "y⏎" would trust the folder unseen), so they become the start of the
    first message instead."""
    state = loaded.trust
    if state is None or not state.pending:
        return loaded, ""
    from agentcli.cli.typeahead import ask

    typer.echo(f"This folder's project config ({state.root}) reaches beyond the project:")
    for line in describe(state):
        typer.echo(line)
    typer.echo("Until you trust the folder these keys are ignored (nothing is read, loaded or sent).")
    trusted, early = ask(
        "Trust this folder? [y]es / [n]o › ",
        {"y": True, "yes": True, "n": False, "no": False},
        tell=typer.echo,
        kept_for="first",
    )
    if trusted is None:
        typer.echo("not trusted (this chat only)")
        return loaded, early
    record_trust(state, trusted)
    return load_config(directory), early
