"""The context block: one line of figures, and advice from the yellow band up."""

from __future__ import annotations

from typing import Literal

from agentcli.plugins.api import ContextFigures

Band = Literal["green", "yellow", "red", "critical"]

MARKERS: dict[Band, str] = {
    "green": "\U0001f7e2",
    "yellow": "\U0001f7e1",
    "red": "\U0001f7e0",
    "critical": "\U0001f534",
}
ADVICE: dict[Band, str] = {
    "green": "",
    "yellow": "Context use is getting high: consider memory_compact when you reach a convenient point.",
    "red": "Context is running low: use memory_compact at the next natural break in the work.",
    "critical": "Context is nearly full: use memory_compact now if you can.",
}
STATUS: dict[Band, str] = {
    "green": "GREEN (healthy)",
    "yellow": "YELLOW (consider compacting)",
    "red": "RED (compact soon)",
    "critical": "CRITICAL (compaction imminent)",
}


def band(percent: int) -> Band:
    """Bands on the rounded percentage: < 70 green, 70–84 yellow, 85–91 red, ≥ 92 critical."""
    if percent >= 92:
        return "critical"
    if percent >= 85:
        return "red"
    if percent >= 70:
        return "yellow"
    return "green"


def render(figures: ContextFigures) -> str:
    if not figures.context_limit:
        return f"Context: {figures.tokens:,} tokens used (limit unknown, {figures.model})"
    b = band(figures.percent)
    line = (
        f"{MARKERS[b]} Context: {figures.percent}% used "
        f"({figures.tokens:,} / {figures.context_limit:,} tokens, {figures.model})"
    )
    return f"{line}\n{ADVICE[b]}" if ADVICE[b] else line
