"""The chat's one-time trust question, asked before the first prompt (see ``agentcli.trust``)."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.common import load_config
from agentcli.trust import TrustState
from agentcli.trusted_config import TrustedConfig, record_trust


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
