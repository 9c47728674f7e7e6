"""What an ACP client is shown of a turn's events, a stored session, and a bad message: the pure
mappings under `agentcli acp` (its end-to-end tests are test_e2e_acp*.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp.schema import UsageUpdate

from agentcli.acp.replay import replay
from agentcli.acp.transport import shape_problem
from agentcli.acp.updates import TurnUpdates
from agentcli.session import events
from agentcli.session.undo import UNDONE
from agentcli.store.records import (
    AssistantMessage,
    MessageError,
    TextPart,
    ToolPart,
    ToolState,
    UserMessage,
    WithParts,
)
from agentcli.tools.base import PermissionRequest

PROJECT = Path("/work/project")
FIGURES = UsageUpdate(session_update="usage_update", used=1200, size=100_000)


def _updates() -> TurnUpdates:
    return TurnUpdates(PROJECT, lambda: FIGURES)


def _kinds(updates: list[Any]) -> list[str]:
    return [u.session_update for u in updates]


def _tool(status: str, tool: str = "edit", **args: Any) -> ToolPart:
    return ToolPart(
        id="prt_1",
        session_id="ses_1",
        message_id="msg_2",
        call_id="call_1",
        tool=tool,
        state=ToolState(status=status, input=args, output="Edit applied successfully."),  # type: ignore
    )


def _assistant(summary: bool = False) -> AssistantMessage:
    return AssistantMessage(id="msg_2", session_id="ses_1", parent_id="msg_1", summary=summary)


def test_a_summary_streams_as_thoughts_and_ends_with_a_notice_and_the_context_figures() -> None:
    updates = _updates()
    assert updates(events.CompactionStarted("ses_1", auto=True, overflow=False))[0].content.text.strip() == (
        "_compacting (auto)… summarising the conversation so far_"
    )
    updates(events.StepStarted("ses_1", _assistant(summary=True)))
    [thought] = updates(events.TextDelta("ses_1", "prt_9", "## Goal"))
    assert thought.session_update == "agent_thought_chunk"
    done = updates(events.CompactionFinished("ses_1", True, False, 90_000, 4_000, 0.0123, "summary"))
    assert _kinds(done) == ["agent_message_chunk", "usage_update"]
    assert "compacted: 90k → 4k tokens" in done[0].content.text
    assert done[1] is FIGURES
    # After the summary, the answer streams as the answer again.
    updates(events.StepStarted("ses_1", _assistant()))
    assert _kinds(updates(events.TextDelta("ses_1", "prt_10", "Hi"))) == ["agent_message_chunk"]


def test_pruning_is_told_with_the_new_context_figures() -> None:
    told = _updates()(events.Pruned("ses_1", tokens=42_000, parts=7))
    assert _kinds(told) == ["agent_message_chunk", "usage_update"]
    assert "pruned 42k tokens of old tool output (7 results)" in told[0].content.text


def test_a_tool_call_is_announced_once_then_updated_to_its_end() -> None:
    updates = _updates()
    args = {"filePath": "app.py", "oldString": "a", "newString": "b"}
    [start] = updates(events.ToolUpdated("ses_1", _tool("pending")))
    assert (start.session_update, start.status, start.kind) == ("tool_call", "pending", "edit")
    assert updates(events.ToolUpdated("ses_1", _tool("pending", filePath="app"))) == []  # still streaming
    [running] = updates(events.ToolUpdated("ses_1", _tool("running", **args)))
    assert (running.session_update, running.status) == ("tool_call_update", "in_progress")
    assert running.locations[0].path == str(PROJECT / "app.py")
    assert (running.content[0].old_text, running.content[0].new_text) == ("a", "b")
    [done] = updates(events.ToolUpdated("ses_1", _tool("completed", **args)))
    assert done.status == "completed" and done.title == "edit app.py"
    assert done.content[-1].content.text == "Edit applied successfully."


def test_a_replayed_task_shows_its_description_and_the_subagents_answer_not_the_models_wrapping() -> None:
    output = (
        "task_id: ses_9 (@general: 3 steps, read 2 files)\n\n<task_result>\nAll **good**.\n</task_result>"
    )
    part = _tool("completed", tool="task", description="check the docs", prompt="…", subagent_type="general")
    part.state.output = output
    part.state.metadata = {"sessionId": "ses_9", "agent": "general", "note": "3 steps, read 2 files"}
    [shown] = list(replay([WithParts(info=_assistant(), parts=[part])], PROJECT))
    assert (shown.kind, shown.title, shown.status) == ("think", "check the docs", "completed")
    assert shown.content[0].content.text == "All **good**.\n\n_@general: 3 steps, read 2 files_"


def test_a_permission_question_is_about_the_running_call_or_the_repeated_one() -> None:
    updates = _updates()
    updates(events.ToolUpdated("ses_1", _tool("running", filePath="app.py")))
    edit = PermissionRequest(tool="edit", title="Edit app.py")
    about = updates.asked_about(edit)
    assert about is not None and about.id == "prt_1"
    waiting = _tool("pending", tool="bash").model_copy(update={"id": "prt_2"})
    updates(events.ToolUpdated("ses_1", waiting))
    loop = PermissionRequest(tool="doom_loop", title="again?", metadata={"tool": "bash"})
    about = updates.asked_about(loop)
    assert about is not None and about.id == "prt_2"
    updates.new_turn()
    assert updates.asked_about(edit) is None


def test_replay_leaves_out_undone_turns_and_synthetic_text() -> None:
    def turn(n: int, text: str, answer: str, undone: bool = False) -> list[WithParts]:
        user = UserMessage(id=f"msg_{n}a", session_id="ses_1")
        reply = AssistantMessage(
            id=f"msg_{n}b",
            session_id="ses_1",
            parent_id=user.id,
            error=MessageError(name=UNDONE, message="undone") if undone else None,
        )
        return [
            WithParts(
                info=user,
                parts=[
                    TextPart(id=f"p{n}", session_id="ses_1", message_id=user.id, text=text, ignored=undone),
                    TextPart(id=f"q{n}", session_id="ses_1", message_id=user.id, text="file", synthetic=True),
                ],
            ),
            WithParts(
                info=reply, parts=[TextPart(id=f"r{n}", session_id="ses_1", message_id=reply.id, text=answer)]
            ),
        ]

    shown = list(replay(turn(1, "kept question", "kept answer") + turn(2, "undone", "gone", True), PROJECT))
    assert [(u.session_update, u.content.text) for u in shown] == [
        ("user_message_chunk", "kept question"),
        ("agent_message_chunk", "kept answer"),
    ]


@pytest.mark.parametrize(
    ("message", "problem"),
    [
        ([1, 2], "JSON object"),
        ("text", "JSON object"),
        ({"id": 1, "method": "initialize"}, '"jsonrpc"'),
        ({"jsonrpc": "2.0", "id": {}, "method": "initialize"}, '"id"'),
        ({"jsonrpc": "2.0", "id": True, "method": "initialize"}, '"id"'),
        ({"jsonrpc": "2.0", "id": 1, "method": ["x"]}, '"method"'),
        ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": 3}, '"params"'),
        ({"jsonrpc": "2.0", "id": 1}, '"method"'),
    ],
)
def test_a_message_that_is_not_json_rpc_is_named_why(message: Any, problem: str) -> None:
    found = shape_problem(message)
    assert found is not None and problem in found


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "cancelled"}}},
        {"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "no"}},
    ],
)
def test_requests_notifications_and_responses_pass(message: Any) -> None:
    assert shape_problem(message) is None


def test_an_edit_diff_is_the_whole_file_so_the_client_numbers_its_lines(tmp_path: Path) -> None:
    from agentcli.acp import tool_calls
    from agentcli.store.records import FileChange

    path = tmp_path / "app.py"
    before = "".join(f"line {n}\n" for n in range(1, 41))
    path.write_text(before)
    args = {"filePath": str(path), "oldString": "line 30\n", "newString": "line thirty\n"}
    after = before.replace("line 30\n", "line thirty\n")
    path.write_text(after)
    done = _tool("completed", **args)
    done.state.change = FileChange.made(path, before, after)  # replayed later: from the undo record
    assert (
        tool_calls.content(done, tmp_path)[0].old_text,
        tool_calls.content(done, tmp_path)[0].new_text,
    ) == (
        before,
        after,
    )
    assert tool_calls.locations(done, tmp_path)[0].line == 30
    done.state.change = FileChange.made(path, before, "something else")  # does not add up: the pieces
    assert tool_calls.content(done, tmp_path)[0].old_text == "line 30\n"


def test_attachment_markers_are_set_apart_from_each_other_and_from_words(tmp_path: Path) -> None:
    from acp import text_block
    from acp.schema import ResourceContentBlock

    from agentcli.acp.prompt import prompt_input

    for name in ("notes.txt", "todo.txt"):
        (tmp_path / name).write_text(name)

    def link(name: str) -> ResourceContentBlock:
        return ResourceContentBlock(type="resource_link", name=name, uri=(tmp_path / name).as_uri())

    given = prompt_input([text_block("compare"), link("notes.txt"), link("todo.txt")], tmp_path, images=False)
    assert given.text == "compare @notes.txt @todo.txt"
    given = prompt_input(
        [link("notes.txt"), text_block(" and "), link("todo.txt"), text_block("?")], tmp_path, images=False
    )
    assert given.text == "@notes.txt and @todo.txt ?"
    assert (
        prompt_input([text_block("a"), text_block("b")], tmp_path, images=False).text == "ab"
    )  # the user's own
