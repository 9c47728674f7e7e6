"""``agentcli mcp list``: start the configured MCP servers, wait for each (up to its timeout), and
show how each fared, its tools and what their schemas cost the window."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from agentcli.cli.common import load_config
from agentcli.cli.setup import mcp_notes, start_mcp


def list_servers(*, as_json: bool) -> int:
    directory = Path.cwd()
    loaded = load_config(directory)
    host = start_mcp(loaded, directory, notify=lambda line: None)  # the table says it all
    if host is not None:
        host.wait_all()
    statuses = host.statuses() if host is not None else []
    if host is not None:
        host.close()
    if as_json:
        print(json.dumps([{**s.model_dump(), "tokens": s.tokens} for s in statuses], indent=2))
        return 0
    from agentcli.ui.mcp_table import mcp_table

    Console(highlight=False).print(mcp_table(statuses, mcp_notes(loaded)))
    return 0
