"""The turn renderer: what goes to stdout (the answer) and stderr (tools, progress, notices)."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from agentcli.cli.render import TurnRenderer
from agentcli.session import events
from agentcli.store.records import AssistantMessage, ToolPart, ToolState

SID = "ses_x"


def _renderer(terminal: bool) -> tuple[TurnRenderer, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    renderer = TurnRenderer(
        Console(file=out, force_terminal=terminal, width=100),
        Console(file=err, force_terminal=terminal, width=100),
        cwd=Path("/tmp"),
    )
    return renderer, out, err


def _step(summary: bool = False) -> events.StepStarted:
    return events.StepStarted(
        SID, AssistantMessage(id="msg_1", session_id=SID, parent_id="msg_0", summary=summary)
    )


def _tool(status: str) -> ToolPart:
    return ToolPart(
        id="prt_t",
        session_id=SID,
        message_id="msg_1",
        call_id="c1",
        tool="bash",
        state=ToolState(
            status=status, input={"command": "make test"}, output="ok", metadata={"exit": 0, "output": "ok"}
        ),
    )


def test_spinner_runs_while_waiting_and_while_a_tool_runs_then_leaves_one_line() -> None:
    renderer, _out, err = _renderer(terminal=True)
    renderer(_step())
    assert renderer._spinner is not None  # waiting for the model
    renderer(events.ToolUpdated(SID, _tool("pending")))
    renderer(events.ToolUpdated(SID, _tool("running")))
    assert renderer._spinner is not None and renderer._spin_key == "prt_t"
    renderer(events.ToolUpdated(SID, _tool("completed")))
    assert renderer._spinner is None
    assert "● \x1b[0m\x1b[1mbash\x1b[0m make test" in err.getvalue()  # the final line, after the spinner
    renderer(events.TurnFinished(SID, None))
    assert renderer._spinner is None


def test_a_tool_spinner_held_for_a_question_comes_back_once_it_is_answered() -> None:
    renderer, _out, err = _renderer(terminal=True)
    renderer(_step())
    renderer(events.ToolUpdated(SID, _tool("running")))
    resume = renderer.hold()  # the permission question is asked: nothing live over it
    assert renderer._spinner is None
    resume()  # answered: the tool runs on, and its spinner with it
    assert renderer._spinner is not None and renderer._spin_key == "prt_t"
    renderer(events.ToolUpdated(SID, _tool("completed")))
    assert renderer._spinner is None and "make test" in err.getvalue()


def test_no_spinner_when_not_a_terminal() -> None:
    renderer, _out, err = _renderer(terminal=False)
    renderer(_step())
    renderer(events.ToolUpdated(SID, _tool("running")))
    assert renderer._spinner is None
    renderer(events.ToolUpdated(SID, _tool("completed")))
    assert err.getvalue().count("make test") == 1


def test_a_summary_streams_to_stderr_and_the_answer_to_stdout() -> None:
    renderer, out, err = _renderer(terminal=False)
    renderer(_step(summary=True))
    renderer(events.TextDelta(SID, "prt_s", "## Objective\n- the summary"))
    renderer(events.TextEnded(SID, "prt_s", "## Objective\n- the summary"))
    renderer(
        events.CompactionFinished(
            SID, auto=True, overflow=False, tokens_before=50_000, tokens_after=900, cost=0.01, summary="…"
        )
    )
    renderer(_step())
    renderer(events.TextDelta(SID, "prt_a", "the answer"))
    renderer(events.TextEnded(SID, "prt_a", "the answer"))
    renderer(events.TurnFinished(SID, None))
    assert "the summary" in err.getvalue() and "the summary" not in out.getvalue()
    assert "the answer" in out.getvalue() and "50k → 900" in err.getvalue()
    assert renderer.notes.compacted and renderer.notes.text == "the answer"


def test_spinner_from_enter_continues_into_the_step_and_stops_at_the_first_text() -> None:
    renderer, out, _err = _renderer(terminal=True)
    renderer.waiting()  # Enter pressed; the loop may still be building (litellm importing)
    spinner = renderer._spinner
    assert spinner is not None
    renderer(_step())
    assert renderer._spinner is spinner  # one spinner from Enter to the answer, not a flicker
    renderer(events.TextDelta(SID, "prt_1", "Hello"))
    assert renderer._spinner is None
    renderer(events.TextEnded(SID, "prt_1", "Hello"))
    assert "Hello" in out.getvalue()


def test_a_part_resumed_after_a_tool_line_is_not_printed_twice() -> None:
    renderer, out, _err = _renderer(terminal=False)
    renderer(_step())
    renderer(events.TextDelta(SID, "prt_1", "first half\n"))
    renderer(events.ToolUpdated(SID, _tool("pending")))  # the stream is finished for the tool line
    renderer(events.TextDelta(SID, "prt_1", "second half\n"))
    renderer(events.TextEnded(SID, "prt_1", "first half\nsecond half\n"))
    assert out.getvalue().count("first half") == 1 and "second half" in out.getvalue()
