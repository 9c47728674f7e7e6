"""Tables for ``agentcli sessions list`` and ``agentcli models``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from agentcli.store.records import SessionInfo
from agentcli.ui import theme
from agentcli.ui.fmt import format_cost, format_tokens, relative_time

_SESSION_HEADERS = ("ID", "Title", "Updated", "Msgs", "Tokens", "Cost", "Context", "Compactions")
# Dropped in this order when the console is too narrow for every column.
_OPTIONAL = ("Compactions", "Context", "Msgs", "Tokens")
_TITLE_MIN = 12
_GAP = 3  # cell padding on both sides plus the box's blank divider


class SessionsTable:
    """Built at render time so it can fit the console: the title shrinks first (clipped with "…"),
    then the least useful figures are left out. The id, which users copy into other commands, and
    the rest are never clipped."""

    def __init__(
        self, rows: list[SessionInfo], now_ms: int | None = None, depths: Mapping[str, int] | None = None
    ) -> None:
        self.rows = rows
        depth = depths or {}
        self.cells = [
            {
                "ID": s.id,
                # A task's session sits under the session that started it.
                "Title": _nested(depth.get(s.id, 0)) + (s.title or "(untitled)"),
                "Updated": relative_time(s.updated, now_ms),
                "Msgs": str(s.messages),
                "Tokens": format_tokens(s.tokens.count()),
                "Cost": format_cost(s.cost) if s.cost else "–",
                "Context": format_tokens(s.context_tokens) if s.context_tokens else "–",
                "Compactions": str(s.compactions) if s.compactions else "–",
            }
            for s in rows
        ]

    def _width(self, header: str) -> int:
        return max([len(header), *(len(row[header]) for row in self.cells)])

    def columns_for(self, max_width: int) -> list[str]:
        headers = list(_SESSION_HEADERS)
        for dropped in (None, *_OPTIONAL):
            if dropped:
                headers.remove(dropped)
            fixed = sum(self._width(h) for h in headers if h != "Title")
            if fixed + _TITLE_MIN + _GAP * (len(headers) - 1) <= max_width:
                break
        return headers

    def table(self, max_width: int) -> Table:
        headers = self.columns_for(max_width)
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", show_edge=False, pad_edge=False)
        for header in headers:
            if header == "Title":
                # Only wrappable columns shrink in rich; the cell text itself refuses to wrap.
                table.add_column(header, min_width=_TITLE_MIN)
            else:
                right = header not in ("ID", "Updated")
                table.add_column(
                    header,
                    width=self._width(header),
                    no_wrap=True,
                    justify="right" if right else "left",
                    style=theme.META if header == "ID" else None,
                )
        for row in self.cells:
            table.add_row(
                *(
                    Text(row[h], no_wrap=True, overflow="ellipsis") if h == "Title" else row[h]
                    for h in headers
                )
            )
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)

    def lines(self, max_width: int) -> list[str]:
        """The same columns as plain text lines: fast for long lists (a rich Table of 1,000 rows
        takes about a second to lay out; these take milliseconds) and clean in pipes."""
        headers = self.columns_for(max_width)
        widths = {h: self._width(h) for h in headers}
        if "Title" in widths:
            fixed = sum(w for h, w in widths.items() if h != "Title") + 2 * (len(headers) - 1)
            widths["Title"] = max(_TITLE_MIN, min(widths["Title"], max_width - fixed))

        def cell(header: str, value: str) -> str:
            width = widths[header]
            if len(value) > width:
                value = value[: width - 1] + "…"
            return value.ljust(width) if header in ("ID", "Title", "Updated") else value.rjust(width)

        out = ["  ".join(cell(h, h) for h in headers).rstrip()]
        out.append("  ".join("─" * widths[h] for h in headers))
        out.extend("  ".join(cell(h, row[h]) for h in headers).rstrip() for row in self.cells)
        return out


def _nested(depth: int) -> str:
    return "   " * (depth - 1) + "└─ " if depth > 0 else ""


def sessions_table(
    rows: Iterable[SessionInfo], *, now_ms: int | None = None, depths: Mapping[str, int] | None = None
) -> SessionsTable:
    """For ``agentcli sessions list``: one row per session, in the order given; ``depths``: how deep
    a task's session is under its parent (1: a task of a listed session)."""
    return SessionsTable(list(rows), now_ms, depths)


@dataclass(frozen=True)
class ModelRow:
    """One model for ``agentcli models``; token limits of 0 mean unknown."""

    name: str
    provider: str = ""
    context: int = 0
    input: int = 0
    output: int = 0


def _model_row(row: ModelRow | Mapping[str, Any] | tuple[Any, ...]) -> ModelRow:
    """Accepts a ModelRow, a mapping with its fields, or ``llm.limits.list_models``'s
    ``(name, ModelLimits, provider)`` tuples."""
    if isinstance(row, ModelRow):
        return row
    if isinstance(row, Mapping):
        return ModelRow(**{k: row[k] for k in ("name", "provider", "context", "input", "output") if k in row})
    name, limits, provider = row
    return ModelRow(
        name=str(name),
        provider=str(provider or ""),
        context=int(getattr(limits, "context", 0) or 0),
        input=int(getattr(limits, "input", 0) or 0),
        output=int(getattr(limits, "output", 0) or 0),
    )


def models_table(rows: Iterable[ModelRow | Mapping[str, Any] | tuple[Any, ...]]) -> ModelsTable:
    return ModelsTable([_model_row(raw) for raw in rows])


class ModelsTable:
    """``agentcli models``: at any width the limit columns keep their figures, aligned; what gives way
    is the model's name (then the provider's), cut with "…"."""

    _OVERHEAD = 14  # the box's edges and dividers and the cells' padding, for five columns
    _PROVIDER_MIN = 12
    _NAME_MIN = 12

    def __init__(self, rows: list[ModelRow]) -> None:
        self.rows = rows
        self.figures = [
            [format_tokens(n) if n else "?" for n in (m.context, m.input, m.output)] for m in rows
        ]

    def table(self, width: int) -> Table:
        figure_widths = [
            max([len(header), *(len(f[i]) for f in self.figures)])
            for i, header in enumerate(("Context", "Input", "Output"))
        ]
        name = max([len("Model"), *(cell_len(m.name) for m in self.rows)])
        provider = max([len("Provider"), *(cell_len(m.provider) for m in self.rows)])
        spare = width - self._OVERHEAD - sum(figure_widths)
        provider = min(provider, max(self._PROVIDER_MIN, spare - name))  # the name first
        name = max(min(name, spare - provider), self._NAME_MIN)
        table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
        table.add_column("Model", no_wrap=True, overflow="ellipsis", width=name)
        table.add_column("Provider", style=theme.META, no_wrap=True, overflow="ellipsis", width=provider)
        for header, figure in zip(("Context", "Input", "Output"), figure_widths, strict=True):
            table.add_column(header, justify="right", no_wrap=True, width=figure)
        for m, figures in zip(self.rows, self.figures, strict=True):
            table.add_row(m.name, m.provider, *figures)
        return table

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.table(options.max_width)
