"""``agentcli acp``: the agent on stdio. stdout carries JSON-RPC and nothing else.

The protocol takes its own copies of the process's stdin and stdout; then the process's stdout
becomes its stderr and its stdin /dev/null. So whatever else would print — a library's warning, a
plugin's ``print``, a rich console, a tool's subprocess — lands on stderr (the client's log), and
nothing can read the client's messages away. Logs go to stderr, or to ``--log FILE``.

When the client goes away (stdin closes), or the process is told to stop (SIGTERM, SIGINT), running
turns are cancelled and allowed to finish closing their records; their sessions are kept and their
leases released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from pathlib import Path

from acp.agent.connection import AgentSideConnection

from agentcli.acp.agent import AcpAgent
from agentcli.acp.transport import LineTransport
from agentcli.private_files import touch_private
from agentcli.store.store import Store

LOG_FORMAT = "%(asctime)s agentcli acp %(levelname)s %(name)s: %(message)s"


def claim_stdio() -> tuple[int, int]:
    """The protocol's own descriptors for stdin and stdout; fd 0 becomes /dev/null, fd 1 stderr."""
    sys.stdout.flush()
    read_fd, write_fd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return read_fd, write_fd


def setup_logging(log_file: Path | None) -> None:
    level = logging.DEBUG if os.environ.get("AGENTCLI_DEBUG") else logging.INFO
    if log_file is not None:
        handler: logging.Handler = logging.FileHandler(touch_private(log_file), encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.captureWarnings(True)
    for noisy in ("httpx", "httpcore", "LiteLLM", "litellm"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


async def serve(
    store: Store,
    stdio: tuple[int, int],
    *,
    model: str | None,
    api_base: str | None,
    start_agent: str | None = None,
) -> None:
    """Serve until the client leaves; ``stdio``: the protocol's descriptors (``claim_stdio``);
    ``start_agent``: the agent new sessions start in (``--agent``)."""
    read_fd, write_fd = stdio
    agent = AcpAgent(store, model=model, api_base=api_base, agent=start_agent)
    transport = LineTransport(read_fd, write_fd)
    # The SDK answers what AcpAgent does not implement (fork, resume, ext_*) as "method not found".
    conn = AgentSideConnection(agent, transport, listening=False)  # type: ignore[arg-type]
    assert agent.outbox is not None
    pump = asyncio.create_task(agent.outbox.run(), name="acp-outbox")
    logging.getLogger(__name__).info("serving on stdio")
    listening = asyncio.ensure_future(conn.listen())
    loop = asyncio.get_running_loop()
    for stop in (signal.SIGTERM, signal.SIGINT):  # told to stop: as when the client leaves
        loop.add_signal_handler(stop, listening.cancel)
    try:
        with contextlib.suppress(asyncio.CancelledError):
            await listening
    finally:
        await agent.shutdown()
        pump.cancel()
        await conn.close()
    logging.getLogger(__name__).info("the client closed the connection")
