"""Small number, time and text formatters shared by the gauge, tables, tool lines and transcript."""

from __future__ import annotations

import time
from datetime import datetime


def format_tokens(n: int) -> str:
    """Token counts as people read them: 999 → "999", 1234 → "1.2k", 1_234_567 → "1.2M"."""
    sign = "-" if n < 0 else ""
    n = abs(int(n))
    if n < 1000:
        return f"{sign}{n}"
    # 999_950 would print as "1000.0k": switch unit where the rounding would overflow it.
    if n < 999_950:
        return f"{sign}{_one_decimal(n / 1000)}k"
    if n < 999_950_000:
        return f"{sign}{_one_decimal(n / 1_000_000)}M"
    return f"{sign}{_one_decimal(n / 1_000_000_000)}B"


def _one_decimal(x: float) -> str:
    s = f"{x:.1f}"
    return s[:-2] if s.endswith(".0") else s


def format_cost(cost: float) -> str:
    """Dollars: cents for normal amounts, more digits for the fractions of a cent cheap models cost."""
    if cost <= 0:
        return "$0.00"
    if cost < 0.01:
        return f"${cost:.4f}"
    return f"${cost:.2f}"


def relative_time(ms: int, now_ms: int | None = None) -> str:
    """ "just now", "45s ago", "3m ago", "2h ago", "3d ago"; the date once it is over a week old."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    seconds = (now - ms) // 1000
    if seconds < 5:
        return "just now"
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86_400:
        return f"{seconds // 3600}h ago"
    if seconds < 7 * 86_400:
        return f"{seconds // 86_400}d ago"
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d")


def format_duration(ms: int) -> str:
    """120 → "120ms", 4300 → "4.3s", 125_000 → "2m05s"."""
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    minutes, seconds = divmod(ms // 1000, 60)
    return f"{minutes}m{seconds:02d}s"


def first_line(text: str) -> str:
    """The first non-blank line, stripped: what fits on a one-line summary."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")
