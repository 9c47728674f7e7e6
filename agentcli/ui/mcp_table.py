"""``agentcli mcp list`` and ``/mcp``: each MCP server's status, tools, what their schemas cost, and
what they cost the parent's window (an agent's own server is marked with its agent)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentcli.mcp.status import ServerStatus
from agentcli.ui import theme

_STATUS_STYLE = {"connected": "green", "starting": "yellow", "failed": "red", "disabled": theme.META}


def _note(s: ServerStatus) -> str:
    if s.status == "idle":
        return f"starts when @{s.agent} runs"
    if s.status != "connected":
        return s.error
    note = f"started in {s.start_ms} ms" if s.start_ms is not None else ""
    return note + (f", restarted {s.restarts}×" if s.restarts else "")


def _footer(servers: list[ServerStatus], parent: str | None) -> list[Text]:
    carried = sum(s.parent_tokens for s in servers)
    elsewhere = sum(s.tokens for s in servers) - carried
    whose = f"@{parent}'s" if parent else "the parent's"
    lines = [Text(f"{carried} tokens of MCP tool schemas in every request of {whose} window", theme.META)]
    if elsewhere:
        why = "given to other agents only, or turned off by `tools`"
        lines.append(Text(f"{elsewhere} more not in it: {why}", theme.META))
    return lines


def mcp_table(
    servers: list[ServerStatus],
    notes: Sequence[str] = (),
    *,
    parent: str | None = None,
) -> RenderableType:
    """One row per server; ``notes``: lines below it (servers a project may not start yet);
    ``parent``: the primary agent whose window the Parent column counts."""
    if not servers:
        lines: list[RenderableType] = [Text("no MCP server configured (see `mcp` in opencode.json)")]
        return Group(*lines, *(Text(n, theme.META) for n in notes))
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    owned = any(s.agent for s in servers)  # the Agent column only when an agent has servers of its own
    for header, justify in (
        ("Server", "left"), *([("Agent", "left")] if owned else []), ("Type", "left"), ("Status", "left"),
        ("Tools", "right"), ("Tokens", "right"), ("Parent", "right"), ("Via", "left"), ("Note", "left"),
    ):  # fmt: skip
        table.add_column(header, justify="right" if justify == "right" else "left")
    for s in servers:
        connected = s.status == "connected"
        agent = [f"@{s.agent}" if s.agent else ""] if owned else []
        table.add_row(
            s.name,
            *agent,
            s.kind,
            Text(s.status, _STATUS_STYLE.get(s.status, "")),
            str(len(s.tools)) if connected else "–",
            str(s.tokens) if connected else "–",
            str(s.parent_tokens) if connected else "–",
            s.transport or "–",
            Text(_note(s), theme.META),
        )
    return Group(table, *_footer(servers, parent), *(Text(n, theme.META) for n in notes))
