"""One home for what the model sees (agentcli.session.request.view): sizes made once and exact, the plugin
transforms around the summary request too, one conversion of the window per compaction, and
agentcli's own flags as typed record fields that old rows still load into."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.llm.tokens import estimate_json
from agentcli.plugins.hookspecs import hookimpl
from agentcli.session.compaction.plan import select_tail
from agentcli.session.request.history import filter_compacted
from agentcli.session.request.view import convert, model_view, to_model_messages
from agentcli.store.records import TextPart, ToolPart, WithParts
from tests.builders import Harness
from tests.dbs import PG_URL
from tests.fakellm import FakeLLM, Reply
from tests.test_history import SES, assistant, marker, step, text, tool, user

OUTPUT = "def handler(event):\n    return process(event)\n" * 12


def _long_turn(steps: int) -> list[WithParts]:
    """Two short turns, then one turn of ``steps`` tool steps (one assistant message each)."""
    out: list[WithParts] = []
    for n in range(2):
        u = user(f"request {n}")
        out += [u, assistant(u, f"answer {n}", tool(output=OUTPUT))]
    u = user("refactor everything — ünïcode too")
    out.append(u)
    out += [
        assistant(
            u, step(), f"step {n}", tool("read", OUTPUT, input={"filePath": f"m{n}.py"}), finish="tool-calls"
        )
        for n in range(steps)
    ]
    return out


def test_sizes_of_any_run_of_messages_equal_the_estimate_of_their_conversion() -> None:
    history = _long_turn(300)
    converted = convert(history)
    n = len(history)
    for start, end in [(0, n), (0, 1), (3, n), (n - 1, n), (10, 200), (5, 5), (150, 151)]:
        assert converted.tokens(start, end) == estimate_json(to_model_messages(history[start:end]))


def test_the_tail_of_a_long_turn_is_the_longest_suffix_that_fits() -> None:
    history = _long_turn(300)
    chosen = select_tail(history, tail_turns=2, budget=15_000)
    assert chosen.tail_start_id is not None
    start = next(i for i, m in enumerate(history) if m.id == chosen.tail_start_id)
    assert estimate_json(to_model_messages(history[start:])) <= 15_000
    assert estimate_json(to_model_messages(history[start - 1 :])) > 15_000
    assert chosen.head == history[:start]


@pytest.fixture
def h(tmp_path: Path, fake_llm: FakeLLM) -> Harness:
    return Harness.make(tmp_path, fake_llm, session_id=SES)


def _compact(h: Harness) -> str:
    window = filter_compacted(h.store.stream(h.sid))
    return (
        h.runtime.compactor(threading.Event())
        .process(window, parent_id=window[-1].id, auto=False, overflow=False)
        .outcome
    )


def test_one_compaction_converts_the_window_once(h: Harness, fake_llm: FakeLLM) -> None:
    h.store.import_messages([*_long_turn(40), marker()])
    fake_llm.push(Reply(text="## Objective\n- refactor"))
    before = h.runtime.view.conversions
    assert _compact(h) == "continue"
    assert h.runtime.view.conversions - before == 1
    # The gauge figure after it is the size of the new window as the model will see it.
    after = model_view(filter_compacted(h.store.stream(h.sid)))
    system = [{"role": "system", "content": b} for b in h.runtime.system_prompt(h.sid)]
    assert h.store.get_session(h.sid).context_tokens == estimate_json(system + to_model_messages(after))


class _Redactor:
    @hookimpl
    def chat_messages_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        for msg in output["messages"]:
            for part in msg.parts:
                if isinstance(part, TextPart):
                    part.text = part.text.replace("hunter2", "[redacted]")
                elif isinstance(part, ToolPart):
                    part.state.output = part.state.output.replace("hunter2", "[redacted]")

    @hookimpl
    def chat_system_transform(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        output["system"].append(f"house rules ({input.get('purpose', 'chat')})")


def test_the_summary_request_goes_through_the_plugin_transforms(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # The transcript request (the cache-riding one is the chat request: its transforms are the chat's).
    transcript = {"compaction": {"request": "transcript"}}
    h = Harness.make(tmp_path, fake_llm, session_id=SES, plugins=[_Redactor()], extra=transcript)
    first = user("my password is hunter2")
    turns = [first, assistant(first, "noted", tool(output="echo hunter2"))]
    for n in range(3):
        u = user(f"question {n}")
        turns += [u, assistant(u, f"answer {n}")]
    h.store.import_messages([*turns, marker()])
    fake_llm.push(Reply(text="## Objective\n- answer questions"))
    assert _compact(h) == "continue"
    body = fake_llm.chat_requests()[-1].body
    sent = json.dumps(body["messages"])
    assert "my password is [redacted]" in sent and "hunter2" not in sent
    assert body["messages"][-2] == {"role": "system", "content": "house rules (compaction)"}


@pytest.mark.skipif(bool(PG_URL), reason="edits and reads the SQLite file's rows directly")
def test_old_rows_with_flags_in_metadata_load_as_typed_fields(h: Harness) -> None:
    u = user("question")
    a = assistant(u, "answer", tool(status="error", error="cut", metadata={"output": "partial"}))
    h.store.import_messages([u, a])
    text_id = u.parts[0].id
    tool_id = a.parts[1].id
    # Rows as agentcli wrote them before these flags were fields.
    with sqlite3.connect(h.store.path) as db:
        for part_id, update in [
            (
                text_id,
                {
                    "replay_of": "msg_x",
                    "fallback": True,
                    "compaction_continue": True,
                    "from_reasoning": True,
                    "plugin": "kept",
                },
            )
        ]:
            data = json.loads(db.execute("SELECT data FROM part WHERE id = ?", (part_id,)).fetchone()[0])
            for key in ("replay_of", "fallback", "compaction_continue", "from_reasoning"):
                data.pop(key, None)
            data["metadata"] = update
            db.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(data), part_id))
        data = json.loads(db.execute("SELECT data FROM part WHERE id = ?", (tool_id,)).fetchone()[0])
        data["state"].pop("interrupted", None)
        data["state"]["metadata"] = {"interrupted": True, "output": "partial"}
        db.execute("UPDATE part SET data = ? WHERE id = ?", (json.dumps(data), tool_id))
    loaded_user, loaded_answer = h.store.messages(h.sid)
    part = loaded_user.parts[0]
    assert isinstance(part, TextPart)
    assert (part.replay_of, part.fallback, part.compaction_continue, part.from_reasoning) == (
        "msg_x",
        True,
        True,
        True,
    )
    assert part.metadata == {"plugin": "kept"}
    call = loaded_answer.parts[1]
    assert (
        isinstance(call, ToolPart) and call.state.interrupted and call.state.metadata == {"output": "partial"}
    )
    # …and the model is sent the interrupted call's partial output as its result.
    results = [m["content"] for m in to_model_messages([loaded_user, loaded_answer]) if m["role"] == "tool"]
    assert results == ["partial"]


@pytest.mark.skipif(bool(PG_URL), reason="edits and reads the SQLite file's rows directly")
def test_typed_flags_are_not_written_to_metadata(h: Harness) -> None:
    u = user(text("again", replay_of="msg_y"))
    h.store.import_messages([u])
    with sqlite3.connect(h.store.path) as db:
        data = json.loads(db.execute("SELECT data FROM part WHERE id = ?", (u.parts[0].id,)).fetchone()[0])
    assert data["replay_of"] == "msg_y" and data["metadata"] == {}
