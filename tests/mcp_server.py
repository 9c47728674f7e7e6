"""A real MCP server for the tests and the benchmark, written with the SDK's own server side (FastMCP).

    python tests/mcp_server.py [--transport stdio|streamable-http|sse] [--port N] [--slow SECONDS]
                               [--marker FILE] [--fail-start] [--wait-for FILE]

stdio by default; over HTTP it listens on 127.0.0.1. ``--slow`` waits before serving (a slow start),
``--marker`` writes a file when the server starts (a test can tell it never ran), ``--fail-start``
exits at once with a line on stderr, ``--wait-for`` serves only once FILE exists (a start that takes
exactly as long as the test wants, however loaded the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import time

from mcp.server.fastmcp import FastMCP
from mcp.types import EmbeddedResource, ImageContent, TextResourceContents, Tool, ToolExecution

# The smallest valid PNG (1x1, transparent).
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()


class Server(FastMCP):
    async def list_tools(self) -> list[Tool]:
        """``batch`` can only run as an MCP task (spec 2025-11-25): a client calling tools directly
        must not offer it."""
        tools = await super().list_tools()
        for tool in tools:
            if tool.name == "batch":
                tool.execution = ToolExecution(taskSupport="required")
        return tools


def build(port: int) -> FastMCP:
    server = Server("testserver", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool()
    def picture() -> ImageContent:
        """A tiny PNG image."""
        return ImageContent(type="image", data=PNG, mimeType="image/png")

    @server.tool()
    def document() -> EmbeddedResource:
        """An embedded text resource."""
        return EmbeddedResource(
            type="resource",
            resource=TextResourceContents(
                uri="memo://notes", mimeType="text/plain", text="notes from a resource"
            ),
        )

    @server.tool()
    def lines(count: int) -> str:
        """Many numbered lines."""
        return "\n".join(f"line {i}" for i in range(count))

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("the tool failed on purpose")

    @server.tool()
    def crash() -> str:
        """Kills the server process."""
        sys.stderr.write("crashing on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never answers (until the server is stopped); other calls are served meanwhile."""
        await asyncio.sleep(3600)
        return "late"

    @server.tool()
    def env(name: str) -> str:
        """An environment variable of the server and its working directory."""
        return f"{os.environ.get(name, '')} in {os.getcwd()}"

    server.add_tool(lambda: "done", name="batch", description="Runs as an MCP task only.")
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", default="stdio", choices=["stdio", "streamable-http", "sse"])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--slow", type=float, default=0.0)
    parser.add_argument("--marker")
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--wait-for")
    args = parser.parse_args()
    if args.marker:
        with open(args.marker, "a") as fh:
            fh.write(f"{os.getpid()}\n")
    if args.fail_start:
        sys.stderr.write("cannot start: missing API token\n")
        sys.exit(2)
    if args.slow:
        time.sleep(args.slow)
    while args.wait_for and not os.path.exists(args.wait_for):
        time.sleep(0.05)
    build(args.port).run(transport=args.transport)


if __name__ == "__main__":
    main()
