"""close_interrupted on records as a killed process leaves them (real SQLite store)."""

from __future__ import annotations

from pathlib import Path

from agentcli.session.recovery import Recovered, close_interrupted
from agentcli.session.request.history import INTERRUPTED_TEXT
from agentcli.session.request.view import to_model_messages
from agentcli.store.records import AssistantMessage, SessionInfo, ToolPart, WithParts
from agentcli.store.store import Store
from tests.test_history import SES, assistant, marker, step, tool, user


def _store(tmp_path: Path, *history: WithParts) -> Store:
    store = Store(tmp_path / "db.sqlite")
    store.put_session(SessionInfo(id=SES, directory=str(tmp_path)))
    store.import_messages(list(history))
    return store


def test_open_calls_and_steps_are_closed_once_and_finished_ones_left_alone(tmp_path: Path) -> None:
    q1 = user("first")
    done = assistant(q1, step(), tool(output="listing"), "all good")
    q2 = user("second")
    killed = assistant(
        q2,
        step(),
        "partial",
        tool(status="running", output=""),
        tool(status="pending", output=""),
        finish=None,
    )
    store = _store(tmp_path, q1, done, q2, killed)

    assert close_interrupted(store, SES) == Recovered(messages=1, tool_calls=2)
    messages = store.messages(SES)
    assert messages[1] == done  # untouched
    closed = messages[3]
    assert isinstance(closed.info, AssistantMessage)
    assert closed.info.error is not None and closed.info.error.name == "MessageAbortedError"
    assert closed.info.completed is not None
    parts = [p for p in closed.parts if isinstance(p, ToolPart)]
    assert [p.state.status for p in parts] == ["error", "error"]
    assert all(p.state.error == INTERRUPTED_TEXT and p.state.time.end is not None for p in parts)
    # The model gets both calls, each answered as interrupted, and the partial text.
    sent = to_model_messages(messages)
    assert [m["content"] for m in sent if m["role"] == "tool"][-2:] == [INTERRUPTED_TEXT, INTERRUPTED_TEXT]
    assert "partial" in str(sent)

    assert not close_interrupted(store, SES)  # nothing left open: a second pass changes nothing


def test_an_unfinished_summary_is_left_to_the_compaction(tmp_path: Path) -> None:
    q = user("question")
    answer = assistant(q, "answer")
    mark = marker(auto=True)
    summary = assistant(mark, "half a summ", summary=True, finish=None)
    store = _store(tmp_path, q, answer, mark, summary)
    assert not close_interrupted(store, SES)
    assert store.messages(SES)[-1] == summary
