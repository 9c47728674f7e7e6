"""``agentcli mcp list`` and ``/mcp``: each MCP server's status, tools, and what their schemas cost."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentcli.mcp.status import ServerStatus
from agentcli.ui import theme

_STATUS_STYLE = {"connected": "green", "starting": "yellow", "failed": "red", "disabled": theme.META}


def mcp_table(servers: list[ServerStatus], notes: list[str] = ()) -> RenderableType:  # type: ignore[assignment]
    """One row per server; ``notes``: lines below it (servers a project may not start yet)."""
    if not servers:
        lines: list[RenderableType] = [Text("no MCP server configured (see `mcp` in opencode.json)")]
        return Group(*lines, *(Text(n, theme.META) for n in notes))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for header, justify in (
        ("Server", "left"), ("Type", "left"), ("Status", "left"), ("Tools", "right"), ("Tokens", "right"),
        ("Via", "left"), ("Note", "left"),
    ):  # fmt: skip
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for s in servers:
        note = s.error
        if s.status == "connected":
            note = f"started in {s.start_ms} ms" if s.start_ms is not None else ""
            if s.restarts:
                note += f", restarted {s.restarts}×"
        table.add_row(
            s.name,
            s.kind,
            Text(s.status, _STATUS_STYLE.get(s.status, "")),
            str(len(s.tools)) if s.status == "connected" else "–",
            str(s.tokens) if s.status == "connected" else "–",
            s.transport or "–",
            Text(note, theme.META),
        )
    total = sum(s.tokens for s in servers)
    footer = Text(f"{total} tokens of MCP tool schemas in every request that offers them", theme.META)
    return Group(table, footer, *(Text(n, theme.META) for n in notes))
