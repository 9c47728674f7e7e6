"""``agentcli context [SESSION]``: the window of a session split by category (see /context)."""

from __future__ import annotations

from rich.console import Console

from agentcli.app.actions import context_renderable_for
from agentcli.cli.model_choice import loop_for_session


def show_context(ref: str | None, *, model: str | None, api_base: str | None) -> None:
    loop, session_id = loop_for_session(
        ref,
        model=model,
        api_base=api_base,
        missing="no session here yet (give a session id, see `agentcli sessions list --all`)",
        need_key=False,  # the view sends nothing
    )
    Console(highlight=False).print(context_renderable_for(loop.runtime, session_id))
