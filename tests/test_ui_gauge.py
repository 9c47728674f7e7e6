"""The context gauge: colour bands, the auto-compaction mark, notes, unknown limits, narrow consoles."""

from __future__ import annotations

import pytest
from rich.console import Console
from rich.segment import Segment
from rich.style import Style

from agentcli.ui.gauge import Gauge, GaugeData, format_tokens, gauge_text

PREFIX = len("context ")


def _console(width: int = 100) -> Console:
    return Console(record=True, width=width, force_terminal=True, color_system="truecolor")


def _segments(data: GaugeData, width: int = 100) -> list[Segment]:
    console = _console(width)
    return [s for s in console.render(Gauge(data)) if s.text and s.text != "\n"]


def _style_of(data: GaugeData, needle: str) -> Style:
    seg = next(s for s in _segments(data) if needle in s.text)
    assert seg.style is not None
    return seg.style


@pytest.mark.parametrize(
    ("used", "colour", "critical"),
    [
        (138_000, "green", False),  # 69 %
        (140_000, "yellow", False),  # 70 %
        (170_000, "red", False),  # 85 %
        (184_000, "red", False),  # 92 %
        (186_000, "red", True),  # 93 %: bold red, and says so
    ],
)
def test_colour_bands(used: int, colour: str, critical: bool) -> None:
    data = GaugeData(used=used, context_limit=200_000, usable=180_000)
    pct = f" {used * 100 // 200_000}%"
    style = _style_of(data, pct)
    assert style.color is not None and style.color.name == colour
    assert bool(style.bold) is critical
    console = _console()
    console.print(Gauge(data))
    text = console.export_text()
    assert pct.strip() in text
    assert ("critical" in text) is critical
    assert f"{format_tokens(used)} / 200k tokens" in text


def test_colour_follows_the_percent_shown_not_rounding_up() -> None:
    # 69.99 % is shown as 69 % and coloured as such: the number and the colour never disagree.
    data = GaugeData(used=139_990, context_limit=200_000, usable=180_000)
    assert " 69%" in gauge_text(data).plain
    assert _style_of(data, " 69%").color.name == "green"  # type: ignore[union-attr]


@pytest.mark.parametrize(("usable", "cell"), [(150_000, 15), (50_000, 5), (199_999, 19), (200_000, 19)])
def test_usable_mark_sits_where_compaction_fires(usable: int, cell: int) -> None:
    data = GaugeData(used=100_000, context_limit=200_000, usable=usable)
    plain = gauge_text(data, bar_width=20).plain
    bar = plain[PREFIX : PREFIX + 20]
    assert bar.index("│") == cell
    assert bar.count("│") == 1
    # Half full: the first ten cells are filled whatever the mark's place.
    assert bar[:10].replace("│", "█") == "█" * 10


def test_mark_stays_visible_when_usage_passes_it() -> None:
    data = GaugeData(used=195_000, context_limit=200_000, usable=160_000)
    bar = gauge_text(data, bar_width=20).plain[PREFIX : PREFIX + 20]
    assert bar[16] == "│"
    assert set(bar) - {"│"} <= {"█", "▌", "▍", "▎", "▏", "▋", "▊", "▉"}


def test_over_the_limit_still_one_full_bar() -> None:
    data = GaugeData(used=250_000, context_limit=200_000, usable=180_000)
    plain = gauge_text(data, bar_width=20).plain
    assert "125%" in plain and "critical" in plain
    assert len(plain[PREFIX:].split(" ")[0]) == 20


def test_unknown_limit_shows_just_the_tokens() -> None:
    console = _console()
    console.print(Gauge(GaugeData(used=12_345, context_limit=0, usable=0, cost=0.5)))
    text = console.export_text()
    assert "12.3k tokens" in text
    assert "limit unknown" in text
    assert "%" not in text and "█" not in text and "│" not in text
    assert "$0.50" in text


def test_notes_cost_and_model() -> None:
    data = GaugeData(
        used=50_000,
        context_limit=200_000,
        usable=180_000,
        pruned_tokens=23_400,
        compacted=True,
        cost=0.4213,
        model="gpt-4o",
    )
    console = _console()
    console.print(Gauge(data))
    text = console.export_text()
    for expected in ("pruned 23.4k", "compacted", "$0.42", "gpt-4o", "25%", "50k / 200k tokens"):
        assert expected in text


def test_no_notes_when_nothing_happened() -> None:
    text = gauge_text(GaugeData(used=1_000, context_limit=8_000, usable=6_000)).plain
    assert "pruned" not in text and "compacted" not in text and "$" not in text


def test_narrow_console_keeps_one_line() -> None:
    data = GaugeData(
        used=150_000, context_limit=200_000, usable=180_000, pruned_tokens=9_000, model="anthropic/claude-x"
    )
    console = _console(width=48)
    console.print(Gauge(data))
    lines = console.export_text().splitlines()
    assert len(lines) == 1
    assert len(lines[0]) <= 48
    assert lines[0].startswith("context ")
    assert "75%" in lines[0]


def test_medium_console_drops_the_legend_before_clipping() -> None:
    data = GaugeData(used=150_000, context_limit=200_000, usable=180_000, model="gpt-4o")
    full = gauge_text(data).plain
    assert "auto-compact at 180k" in full
    console = _console(width=len(full) - 5)
    console.print(Gauge(data))
    line = console.export_text().rstrip("\n")
    assert "auto-compact" not in line
    assert line.endswith("gpt-4o")


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0"),
        (999, "999"),
        (1000, "1k"),
        (1234, "1.2k"),
        (23_400, "23.4k"),
        (999_949, "999.9k"),
        (999_950, "1M"),
        (1_234_567, "1.2M"),
        (2_000_000, "2M"),
        (-1500, "-1.5k"),
    ],
)
def test_format_tokens(n: int, expected: str) -> None:
    assert format_tokens(n) == expected


def test_an_estimated_figure_says_so() -> None:
    """The provider reported no usage: the figure is agentcli's estimate, and the gauge says it is."""
    text = gauge_text(GaugeData(used=12_300, context_limit=100_000, usable=80_000, estimated=True)).plain
    assert "~12.3k / 100k tokens" in text and "estimated: no usage from the provider" in text
    unknown = gauge_text(GaugeData(used=12_300, context_limit=0, usable=0, estimated=True)).plain
    assert "~12.3k tokens" in unknown
    assert "estimated" not in gauge_text(GaugeData(used=12_300, context_limit=100_000, usable=80_000)).plain
