"""The compaction in-process: Compactor.create/process and the loop around them, with the real
store and the scripted server. Ported from reference §10.2 (C1), §10.4 (PR2–PR4, PR10, PR14–PR16),
§10.9 (L1, L2 on windows read back from SQLite); plus the history windowing cost, the
CompactionGuard, and a summary request that fails for reasons other than overflow.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from agentcli.bus import Bus
from agentcli.plugins.hookspecs import hookimpl
from agentcli.session import events
from agentcli.session.compaction.plan import CONTINUE_TEXT
from agentcli.session.compaction.step import CompactionGuard
from agentcli.session.request.history import filter_compacted, latest
from agentcli.store.records import AssistantMessage, CompactionPart, TextPart, Tokens, ToolPart
from tests.builders import Harness, counting
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall
from tests.test_history import SES, assistant, compaction, marker, summary_of, user


def _hello(h: Harness) -> str:
    msg = user("hello")
    h.store.import_messages([msg])
    return msg.id


def _process(h: Harness, parent: str, *, auto: bool, overflow: bool = False) -> str:
    window = filter_compacted(h.store.stream(h.sid))
    return (
        h.runtime.compactor(threading.Event())
        .process(window, parent_id=parent, auto=auto, overflow=overflow)
        .outcome
    )


@pytest.fixture
def h(tmp_path: Path, fake_llm: FakeLLM) -> Harness:
    return Harness.make(tmp_path, fake_llm, session_id=SES)


# --- create / process -----------------------------------------------------------------------------


def test_c1_create_writes_one_marker_with_one_compaction_part(h: Harness) -> None:
    h.runtime.compactor(threading.Event()).create(h.sid, auto=True, overflow=True)
    msgs = h.messages()
    assert len(msgs) == 1 and msgs[0].role == "user"
    assert len(msgs[0].parts) == 1
    part = msgs[0].parts[0]
    assert isinstance(part, CompactionPart) and part.auto and part.overflow


def test_pr1_parent_must_be_a_user_message(h: Harness) -> None:
    u = user("hello")
    a = assistant(u, "hi")
    h.store.import_messages([u, a])
    with pytest.raises(ValueError, match=f"Compaction parent must be a user message: {a.id}"):
        _process(h, a.id, auto=False)


class _Listener:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl
    def event(self, event: Any) -> None:
        self.seen.append(event)


def test_pr2_publishes_session_compacted_on_the_bus_and_to_plugins(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = _Listener()
    h = Harness.make(tmp_path, fake_llm, session_id=SES, plugins=[plugin])
    parent = _hello(h)
    fake_llm.push(Reply(text="## Goal\nsay hello"))
    assert _process(h, parent, auto=False) == "continue"
    done = h.of(events.CompactionFinished)
    assert len(done) == 1 and done[0].name == "session.compacted" and done[0].session_id == h.sid
    assert "say hello" in done[0].summary
    assert [e.name for e in plugin.seen if isinstance(e, events.CompactionFinished)] == ["session.compacted"]
    assert h.store.get_session(h.sid).compactions == 1


@pytest.mark.parametrize(
    "failure",
    [
        ErrorResponse.unauthorized(),
        ErrorResponse(500, {"error": {"message": "upstream broke"}}, {"retry-after": "0"}),
    ],
    ids=["401", "500-after-retries"],
)
def test_pr3_a_failed_manual_summary_under_the_budget_compacts_nothing_and_says_so(
    h: Harness, fake_llm: FakeLLM, failure: ErrorResponse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_MAX_RETRIES", "1")
    parent = _hello(h)
    fake_llm.push(failure, failure)
    assert _process(h, parent, auto=False) == "stop"
    assert not h.summaries()  # no errored summary left behind
    assert not h.of(events.CompactionFinished)
    [failed] = h.of(events.CompactionFailed)
    assert failed.message.startswith("the summary failed (HTTP ") and failed.message.endswith(
        "nothing was compacted"
    )
    assert not any(p.synthetic for m in h.users() for p in m.parts if isinstance(p, TextPart))  # no continue
    # Nothing was compacted: the whole history stays in the window.
    assert [m.id for m in filter_compacted(h.store.stream(h.sid))][0] == parent


def test_pr4_auto_adds_a_synthetic_continue_message(h: Harness, fake_llm: FakeLLM) -> None:
    parent = _hello(h)
    fake_llm.push(Reply(text="summary"))
    assert _process(h, parent, auto=True) == "continue"
    newest = h.messages()[-1]
    assert newest.role == "user"
    first = newest.parts[0]
    assert isinstance(first, TextPart) and first.synthetic and first.compaction_continue
    assert CONTINUE_TEXT in first.text


class _NoContinue:
    @hookimpl
    def compaction_autocontinue(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["enabled"] = False


def test_pr10_plugin_disables_the_continue_message(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, session_id=SES, plugins=[_NoContinue()])
    parent = _hello(h)
    fake_llm.push(Reply(text="summary"))
    assert _process(h, parent, auto=True) == "continue"
    newest = h.messages()[-1]
    assert isinstance(newest.info, AssistantMessage) and newest.info.summary
    assert not any(CONTINUE_TEXT in p.text for m in h.users() for p in m.parts if isinstance(p, TextPart))


class _BrokenCompacting:
    @hookimpl
    def session_compacting(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        raise RuntimeError("plugin exploded\nwith a second line")


def test_a_raising_compacting_hook_is_dropped_and_the_compaction_goes_on(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = Harness.make(tmp_path, fake_llm, session_id=SES, plugins=[_BrokenCompacting()])
    reported: list[str] = []
    assert h.runtime.plugins is not None
    h.runtime.plugins.report = reported.append
    fake_llm.push(Reply(text="first answer"))
    h.loop.prompt(h.sid, "hello")
    fake_llm.push(Reply(text="the summary"))
    assert h.loop.compact(h.sid) is True  # no exception escapes the loop
    # The plugin's (non-)change is dropped: our own prompt is sent and the compaction completes.
    assert "the summary" in [s.text() for s in h.summaries()]
    assert len(h.of(events.CompactionFinished)) == 1
    assert len(reported) == 1 and "session_compacting" in reported[0] and "plugin exploded" in reported[0]
    assert "\n" not in reported[0]


def test_pr15_reasoning_then_text_gives_the_summary_text(h: Harness, fake_llm: FakeLLM) -> None:
    parent = _hello(h)
    fake_llm.push(Reply(reasoning="let me think", text="summary"))
    assert _process(h, parent, auto=False) == "continue"
    (s,) = h.summaries()
    assert [p.text for p in s.parts if isinstance(p, TextPart)] == ["summary"]
    assert h.of(events.CompactionFinished)[0].summary == "summary"


def test_pr15_reasoning_only_still_gives_a_summary_text(h: Harness, fake_llm: FakeLLM) -> None:
    # A summary with no text would hide the whole history behind nothing.
    parent = _hello(h)
    fake_llm.push(Reply(reasoning="## Goal\nall of it in reasoning"))
    assert _process(h, parent, auto=False) == "continue"
    (s,) = h.summaries()
    assert s.info.error is None  # type: ignore[union-attr]
    assert [p.text for p in s.parts if isinstance(p, TextPart)] == ["## Goal\nall of it in reasoning"]
    assert "all of it in reasoning" in h.of(events.CompactionFinished)[0].summary


def test_an_empty_summary_reply_fails_the_manual_compaction(h: Harness, fake_llm: FakeLLM) -> None:
    parent = _hello(h)
    fake_llm.push(Reply(text="  \n "))
    assert _process(h, parent, auto=False) == "stop"
    assert not h.summaries()
    assert not h.of(events.CompactionFinished) and len(h.of(events.CompactionFailed)) == 1
    assert "the summarizer returned no text" in h.of(events.CompactionFailed)[0].message
    assert [m.id for m in filter_compacted(h.store.stream(h.sid))][0] == parent  # history kept


def test_pr16_tool_call_during_summary_fails_it_without_tool_parts(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # The transcript request offers no tools (the cache-riding one drops a stray call:
    # test_compaction_request.py).
    h = Harness.make(tmp_path, fake_llm, session_id=SES, extra={"compaction": {"request": "transcript"}})
    parent = _hello(h)
    fake_llm.push(Reply(tool_calls=[ToolCall("_noop", {})]))
    assert _process(h, parent, auto=False) == "stop"
    assert not h.summaries()  # failed under the budget: nothing compacted, nothing left behind
    assert not [p for m in h.messages() for p in m.parts if isinstance(p, ToolPart)]
    assert len(fake_llm.chat_requests()) == 1
    assert "tools" not in fake_llm.chat_requests()[0].body


# --- latest / windows read back from the store ------------------------------------------------------


def _l_fixture() -> list[Any]:
    tail = user("tail")
    over = assistant(tail, "working", finish="tool-calls")
    over.info = over.info.model_copy(update={"tokens": Tokens(input=280_000, output=200)})
    mark = marker(auto=True, tail_start_id=tail.id)
    summ = summary_of(mark, "summary", finish="stop")
    cont = user(text_part("Continue", synthetic=True))
    return [tail, over, mark, summ, cont]


def text_part(value: str, **fields: Any) -> Any:
    from tests.test_history import text

    return text(value, **fields)


def test_l1_latest_on_a_window_read_from_the_store(h: Harness) -> None:
    tail, over, mark, summ, cont = msgs = _l_fixture()
    h.store.import_messages(msgs)
    window = filter_compacted(h.store.stream(h.sid))
    assert [m.id for m in window] == [mark.id, summ.id, tail.id, over.id, cont.id]
    now = latest(window)
    assert now.finished is not None and now.finished.id == summ.id and now.finished.info.summary  # type: ignore[union-attr]
    assert now.user is not None and now.user.id == cont.id
    assert now.tasks == []


def test_l2_latest_sees_a_queued_compaction_task(h: Harness) -> None:
    msgs = _l_fixture()
    queued = user(compaction(auto=True))
    h.store.import_messages([*msgs, queued])
    now = latest(h.store.messages(h.sid))
    assert now.finished is not None and now.finished.id == msgs[3].id
    assert now.user is not None and now.user.id == queued.id
    assert len(now.tasks) == 1 and now.tasks[0].auto


def test_window_after_a_compaction_reads_no_message_older_than_the_tail(h: Harness) -> None:
    history: list[Any] = []
    for i in range(145):
        q = user(f"question {i}")
        history += [q, assistant(q, f"answer {i}")]
    tail = history[-4]  # the last two turns are kept
    mark = marker(tail_start_id=tail.id)
    history += [mark, summary_of(mark, "summary")]
    q = user("after")
    history += [q, assistant(q, "reply"), user("newest")]
    assert len(history) == 295
    h.store.import_messages(history)

    pulled = [0]
    window = filter_compacted(counting(h.store.stream(h.sid), pulled))
    assert window[0].id == mark.id and tail.id in [m.id for m in window]
    assert pulled[0] == len(window) == 9  # marker, summary, 4 tail, after, reply, newest

    # And the database: one page of newest messages, not the session.
    selects: list[str] = []

    def spy(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if "FROM message" in statement:
            selects.append(statement)

    event.listen(h.store.engine, "before_cursor_execute", spy)
    try:
        filter_compacted(h.store.stream(h.sid))
    finally:
        event.remove(h.store.engine, "before_cursor_execute", spy)
    assert len(selects) == 1


def test_loop_turn_on_a_long_session_reads_only_the_window(
    h: Harness, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    history: list[Any] = []
    for i in range(148):
        q = user(f"question {i}")
        history += [q, assistant(q, f"answer {i}")]
    mark = marker(tail_start_id=history[-2].id)
    history += [mark, summary_of(mark, "summary")]
    h.store.import_messages(history)
    real = h.store.stream
    pulls: list[int] = []

    def stream(session_id: str, page: int = 50) -> Any:
        pulled = [0]
        pulls.append(0)
        for msg in counting(real(session_id, page), pulled):
            pulls[-1] = pulled[0]
            yield msg

    monkeypatch.setattr(h.store, "stream", stream)
    fake_llm.push(Reply(text="fresh"))
    h.loop.prompt(h.sid, "go on")
    monkeypatch.undo()
    assert h.assistants()[-1].text() == "fresh"
    assert pulls and max(pulls) <= 10, pulls  # never the 296 messages behind the compaction


# --- the guard ------------------------------------------------------------------------------------


def test_guard_allows_the_first_and_progressing_compactions() -> None:
    bus, seen = Bus(), []
    bus.subscribe(seen.append)
    guard = CompactionGuard(usable=10_000)
    assert guard.allow(bus, "s")
    guard.record(50_000, 5_000)
    assert guard.allow(bus, "s")
    assert not seen


@pytest.mark.parametrize(
    ("results", "reason"),
    [
        ([(50_000, 48_000)], "did not reduce"),
        ([(50_000, 12_000)], "above the usable"),
        ([(50_000, 5_000), (30_000, 5_000), (20_000, 4_000)], "3 compactions"),
        ([(50_000, 5_000), (9_000, 4_800)], "would not make progress"),
    ],
    ids=["no-reduction", "still-over", "max-per-turn", "no-progress"],
)
def test_guard_refuses_and_reports_once(results: list[tuple[int, int]], reason: str) -> None:
    bus, seen = Bus(), []
    bus.subscribe(seen.append)
    guard = CompactionGuard(usable=10_000 if reason == "above the usable" else 60_000)
    for before, after in results:
        guard.record(before, after)
    assert not guard.allow(bus, "s")
    assert not guard.allow(bus, "s")
    assert len(seen) == 1 and isinstance(seen[0], events.CompactionFailed) and reason in seen[0].message


def test_provider_keeps_overflowing_after_compacting_stops_the_turn(h: Harness, fake_llm: FakeLLM) -> None:
    # Every normal request is rejected as too long; the summary works but does not help.
    fake_llm.on(lambda r: "summar" not in str(r.body["messages"][0]).lower(), ErrorResponse.context_length())
    fake_llm.fallback = Reply(text="## Goal\nshort")
    h.loop.prompt(h.sid, "hello")
    assert len(fake_llm.chat_requests()) <= 8  # bounded, not a loop
    assert any(e.kind == "context_overflow" for e in h.of(events.ErrorOccurred))
    assert h.of(events.CompactionFailed) or any(
        "too long after compacting" in e.message for e in h.of(events.ErrorOccurred)
    )
