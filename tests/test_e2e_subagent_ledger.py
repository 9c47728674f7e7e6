"""The parent's ledger takes in what its subagents touched: the files and commands of a task's child
session are the parent's work too, so a compaction of the parent keeps them whatever its summary
says — even for a task that failed after changing files."""

from __future__ import annotations

from agentcli.store.records import AssistantMessage
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.test_e2e_subagents import REVIEWER, sessions, task
from tests.workspace import Workspace

USELESS = "## Objective\n- (none)"  # a summary that remembers nothing


def _carried(ws: Workspace, session_id: str) -> str:
    from agentcli.store.artifacts import render

    summaries = [
        m for m in ws.store().messages(session_id) if isinstance(m.info, AssistantMessage) and m.info.summary
    ]
    carried = summaries[-1].carryover()
    assert carried is not None
    return render(carried)


def test_a_compaction_of_the_parent_keeps_the_files_and_commands_its_subagent_touched(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": REVIEWER}})
    (workspace.project / "spec.md").write_text("the spec\n")
    fake_llm.push(
        Reply(tool_calls=[task("Read the spec, write the notes, run the check")]),
        Reply(tool_calls=[ToolCall("read", {"filePath": "spec.md"})]),
        Reply(tool_calls=[ToolCall("write", {"filePath": "notes.md", "content": "a\nb\n"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "echo checked", "description": "check"})]),
        Reply(text="notes written"),
        Reply(text="The reviewer wrote the notes."),
    )
    proc = workspace.run("run", "--yes", "delegate the notes")
    assert proc.returncode == 0, proc.stderr
    parent, child = sessions(workspace)
    fake_llm.push(Reply(text=USELESS))
    assert workspace.run("compact").returncode == 0

    carried = _carried(workspace, parent.id)
    assert "- notes.md: written (last change: 2 lines written)" in carried
    assert "- spec.md: read" in carried
    assert "- `echo checked`: exit 0" in carried
    # ...and the next request of the parent's model carries them after the useless summary.
    fake_llm.push(Reply(text="I remember"))
    assert workspace.run("run", "--continue", "what changed?").returncode == 0
    sent = str(fake_llm.chat_requests()[-1].body["messages"])
    assert "notes.md: written" in sent and "`echo checked`" in sent
    assert child.parent_id == parent.id


def test_a_failed_tasks_changes_are_still_in_the_parents_ledger(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config({"agent": {"reviewer": {**REVIEWER, "steps": 2}}})
    fake_llm.push(
        Reply(tool_calls=[task("Write it")]),
        Reply(tool_calls=[ToolCall("write", {"filePath": "half.md", "content": "x\n"})]),
        # Its last step offers no tools: it calls one anyway, and the task fails without an answer.
        Reply(tool_calls=[ToolCall("read", {"filePath": "half.md"})]),
        Reply(text="the reviewer stopped"),
    )
    assert workspace.run("run", "--yes", "go").returncode == 0
    assert (workspace.project / "half.md").exists()
    parent, _ = sessions(workspace)
    fake_llm.push(Reply(text=USELESS))
    assert workspace.run("compact").returncode == 0
    carried = _carried(workspace, parent.id)
    assert "- half.md: written" in carried
    assert "subagent reviewer stopped without an answer" in carried  # the task's own failure, as before
