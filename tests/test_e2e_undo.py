"""`/undo`, `/redo`, `agentcli undo|redo`: the last turn's edits reverted and the turn hidden."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.terminal import leave, say, spawn
from tests.workspace import Workspace, assert_one_line_error

ORIGINAL = "def greet():\n    return 'Helo'\n"


def _editing_turn(ws: Workspace, llm: FakeLLM) -> None:
    existing = ws.project / "greet.py"
    existing.write_text(ORIGINAL)
    llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": str(existing)})]),
        Reply(
            tool_calls=[
                ToolCall("edit", {"filePath": str(existing), "oldString": "Helo", "newString": "Hello"}),
                ToolCall("write", {"filePath": str(ws.project / "NEW.md"), "content": "# new\n"}),
            ]
        ),
        Reply(text="Fixed and noted.", usage=Usage(900, 5)),
    )
    proc = ws.run("run", "--yes", "fix the greeting and add a note")
    assert proc.returncode == 0, proc.stderr
    assert "Hello" in existing.read_text() and (ws.project / "NEW.md").exists()


def test_undo_reverts_the_files_and_hides_the_turn_and_redo_puts_them_back(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _editing_turn(workspace, fake_llm)
    undone = workspace.run("undo")
    assert undone.returncode == 0, undone.stderr
    assert "greet.py" in undone.stdout and "NEW.md" in undone.stdout
    assert (workspace.project / "greet.py").read_text() == ORIGINAL
    assert not (workspace.project / "NEW.md").exists()  # created by the turn: gone again
    redone = workspace.run("redo")
    assert redone.returncode == 0, redone.stderr
    assert "Hello" in (workspace.project / "greet.py").read_text() and (workspace.project / "NEW.md").exists()
    assert workspace.run("undo").returncode == 0
    fake_llm.push(Reply(text="Starting over.", usage=Usage(700, 5)))
    assert workspace.run("run", "--continue", "let us start over").returncode == 0
    sent = str(fake_llm.chat_requests()[-1].body["messages"])
    assert "fix the greeting" not in sent and "Fixed and noted." not in sent  # the turn is hidden
    assert "nothing to redo" in assert_one_line_error(workspace.run("redo"))  # a new turn ends the redo chain


def test_undo_refuses_when_a_file_changed_on_disk_since(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _editing_turn(workspace, fake_llm)
    (workspace.project / "greet.py").write_text("my own change\n")
    line = assert_one_line_error(workspace.run("undo"))
    assert "greet.py changed on disk" in line
    assert (workspace.project / "greet.py").read_text() == "my own change\n"
    assert (workspace.project / "NEW.md").exists()  # nothing was undone


def test_slash_undo_and_redo_in_the_chat(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _editing_turn(workspace, fake_llm)
    child = spawn(workspace, "chat", "--continue")
    say(child, "/undo", "undone", "greet.py")
    assert (workspace.project / "greet.py").read_text() == ORIGINAL
    say(child, "/redo", "redone")
    assert "Hello" in (workspace.project / "greet.py").read_text()
    assert leave(child) == 0
