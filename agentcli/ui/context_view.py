"""Rendering a context report: one stacked bar over the model's window and a table of categories.

ui renders what it is handed: ``ContextReport`` says what this view reads of the report
``agentcli.session.request.context_report`` builds, so ui never names the session's code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from agentcli.ui import theme
from agentcli.ui.fmt import format_tokens


class DelegatedTools(Protocol):
    """Tools a subagent is given that this window does not carry."""

    @property
    def agent(self) -> str: ...
    @property
    def tools(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def waiting(self) -> Sequence[str]: ...


class ContextReport(Protocol):
    """What fills the window, by category (tokens), and the figures around it."""

    @property
    def rows(self) -> Mapping[str, int]: ...
    @property
    def summaries(self) -> Sequence[int]: ...
    @property
    def pruned_hidden(self) -> int: ...
    @property
    def context(self) -> int: ...
    @property
    def usable(self) -> int: ...
    @property
    def auto(self) -> bool: ...
    @property
    def request_input(self) -> int: ...
    @property
    def cache_read(self) -> int: ...
    @property
    def cache_write(self) -> int: ...
    @property
    def delegated(self) -> Sequence[DelegatedTools]: ...
    @property
    def difference(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def reserved(self) -> int: ...
    @property
    def window_source(self) -> str: ...


BAR = 60
STYLES = {
    "system prompt": "magenta",
    "tool schemas": "bright_magenta",
    "MCP tool schemas": "red",
    "summaries": "cyan",
    "user messages": "green",
    "assistant text": "blue",
    "tool calls": "bright_blue",
    "tool outputs": "yellow",
    "pruned outputs": "bright_black",
    "reasoning": "bright_cyan",
    "difference": "white",
}


def _rows(rep: ContextReport) -> list[tuple[str, int]]:
    # MCP schemas get a row only where servers are offering tools.
    rows = [(k, v) for k, v in rep.rows.items() if v or k != "MCP tool schemas"]
    if rep.difference:
        rows.append(("difference", rep.difference))
    return rows


def _bar(rep: ContextReport) -> Text:
    scale = rep.context or max(rep.total, 1)
    bar = Text()
    for label, tokens in _rows(rep):
        if tokens > 0:
            bar.append("█" * max(1, round(tokens * BAR / scale)), STYLES.get(label, ""))
    free = BAR - len(bar.plain)
    mark = round(rep.usable * BAR / scale) if rep.usable and rep.context else None
    for _ in range(max(0, free)):
        bar.append("│" if mark is not None and len(bar.plain) == mark else "░", theme.META)
    return bar


def _cache_line(rep: ContextReport) -> Text:
    """How much of the last request the provider's prompt cache served."""
    share = rep.cache_read * 100 // rep.request_input
    line = Text(f"last request {format_tokens(rep.request_input)} input · ", style=theme.META)
    line.append(f"{share}% from the prompt cache ({format_tokens(rep.cache_read)} read)")
    if rep.cache_write:
        line.append(f" · {format_tokens(rep.cache_write)} written to it", theme.META)
    return line


def context_renderable(rep: ContextReport, model: str) -> RenderableType:
    table = Table(box=None, show_header=False, pad_edge=False, padding=(0, 2, 0, 0))
    table.add_column()
    table.add_column(justify="right")
    table.add_column(justify="right", style=theme.META)
    denominator = rep.context or max(rep.total, 1)
    for label, tokens in _rows(rep):
        name = Text("■ ", STYLES.get(label, "")) + Text(label)
        if label == "summaries" and len(rep.summaries) > 1:
            name.append(f" ({', '.join(format_tokens(t) for t in rep.summaries)})", theme.META)
        if label == "pruned outputs" and rep.pruned_hidden:
            name.append(f" (placeholders; {format_tokens(rep.pruned_hidden)} cleared)", theme.META)
        if label == "difference":
            name = Text("■ ", STYLES["difference"]) + Text("provider count − estimate")
        table.add_row(
            name,
            format_tokens(tokens) if tokens >= 0 else f"−{format_tokens(-tokens)}",
            f"{tokens * 100 / denominator:.1f}%",
        )
    table.add_row(
        Text("total (the gauge)", style="bold"),
        Text(format_tokens(rep.total), style="bold"),
        f"{rep.total * 100 / denominator:.1f}%" if rep.context else "",
    )
    lines: list[RenderableType] = [Text(f"context · {model}", style="bold"), _bar(rep), table]
    if rep.context:
        budget = Text(
            f"window {format_tokens(rep.context)}{_told_by(rep.window_source)} · "
            f"usable {format_tokens(rep.usable)} · "
            f"reserved {format_tokens(rep.reserved)} · ",
            style=theme.META,
        )
        budget.append(
            f"auto-compaction at {format_tokens(rep.usable)}" if rep.auto else "auto-compaction off"
        )
        lines.append(budget)
    else:
        lines.append(
            Text(
                "limit unknown: set the model's limit to see the budget (no automatic compaction)", theme.META
            )
        )
    if rep.request_input:
        lines.append(_cache_line(rep))
    lines += _delegated(rep)
    return Group(*lines)


def _told_by(source: str) -> str:
    if not source:
        return ""
    if source == "default":
        return " (a default: nothing tells this model's window; set limit.context)"
    return f" (from {source})"


def _delegated(rep: ContextReport) -> list[RenderableType]:
    """The tools given to subagents only: what they would cost here, and do not."""
    out: list[RenderableType] = []
    for d in rep.delegated:
        line = Text(f"@{d.agent} only: ", theme.META)
        if d.tools:
            line.append(f"{d.tools} tool{'s' if d.tools != 1 else ''} ({format_tokens(d.tokens)} tokens)")
        if d.waiting:
            line.append(("; " if d.tools else "") + f"MCP {', '.join(d.waiting)} (starts when it runs)")
        line.append(" — in its own window, not this one", theme.META)
        out.append(line)
    return out
