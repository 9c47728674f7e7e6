"""An 80-column terminal (and a 60-column one): one-line messages wrap between words with a hanging
indent, /help and /agent descriptions wrap under their own column, `agentcli models` keeps its limit
columns. Tested by class — every notice the turn renderer has, every /help row — and in a real pty."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pexpect
import pytest
from rich.console import Console

from agentcli.cli import render
from agentcli.cli.slash import HELP
from agentcli.session import events
from agentcli.ui.wrap import help_renderable, wrap_plain
from tests import zygote
from tests.fakellm import ErrorResponse, FakeLLM
from tests.terminal import Screen, leave, say, spawn, words_split
from tests.workspace import Workspace, agentcli_argv

WIDTHS = (80, 60)
SID = "ses_1a2b3c4d5e6f7g8h9i0jklmnop"
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# One of each event the turn renderer tells in words, with messages as long as real ones get.
NOTICES: dict[type, Any] = {
    events.PermissionRefused: events.PermissionRefused(
        SID,
        "bash",
        'bash `rm -rf build/` is denied by the rule "rm *": deny in /home/user/project/opencode.json;'
        " allow it there with permission.bash, or answer the question in the chat",
    ),
    events.Retrying: events.Retrying(
        SID,
        2,
        4.5,
        "provider unavailable: cannot connect to 127.0.0.1:8080: connection refused (is the server running?)",
    ),
    events.ErrorOccurred: events.ErrorOccurred(
        SID,
        "unknown model 'acme/turbo-coder': litellm cannot tell which provider serves it; use a litellm model"
        " string such as openai/gpt-4o or anthropic/claude-sonnet-4-20250514, or provider/model from"
        " opencode.json",
    ),
    events.WindowLearned: events.WindowLearned(
        SID,
        32_768,
        "openai/qwen2.5-coder-32b-instruct: the context window is 32,768 tokens (the server's overflow"
        " error); kept for this model",
    ),
    events.Pruned: events.Pruned(SID, 34_800, 6),
    events.CompactionStarted: events.CompactionStarted(SID, auto=True, overflow=False),
    events.CompactionFinished: events.CompactionFinished(
        SID,
        auto=True,
        overflow=True,
        tokens_before=121_600,
        tokens_after=819,
        cost=0.0123,
        summary="",
        fallback=True,
    ),
    events.CompactionFailed: events.CompactionFailed(
        SID,
        "the summary request failed (provider unavailable: the server closed the connection); the"
        " session goes on uncompacted and the next step tries again",
    ),
    events.CompactionSkipped: events.CompactionSkipped(
        SID, f"already compacted: another agent compacted session {SID} just now"
    ),
    events.StepLimitReached: events.StepLimitReached(SID, 50),
    events.InterruptedClosed: events.InterruptedClosed(SID, messages=2, tool_calls=3),
}
# Events shown otherwise: streamed text (the markdown renderer's), tool lines (clipped to one line).
NOT_NOTICES = {
    events.StepStarted,
    events.TextDelta,
    events.TextEnded,
    events.ToolUpdated,
    events.SubagentToolUpdated,
    events.TurnFinished,
}


def _terminal_lines(out: str, width: int) -> list[str]:
    """What a terminal ``width`` wide shows for ``out``: any line longer is folded where it hits the
    edge, as a terminal does (inside a word, if that is where the edge falls)."""
    lines: list[str] = []
    for line in out.split("\n"):
        lines += [line[i : i + width] for i in range(0, max(len(line), 1), width)]
    return lines


def _shown(event: Any, width: int, *, soft_wrap: bool) -> tuple[list[str], str]:
    """The event as a terminal ``width`` wide shows it, and as a very wide one does (one line)."""

    def rendered(w: int) -> str:
        out = io.StringIO()
        err = Console(file=out, width=w, force_terminal=True, color_system=None, soft_wrap=soft_wrap)
        renderer = render.TurnRenderer(err, err, cwd=Path("/project"))
        renderer(event)
        return out.getvalue()

    return _terminal_lines(rendered(width), width), rendered(1000)


def test_every_notice_the_renderer_has_is_sampled() -> None:
    assert set(render._HANDLERS) == set(NOTICES) | NOT_NOTICES


@pytest.mark.parametrize("soft_wrap", [True, False], ids=["soft-wrap", "rich-wrap"])
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", list(NOTICES), ids=lambda k: k.__name__)
def test_a_notice_wraps_between_words_with_a_hanging_indent(kind: type, width: int, soft_wrap: bool) -> None:
    lines, whole = _shown(NOTICES[kind], width, soft_wrap=soft_wrap)
    shown = [line for line in lines if line.strip()]
    assert not words_split(shown, whole), "\n".join(shown)
    assert all(len(line) <= width for line in shown)
    assert all(line.startswith("  ") for line in shown[1:]), "\n".join(shown)


def _help_lines(width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=True, color_system=None).print(help_renderable(HELP))
    return [line.rstrip() for line in out.getvalue().splitlines()]


_ROW = re.compile(r"^  (\S.*?)\s{2,}(\S.*)$")


@pytest.mark.parametrize("width", WIDTHS)
def test_help_descriptions_wrap_under_their_column(width: int) -> None:
    lines = _help_lines(width)
    assert not words_split(lines, HELP), "\n".join(lines)
    assert all(len(line) <= width for line in lines)
    rows = [n for n, line in enumerate(lines) if line.startswith("  /") or line.startswith("  !")]
    rows += [n for n, line in enumerate(lines) if line.startswith("  @")]
    column = lines[rows[0]].index("this help")
    wrapped = 0
    for n in sorted(rows):
        assert lines[n][column - 1] == " " and lines[n][column] != " ", lines[n]
        following = n + 1
        while following < len(lines) and following not in rows and lines[following].startswith(" " * column):
            assert lines[following][column] != " "  # continued under the description, not the names
            wrapped += 1
            following += 1
    assert wrapped > 0  # the test saw descriptions wrap
    for label in ("Keys:", "Permission questions:"):
        at = next(n for n, line in enumerate(lines) if line.startswith(label))
        assert lines[at + 1].startswith(" " * (len(label) + 1)), "\n".join(lines[at : at + 2])


@pytest.mark.parametrize("width", WIDTHS)
def test_plain_error_lines_wrap_between_words(width: int) -> None:
    message = NOTICES[events.ErrorOccurred].message
    lines = wrap_plain(f"agentcli: error: {message}", width).split("\n")
    assert len(lines) > 1 and all(len(line) <= width for line in lines)
    assert not words_split(lines, message)
    assert all(line.startswith("  ") for line in lines[1:])


_FIGURE = re.compile(r"^(\d+(\.\d)?[kMB]?|\?)$")


@pytest.mark.parametrize("width", WIDTHS)
def test_models_keeps_its_limit_columns_at_narrow_widths(width: int, workspace: Workspace) -> None:
    proc = zygote.run(
        [*agentcli_argv(), "models", "claude"],
        cwd=workspace.project,
        env={**workspace.env, "COLUMNS": str(width)},
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line.rstrip() for line in proc.stdout.splitlines() if line.strip()]
    header, rows = lines[0], [line for line in lines[2:] if line.strip()]
    assert header.split()[-3:] == ["Context", "Input", "Output"], header
    assert len(rows) > 20
    assert all(len(line) <= width for line in lines)
    ends = {len(line) for line in rows}
    assert ends == {len(header)}, "the Output column's figures end at one column"
    for row in rows:
        assert all(_FIGURE.match(cell) for cell in row.split()[-3:]), row
    assert any("…" in row for row in rows)  # long names gave way, not the figures


# -- in a real terminal, 80 columns ------------------------------------------------------------

SIZE = (200, 80)  # tall enough that nothing scrolls off the screen
LONG_AGENT = (
    "Reviews a change the way a careful maintainer would: reads the diff, runs the tests that cover it,"
    " and says what breaks, what is missing and what could be simpler."
)


def test_the_chat_at_80_columns_wraps_between_words(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(
        {"agent": {"reviewer": {"description": LONG_AGENT, "mode": "subagent", "prompt": "Review."}}}
    )
    fake_llm.push(
        ErrorResponse(
            400,
            {
                "error": {
                    "message": "The request was rejected because the tool schema 'apply_patch' uses a"
                    " keyword this server does not support.",
                    "type": "invalid_request_error",
                }
            },
        )
    )
    child = spawn(workspace, "chat", size=SIZE, prompt=False)
    screen = Screen(child, SIZE)
    child.expect("›")
    say(child, "/help", "Permission questions")
    say(child, "/agent", "@reviewer")
    say(child, "/model acme/turbo-coder-with-a-long-name", "still")
    say(child, "please fix the tests", "error")
    assert leave(child) == 0
    text = str(screen)
    for phrase in (
        "this directory's recent sessions; type a number to switch to one",
        "undo the last compaction: the full history comes back (if it fits)",
        LONG_AGENT,
        "keyword this server does not support.",
        "/help for commands, Tab switches agent",
    ):
        assert screen.shows(phrase), f"{phrase!r} not whole on screen:\n{text}"
    lines = screen.lines
    at = next(n for n, line in enumerate(lines) if line.startswith("  @reviewer"))
    column = lines[at].index("Reviews")
    assert lines[at + 1].startswith(" " * column) and lines[at + 1][column] != " ", text
    assert all(len(line) <= SIZE[1] for line in lines)


def test_a_command_line_error_at_80_columns_wraps_between_words(workspace: Workspace) -> None:
    child = spawn(workspace, "run", "-m", "acme/turbo-coder", "hi", size=SIZE, prompt=False)
    screen = Screen(child, SIZE)
    child.expect("error")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert screen.shows("litellm cannot tell which provider serves it"), str(screen)
    assert screen.shows("anthropic/claude-sonnet-4-20250514, or provider/model from opencode.json"), str(
        screen
    )
    error = [line for line in screen.lines if line]
    assert len(error) > 1 and all(line.startswith("  ") for line in error[1:]), str(screen)
