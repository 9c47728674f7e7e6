"""``sessions list`` and ``models`` tables, and the relative times they show."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime

import pytest
from rich.console import Console

from agentcli.store.records import SessionInfo, Tokens
from agentcli.ui.fmt import relative_time
from agentcli.ui.tables import ModelRow, models_table, sessions_table

NOW = 1_800_000_000_000
LONG_ID = "ses_01JABCDEFGHJKMNPQRSTVWXYZ"


def _rows() -> list[SessionInfo]:
    return [
        SessionInfo(
            id=LONG_ID,
            title="Fix the flaky scheduler test that fails only on Tuesdays",
            updated=NOW - 3 * 60_000,
            messages=12,
            tokens=Tokens(total=123_456),
            cost=0.42,
            context_tokens=45_000,
            compactions=2,
        ),
        SessionInfo(id="ses_02", title="", updated=NOW - 30 * 86_400_000, messages=0),
    ]


def _shown(renderable: object, width: int) -> list[str]:
    console = Console(record=True, width=width, force_terminal=False)
    console.print(renderable)
    return [line.rstrip() for line in console.export_text().splitlines() if line.strip()]


def test_sessions_table_has_every_column_when_wide() -> None:
    lines = _shown(sessions_table(_rows(), now_ms=NOW), 160)
    assert lines[0].split() == ["ID", "Title", "Updated", "Msgs", "Tokens", "Cost", "Context", "Compactions"]
    first = lines[2]
    for cell in (LONG_ID, "Fix the flaky scheduler test that fails only on Tuesdays", "3m ago", "12"):
        assert cell in first
    assert first.split()[-5:] == ["12", "123.5k", "$0.42", "45k", "2"]
    old = lines[3]
    assert "(untitled)" in old
    assert datetime.fromtimestamp((NOW - 30 * 86_400_000) / 1000).strftime("%Y-%m-%d") in old


@pytest.mark.parametrize(
    ("width", "headers"),
    [
        (100, ["ID", "Title", "Updated", "Msgs", "Tokens", "Cost", "Context"]),
        (80, ["ID", "Title", "Updated", "Tokens", "Cost"]),
        (60, ["ID", "Title", "Updated"]),
    ],
)
def test_narrow_consoles_clip_the_title_never_the_id(width: int, headers: list[str]) -> None:
    lines = _shown(sessions_table(_rows(), now_ms=NOW), width)
    assert all(len(line) <= width for line in lines)
    assert lines[0].split() == headers  # the least useful figures are left out first
    row = next(line for line in lines if line.startswith(LONG_ID + " "))
    assert "…" in row  # the long title gave way
    assert "3m ago" in row


def test_empty_sessions_table_still_renders_headers() -> None:
    lines = _shown(sessions_table([], now_ms=NOW), 100)
    assert lines[0].split()[:3] == ["ID", "Title", "Updated"]


@pytest.mark.parametrize(
    ("ago_ms", "expected"),
    [
        (1_000, "just now"),
        (45_000, "45s ago"),
        (3 * 60_000, "3m ago"),
        (2 * 3_600_000, "2h ago"),
        (3 * 86_400_000, "3d ago"),
    ],
)
def test_relative_time(ago_ms: int, expected: str) -> None:
    assert relative_time(NOW - ago_ms, NOW) == expected


def test_models_table_accepts_rows_tuples_and_mappings() -> None:
    class Limits:  # the shape of llm.limits.ModelLimits
        context, input, output = 200_000, 0, 64_000

    rows = [
        ModelRow("gpt-4o", "openai", 128_000, 128_000, 16_384),
        ("anthropic/claude-sonnet-4", Limits(), "anthropic"),
        {"name": "mystery", "provider": "local"},
    ]
    lines = _shown(models_table(rows), 100)
    assert lines[0].split() == ["Model", "Provider", "Context", "Input", "Output"]
    assert lines[2].split() == ["gpt-4o", "openai", "128k", "128k", "16.4k"]
    assert lines[3].split() == ["anthropic/claude-sonnet-4", "anthropic", "200k", "?", "64k"]
    assert lines[4].split() == ["mystery", "local", "?", "?", "?"]


def test_ui_imports_stay_cheap() -> None:
    code = (
        "import sys, agentcli.ui.markdown_stream, agentcli.ui.tool_line, agentcli.ui.gauge, "
        "agentcli.ui.tables, agentcli.ui.transcript\n"
        "heavy = [m for m in ('litellm', 'sqlmodel', 'sqlalchemy', 'agentcli.session') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
