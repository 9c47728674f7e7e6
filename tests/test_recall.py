"""The recall tool: after five compactions, any earlier tool output or user message of the session
is one ``recall`` call away (end to end: the real loop, SQLite, the scripted model)."""

from __future__ import annotations

import json
from pathlib import Path

from agentcli.store.records import ToolPart
from tests.fakellm import FakeLLM, Reply, ToolCall, is_summary_request
from tests.test_compaction_request import OPENAI, _loop
from tests.test_history import SES


def _results(loop: object, name: str) -> list[ToolPart]:
    store = loop.runtime.store  # type: ignore[attr-defined]
    return [p for m in store.messages(SES) for p in m.parts if isinstance(p, ToolPart) and p.tool == name]


def test_after_five_compactions_every_earlier_output_and_question_is_one_recall_away(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    loop = _loop(tmp_path, fake_llm, OPENAI, None)
    project = loop.runtime.options.directory
    fake_llm.on(lambda r: is_summary_request(r.body), Reply(text="## Objective\n- (nothing useful)"))
    for n in range(6):
        (project / f"notes_{n}.txt").write_text(f"the deploy key rotates on day {n}: zebracode{n}\n" * 3)
        fake_llm.push(
            Reply(tool_calls=[ToolCall("read", {"filePath": str(project / f"notes_{n}.txt")})]),
            Reply(text=f"Read notes {n}."),
        )
        loop.prompt(SES, f"question {n}: what does notes_{n}.txt say about quokkaword{n}?")
        if n < 5:
            assert loop.compact(SES)
    assert loop.runtime.store.get_session(SES).compactions == 5
    first_read = _results(loop, "read")[0]
    # The summaries said nothing useful: the first read's output is long out of the window.
    window = json.dumps(fake_llm.chat_requests()[-1].body["messages"])
    assert json.dumps(first_read.state.output)[1:-1] not in window

    fake_llm.push(
        Reply(tool_calls=[ToolCall("recall", {"query": "zebracode0"})]),
        Reply(tool_calls=[ToolCall("recall", {"id": first_read.id})]),
        Reply(tool_calls=[ToolCall("recall", {"query": "quokkaword0"})]),
        Reply(text="Day 0."),
    )
    loop.prompt(SES, "what was the deploy key code on day 0, and what did I first ask?")
    found, full, asked = (p.state.output for p in _results(loop, "recall")[-3:])
    assert f"[{first_read.id}] tool read" in found and "«zebracode0»" in found
    assert first_read.state.output in full  # the whole stored output, word for word
    assert "question 0: what does notes_0.txt say about «quokkaword0»" in asked


def test_recall_reads_only_this_sessions_records_and_says_how_to_use_it(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    loop = _loop(tmp_path, fake_llm, OPENAI, None)
    store = loop.runtime.store
    other = store.create_session(str(loop.runtime.options.directory), "fake/test-model").id
    fake_llm.push(Reply(text="noted"))
    loop.prompt(other, "the other session's secret word is wombatword")
    fake_llm.push(
        Reply(tool_calls=[ToolCall("recall", {"query": "wombatword"})]),
        Reply(tool_calls=[ToolCall("recall", {})]),
        Reply(text="nothing"),
    )
    loop.prompt(SES, "find wombatword")
    none, empty = _results(loop, "recall")
    assert "secret word" not in none.state.output and "find «wombatword»" in none.state.output
    assert empty.state.status == "error" and "recall needs a query" in (empty.state.error or "")
