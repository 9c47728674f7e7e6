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
    One key answers: y or n is remembered for this config; Ctrl-C / Ctrl-D / Esc leaves it untrusted for
    this chat only; any other key gets a line naming the keys.
    Returns the config to use and what the user typed before the question was on screen: those keys
    must not answer it (an early "y⏎" would trust the folder unseen), so they become the start of the
    first message instead."""
    state = loaded.trust
    if state is None or not state.pending:
        return loaded, ""
    from agentcli.cli.typeahead import ESC, ask_key

    typer.echo(f"This folder's project config ({state.root}) reaches beyond the project:")
    for line in describe(state):
        typer.echo(line)
    typer.echo("Until you trust the folder these keys are ignored (nothing is read, loaded or sent).")
    try:
        trusted, early = ask_key(
            "Trust this folder? [y]es / [n]o › ",
            {"y": True, "n": False, ESC: None},
            tell=typer.echo,
            kept_for="first",
            hint="press y to trust this folder, n not to (Esc or Ctrl-D: not trusted, this chat only)",
        )
    except KeyboardInterrupt:  # Ctrl-C
        trusted, early = None, ""
    if trusted is None:
        typer.echo("not trusted (this chat only)")
        return loaded, early
    record_trust(state, trusted)
    return load_config(directory), early
