"""``sessions show``: compactions, summaries, pruned outputs, errors, usage; and the JSON export."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rich.console import Console

from agentcli.store.ids import ascending
from agentcli.store.records import (
    AssistantMessage,
    CacheTokens,
    CompactionDiagnostics,
    CompactionPart,
    MessageError,
    ReasoningPart,
    SessionInfo,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    ToolState,
    ToolTime,
    UserMessage,
    WithParts,
)
from agentcli.ui.transcript import render_transcript, transcript_json

SID = "ses_transcript"
READ_OUTPUT = "<path>/proj/app.py</path>\n<type>file</type>\n<content>\n" + "\n".join(
    f"{i}: secret line {i}" for i in range(1, 41)
)
BASH_OUTPUT = "\n".join(f"test output {i}" for i in range(1, 31))


def _user(text: str = "", *, marker: CompactionPart | None = None, synthetic: bool = False) -> WithParts:
    mid = ascending("msg")
    parts: list[Any] = []
    if marker is not None:
        parts.append(marker.model_copy(update={"message_id": mid, "session_id": SID, "id": ascending("prt")}))
    if text:
        parts.append(
            TextPart(id=ascending("prt"), session_id=SID, message_id=mid, text=text, synthetic=synthetic)
        )
    return WithParts(info=UserMessage(id=mid, session_id=SID), parts=parts)


def _assistant(parent: WithParts, parts: list[Any], **info: Any) -> WithParts:
    mid = ascending("msg")
    for part in parts:
        part.message_id = mid
    return WithParts(
        info=AssistantMessage(id=mid, session_id=SID, parent_id=parent.id, model="openai/gpt-4o", **info),
        parts=parts,
    )


def _p(cls: type, **fields: Any) -> Any:
    return cls(id=ascending("prt"), session_id=SID, message_id="", **fields)


def _session(*, fallback: bool = False, kind: str = "auto") -> tuple[SessionInfo, list[WithParts]]:
    u1 = _user("Read app.py and run the tests")
    a1 = _assistant(
        u1,
        [
            _p(StepStartPart),
            _p(ReasoningPart, text="The file comes first."),
            _p(TextPart, text="Reading **app.py** now."),
            _p(
                ToolPart,
                call_id="c1",
                tool="read",
                state=ToolState(
                    status="completed",
                    input={"filePath": "/proj/app.py"},
                    output=READ_OUTPUT,
                    title="app.py",
                    time=ToolTime(start=1, end=2, compacted=3),
                ),
            ),
            _p(
                ToolPart,
                call_id="c2",
                tool="bash",
                state=ToolState(
                    status="completed",
                    input={"command": "pytest -q", "description": "run tests"},
                    output=BASH_OUTPUT,
                    metadata={"exit": 1},
                ),
            ),
            _p(
                ToolPart,
                call_id="c3",
                tool="edit",
                state=ToolState(
                    status="error",
                    input={"filePath": "/proj/app.py", "oldString": "foo", "newString": "bar"},
                    error="Could not find oldString in the file.",
                ),
            ),
            _p(
                StepFinishPart,
                reason="tool-calls",
                tokens=Tokens(input=12_000, output=300, cache=CacheTokens(read=8_000)),
                cost=0.0123,
            ),
        ],
    )
    marker = CompactionPart(
        id="x", session_id=SID, message_id="x", auto=kind != "manual", overflow=kind == "overflow"
    )
    u2 = _user(marker=marker)
    summary_text = "## Objective\nRefactor the parser.\n\n## Next Move\n1. Fix the edit"
    a2 = _assistant(
        u2,
        [_p(TextPart, text=summary_text, metadata={"fallback": True} if fallback else {})],
        summary=True,
        mode="compaction",
    )
    u3 = _user("Continue if you have next steps.", synthetic=True)
    a3 = _assistant(u3, [], error=MessageError(name="APIError", message="server exploded", status=500))
    info = SessionInfo(
        id=SID,
        title="Refactor the parser",
        directory="/proj",
        model="openai/gpt-4o",
        messages=6,
        tokens=Tokens(total=50_000),
        cost=0.1234,
        context_tokens=12_000,
        compactions=1,
    )
    return info, [u1, a1, u2, a2, u3, a3]


def _shown(info: SessionInfo, messages: list[WithParts], full: bool, *, tty: bool = False) -> str:
    console = Console(record=True, width=100, force_terminal=tty)
    render_transcript(console, info, messages, full)
    return "\n".join(line.rstrip() for line in console.export_text().splitlines())


@pytest.mark.parametrize("tty", [False, True])
def test_header_messages_and_usage(tty: bool) -> None:
    info, messages = _session()
    text = _shown(info, messages, full=False, tty=tty)
    for expected in (
        "Refactor the parser",
        "ses_transcript · /proj · openai/gpt-4o",
        "50k tokens",
        "$0.12",
        "1 compaction",
        "› You",
        "Read app.py and run the tests",
        "✻ The file comes first.",
        "Reading app.py now.",  # markdown rendered, not raw asterisks
        "● bash pytest -q → exit 1",
        "$ pytest -q",
        "✗ edit app.py: Could not find oldString in the file.",
        "12k in · 300 out · 8k cached · $0.01",
        "(synthetic) Continue if you have next steps.",
        "✗ APIError (HTTP 500): server exploded",
    ):
        assert expected in text, expected
    assert "**app.py**" not in text


def test_compaction_divider_then_the_summary_in_a_panel() -> None:
    info, messages = _session()
    lines = _shown(info, messages, full=False).splitlines()
    divider = next(i for i, line in enumerate(lines) if "compaction · auto" in line)
    assert lines[divider].startswith("═") and lines[divider].endswith("═")
    assert "made without a model" not in lines[divider]
    assert lines[divider + 1].startswith("╭─ summary")
    panel = "\n".join(lines[divider + 1 : divider + 10])
    assert "Objective" in panel and "Refactor the parser." in panel and "Fix the edit" in panel
    # The summary comes after the history it replaced, which is still all there.
    assert lines.index(next(line for line in lines if "● bash pytest -q" in line)) < divider


@pytest.mark.parametrize("kind", ["auto", "manual", "overflow"])
def test_compaction_kind_is_named(kind: str) -> None:
    info, messages = _session(kind=kind)
    assert f"compaction · {kind}" in _shown(info, messages, full=False)


def test_fallback_summary_says_it_was_made_without_a_model() -> None:
    info, messages = _session(fallback=True)
    divider = next(line for line in _shown(info, messages, full=False).splitlines() if "compaction ·" in line)
    assert "made without a model" in divider


def test_compaction_without_summary_yet_is_pending() -> None:
    info, messages = _session()
    text = _shown(info, messages[:3], full=False)
    assert "compaction · auto · pending" in text
    assert "╭─ summary" not in text


def test_pruned_output_is_marked_and_hidden_unless_full() -> None:
    info, messages = _session()
    brief = _shown(info, messages, full=False)
    assert "● read app.py (40 lines) [pruned]" in brief
    assert "[pruned] output of 43 lines hidden from the model" in brief
    assert "secret line 1" not in brief

    full = _shown(info, messages, full=True)
    assert "● read app.py (40 lines) [pruned]" in full
    assert "[pruned] hidden from the model since:" in full
    assert "secret line 1" in full and "secret line 40" in full


def test_long_outputs_are_trimmed_unless_full() -> None:
    info, messages = _session()
    brief = _shown(info, messages, full=False)
    assert "test output 20" in brief
    assert "test output 21" not in brief
    assert "… 10 more lines (--full shows all)" in brief
    full = _shown(info, messages, full=True)
    assert "test output 30" in full
    assert "more lines" not in full


def test_errors_are_red_on_a_terminal() -> None:
    info, messages = _session()
    console = Console(record=True, width=100, force_terminal=True, color_system="truecolor")
    render_transcript(console, info, messages, False)
    ansi = console.export_text(styles=True)
    red_runs = [line for line in ansi.splitlines() if "server exploded" in line]
    assert red_runs and "\x1b[1;31m" in red_runs[0]


def test_json_export_round_trips_every_record() -> None:
    info, messages = _session(fallback=True)
    data = json.loads(json.dumps(transcript_json(info, messages)))
    assert data["info"]["id"] == SID
    assert len(data["messages"]) == len(messages)
    restored = [WithParts.model_validate(m) for m in data["messages"]]
    assert restored == messages
    assert SessionInfo.model_validate(data["info"]) == info
    kinds = [p["type"] for m in data["messages"] for p in m["parts"]]
    assert "compaction" in kinds and "tool" in kinds and "step-finish" in kinds


def test_compaction_diagnostics_are_shown_under_the_divider() -> None:
    info, messages = _session()
    marker = messages[2].compaction()
    assert marker is not None
    marker.diagnostics = CompactionDiagnostics(
        tokens_before=19_200,
        tokens_after=4_100,
        request_tokens=15_000,
        attempts=2,
        fallback=True,
        fallback_reason="the summary failed (HTTP 400: bad request)",
        duration_ms=3_200,
    )
    text = _shown(info, messages, full=False)
    divider = next(line for line in text.splitlines() if "compaction ·" in line)
    assert "made without a model" in divider
    flat = " ".join(text.split())
    assert "context 19.2k → 4.1k tokens · summary request 15k tokens · 2 attempts · took 3.2s" in flat
    assert "fallback: the summary failed (HTTP 400: bad request)" in flat
