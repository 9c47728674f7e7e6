"""The context gauge: one line showing how full the model's context window is.

The bar is measured against the model's whole context window (as OpenCode's display is), with a
mark where automatic compaction fires (the usable budget), so the user sees both how full the
window is and how close the next compaction is.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Literal

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from agentcli.ui import theme
from agentcli.ui.fmt import format_cost, format_tokens

__all__ = [
    "Gauge",
    "GaugeData",
    "Level",
    "cached_percent",
    "format_tokens",
    "gauge_level",
    "gauge_text",
    "percent_used",
]

Level = Literal["ok", "warn", "high", "critical"]

_LEVEL_STYLE: dict[Level, str] = {
    "ok": theme.GAUGE_OK,
    "warn": theme.GAUGE_WARN,
    "high": theme.GAUGE_HIGH,
    "critical": theme.GAUGE_CRITICAL,
}
_EIGHTHS = " ▏▎▍▌▋▊▉"  # partial cells, so the bar moves before a whole cell fills
_FULL = "█"
_EMPTY = "░"
_MARK = "│"


@dataclass(frozen=True)
class GaugeData:
    used: int  # the context figure: the next request's tokens (agentcli.session.request.figure)
    context_limit: int  # the model's whole window; 0 = unknown
    usable: int  # where automatic compaction fires
    pruned_tokens: int = 0
    compacted: bool = False
    cost: float = 0.0
    model: str = ""
    cache_read: int = 0  # tokens of the last request served from the provider's prompt cache
    request_input: int = 0  # all input tokens of the last request (cached ones included)
    estimated: bool = False  # ``used`` is agentcli's estimate: the provider reported no usage


def cached_percent(cache_read: int, request_input: int) -> int:
    """Whole percent of the last request's input the provider served from its cache."""
    return cache_read * 100 // request_input if request_input > 0 else 0


def percent_used(used: int, context_limit: int) -> int:
    """Whole percent, rounded down, so the number shown and the colour always agree."""
    if context_limit <= 0:
        return 0
    return max(0, used) * 100 // context_limit


def gauge_level(used: int, context_limit: int) -> Level:
    """green below 70 %, yellow from 70 %, red from 85 %, critical above 92 %."""
    pct = percent_used(used, context_limit)
    if pct > 92:
        return "critical"
    if pct >= 85:
        return "high"
    if pct >= 70:
        return "warn"
    return "ok"


def _bar(used: int, limit: int, usable: int, width: int, style: str) -> Text:
    eighths = min(width * 8, max(0, used) * width * 8 // limit)
    full, part = divmod(eighths, 8)
    cells: list[tuple[str, str]] = [(_FULL, style)] * full
    if part and full < width:
        cells.append((_EIGHTHS[part], style))
    cells += [(_EMPTY, theme.GAUGE_EMPTY)] * (width - len(cells))
    if usable > 0:
        mark = min(width - 1, usable * width // limit)
        cells[mark] = (_MARK, theme.GAUGE_MARK)
    # One span per run of equal style, so a bar costs a few escape codes rather than one per cell.
    return Text.assemble(
        *(("".join(c for c, _ in run), style) for style, run in groupby(cells, key=itemgetter(1)))
    )


def gauge_text(data: GaugeData, bar_width: int = 20, *, legend: bool = True, model: bool = True) -> Text:
    """The whole gauge line, unclipped. ``legend``: say what the mark is; ``model``: name the model
    (``Gauge`` leaves these out, then clips with "…", when the console is too narrow)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append("context ", theme.META)
    about = "~" if data.estimated else ""
    if data.context_limit <= 0:
        line.append(f"{about}{format_tokens(data.used)} tokens")
        line.append(" · limit unknown", theme.META)
    else:
        level = gauge_level(data.used, data.context_limit)
        style = _LEVEL_STYLE[level]
        line.append_text(_bar(data.used, data.context_limit, data.usable, bar_width, style))
        line.append(f" {percent_used(data.used, data.context_limit)}%", style)
        if level == "critical":
            line.append(" critical", theme.GAUGE_CRITICAL)
        line.append(f" · {about}{format_tokens(data.used)} / {format_tokens(data.context_limit)} tokens")
    if data.estimated:
        line.append(" · estimated: no usage from the provider", theme.META)
    if data.pruned_tokens > 0:
        line.append(" · ", theme.META)
        line.append(f"pruned {format_tokens(data.pruned_tokens)}", theme.GAUGE_NOTE)
    if data.compacted:
        line.append(" · ", theme.META)
        line.append("compacted", theme.GAUGE_NOTE)
    if data.cache_read > 0 and data.request_input > 0:
        line.append(f" · {cached_percent(data.cache_read, data.request_input)}% cached", theme.META)
    # Like OpenCode's prompt line: the cost only once there is one (local models cost nothing).
    if data.cost > 0:
        line.append(f" · {format_cost(data.cost)}")
    if legend and data.context_limit > 0 and data.usable > 0:
        line.append(f" · {_MARK} auto-compact at {format_tokens(data.usable)}", theme.META)
    if model and data.model:
        line.append(f" · {data.model}", theme.META)
    return line


class Gauge:
    """A one-line renderable; print it after every step. Clipped with "…" to the console width."""

    def __init__(self, data: GaugeData, bar_width: int = 20) -> None:
        self.data = data
        self.bar_width = bar_width

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        for legend, model in ((True, True), (False, True), (False, False)):
            text = gauge_text(self.data, self.bar_width, legend=legend, model=model)
            if text.cell_len <= width:
                break
        text.truncate(width, overflow="ellipsis")
        yield text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        width = min(options.max_width, gauge_text(self.data, self.bar_width).cell_len)
        return Measurement(width, width)
