"""``agentcli trust [DIR]``: trust a folder's project config, forget the answer, or list the answers
(see `agentcli.trust`; the chat asks its own question, ``cli/trust_question.py``)."""

from __future__ import annotations

from pathlib import Path

import typer

from agentcli.cli.common import CliError, load_config
from agentcli.config import trust_file
from agentcli.trust import TrustStore
from agentcli.trusted_config import record_trust


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
