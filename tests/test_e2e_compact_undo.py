"""Undoing the last compaction: `agentcli compact --undo` and `/compact undo`."""

from __future__ import annotations

from tests.fakellm import FakeLLM, Reply, Usage
from tests.terminal import PROMPT, leave, spawn
from tests.workspace import Workspace, assert_one_line_error

SUMMARY = "## Objective\n- answer numbered questions"


def _compacted_session(ws: Workspace, fake_llm: FakeLLM, answer: str = "answer {i}") -> str:
    sid = ws.seed_turns(
        fake_llm,
        [(f"question {i}", Reply(text=answer.format(i=i), usage=Usage(2_000, 10))) for i in range(4)],
    )
    ws.seed_compaction(fake_llm, Reply(text=SUMMARY, usage=Usage(6_000, 100)), sid)
    assert ws.store().get_session(sid).compactions == 1
    return sid


def _user_texts(fake_llm: FakeLLM) -> list[str]:
    return [m["content"] for m in fake_llm.chat_requests()[-1].body["messages"] if m["role"] == "user"]


def test_compact_undo_brings_the_whole_history_back(workspace: Workspace, fake_llm: FakeLLM) -> None:
    sid = _compacted_session(workspace, fake_llm)
    proc = workspace.run("compact", "--undo")
    assert proc.returncode == 0, proc.stderr
    assert "compaction undone" in proc.stderr
    assert workspace.store().get_session(sid).compactions == 0
    fake_llm.push(Reply(text="next answer", usage=Usage(900, 5)))
    assert workspace.run("run", "--continue", "question 4").returncode == 0
    sent = _user_texts(fake_llm)
    assert sent[:5] == [f"question {i}" for i in range(5)]  # the summarised turns are back, in order
    assert "What did we do so far?" not in sent
    assert SUMMARY not in str(fake_llm.chat_requests()[-1].body["messages"])
    # Nothing was deleted: the compaction is still there, marked as undone.
    assert any(m.compaction() for m in workspace.store().messages(sid))
    assert "no compaction to undo" in assert_one_line_error(workspace.run("compact", "--undo"))


def test_compact_undo_is_refused_when_the_full_window_would_not_fit(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    sid = _compacted_session(workspace, fake_llm, answer="answer {i}: " + "many words " * 2_000)
    workspace.write_config(context=12_000, output=1_000)  # the same session, now on a smaller model
    line = assert_one_line_error(workspace.run("compact", "--undo"))
    assert "cannot undo" in line and "usable" in line
    assert workspace.store().get_session(sid).compactions == 1  # unchanged


def test_slash_compact_undo_in_the_chat(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _compacted_session(workspace, fake_llm)
    child = spawn(workspace, "chat", "--continue")
    child.send("/compact undo\r")
    child.expect("compaction undone")
    child.expect("context")  # the gauge with the restored window
    child.expect(PROMPT)
    assert leave(child) == 0
