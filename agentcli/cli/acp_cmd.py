"""``agentcli acp``: serve the Agent Client Protocol on stdio, so an editor (Zed, a JetBrains IDE,
Neovim, Emacs…) drives agentcli's sessions (``agentcli.acp``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentcli.cli import lifecycle
from agentcli.cli.common import open_store


def serve_acp(*, model: str | None, api_base: str | None, log_file: Path | None) -> None:
    from agentcli.acp.server import claim_stdio, serve, setup_logging

    stdio = claim_stdio()  # first: nothing printed from here on can reach the protocol's stdout
    setup_logging(log_file)
    store = open_store()
    lifecycle.settle()  # startup is over: sessions are built as the client asks for them
    asyncio.run(serve(store, stdio, model=model, api_base=api_base))
