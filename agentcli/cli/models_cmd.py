"""``agentcli models [SEARCH]``: the models litellm knows, with their limits."""

from __future__ import annotations

from rich.console import Console

from agentcli.llm.limits import list_models as known_models


def list_models(search: str | None) -> None:
    from agentcli.ui.tables import models_table

    rows = known_models(search)
    console = Console()
    if not rows:
        console.print(f"no model matches '{search}'" if search else "litellm knows no models")
        return
    console.print(models_table(rows))
