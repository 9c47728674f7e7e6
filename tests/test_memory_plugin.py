"""The bundled memory plugin against the scripted server: the context block the model sees, the
``memory`` and ``memory_compact`` tools, and compactions made through them."""

from __future__ import annotations

import re
from pathlib import Path

from agentcli.plugins.memory import make_plugin
from agentcli.store.records import ToolPart
from tests.builders import Harness
from tests.fakellm import FakeLLM, Recorded, Reply, ToolCall, Usage, is_summary_request
from tests.workspace import Workspace

LIMIT = 200_000
BLOCK = re.compile(r"Context: (\d+)% used \(([\d,]+) / ([\d,]+) tokens, ([^)]+)\)")


def _memory(tmp_path: Path, fake_llm: FakeLLM) -> Harness:
    # The summaries here are the ones the tests ask for (none written ahead: compaction.background).
    extra = {"compaction": {"background": False}}
    return Harness.make(tmp_path, fake_llm, plugins=[make_plugin()], context=LIMIT, output=8_000, extra=extra)


def _system(rec: Recorded) -> list[str]:
    return [m["content"] for m in rec.body["messages"] if m["role"] == "system"]


def _block(rec: Recorded) -> tuple[int, int, int, str, str]:
    """(percent, used, limit, model, whole block) of the context block: in a chat request, the last
    message, after the newest one, so the cached prefix before it holds still; in a summary request
    (sent once), the system prompt — or, when the summary request is the chat request with the
    instruction last (it rides the cache), the reminder before the instruction."""
    reminders = [m for m in rec.body["messages"] if str(m.get("content")).startswith("<system-reminder>\n")]
    if _is_summary(rec) and not reminders:
        text = _system(rec)[1]
    else:
        last = rec.body["messages"][-2 if _is_summary(rec) else -1]
        assert last["role"] == "user" and last["content"].startswith("<system-reminder>\n"), last
        text = last["content"].removesuffix("\n</system-reminder>")
    match = BLOCK.search(text)
    assert match, text
    block = text[match.start() - 2 :].split("\n\n")[0]
    return int(match[1]), int(match[2].replace(",", "")), int(match[3].replace(",", "")), match[4], block


def _is_summary(rec: Recorded) -> bool:
    return is_summary_request(rec.body)


def _tool_result(h: Harness, tool: str) -> str:
    parts = [p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart) and p.tool == tool]
    state = parts[-1].state
    return state.output if state.status == "completed" else f"ERROR: {state.error}"


def _turn(h: Harness, fake_llm: FakeLLM, text: str, *replies: Reply) -> list[Recorded]:
    before = len(fake_llm.chat_requests())
    fake_llm.push(*replies)
    h.loop.prompt(h.sid, text)
    return fake_llm.chat_requests()[before:]


def test_context_block_shows_real_figures_and_the_band_at_each_usage_level(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    levels = [
        (140_000, 70, "\U0001f7e1", "consider memory_compact"),
        (172_000, 86, "\U0001f7e0", "next natural break"),
        (186_000, 93, "\U0001f534", "memory_compact now"),
        (60_000, 30, "\U0001f7e2", None),
    ]
    [first] = _turn(h, fake_llm, "start", Reply(text="ok", usage=Usage(levels[0][0], 100)))
    percent, used, limit, model, _ = _block(first)
    assert (percent, used, limit, model) == (
        0,
        0,
        LIMIT,
        "fake/test-model",
    )  # a new session: nothing measured yet
    for i, (tokens, want, marker, advice) in enumerate(levels):
        nxt = levels[i + 1][0] if i + 1 < len(levels) else 1000
        [rec] = _turn(h, fake_llm, f"turn {i}", Reply(text="ok", usage=Usage(nxt, 100)))
        percent, used, limit, _, block = _block(rec)
        # The last request's count, and what is new since (the answer "ok", this message): the context
        # figure (agentcli.session.request.figure), the same the gauge and /context show.
        assert (percent, limit) == (want, LIMIT) and tokens < used < tokens + 200, used
        assert block.startswith(marker), block
        if advice:
            assert advice in block
        else:
            assert "\n" not in block  # green: the figures line only
    # Nothing of it in the system prompt: that is the same, byte for byte, at every usage level.
    assert _system(rec) == _system(first) == h.runtime.system_prompt(h.sid)
    assert "Context:" not in "".join(_system(rec))


def test_continued_session_has_the_block_from_its_first_request(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(context=LIMIT, output=8_000)
    workspace.seed_turns(fake_llm, [("first", Reply(text="ok", usage=Usage(150_000, 1_000)))])
    no_background = {"background": False}  # the one request scripted is the turn's (docs/compaction.md)
    workspace.write_config({"plugin": ["memory"], "compaction": no_background}, context=LIMIT, output=8_000)
    fake_llm.push(Reply(text="continued"))
    proc = workspace.run("run", "--continue", "go on")
    assert proc.returncode == 0, proc.stderr
    percent, used, limit, _, block = _block(fake_llm.chat_requests()[-1])
    assert (percent, limit) == (75, LIMIT) and 150_000 < used < 150_200, used
    assert block.startswith("\U0001f7e1")
    tools = [t["function"]["name"] for t in fake_llm.chat_requests()[-1].body["tools"]]
    assert "memory" in tools and "memory_compact" in tools


def test_memory_compact_declines_below_half_and_says_the_percentage(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    _turn(h, fake_llm, "start", Reply(text="ok", usage=Usage(59_000, 1_000)))
    sent = _turn(
        h,
        fake_llm,
        "compact please",
        Reply(tool_calls=[ToolCall("memory_compact", {})], usage=Usage(60_000, 50)),
        Reply(text="fine"),
    )
    assert "30%" in _tool_result(h, "memory_compact") and "Not compacting" in _tool_result(
        h, "memory_compact"
    )
    assert len(sent) == 2 and not any(_is_summary(r) for r in sent)
    assert not h.summaries()


def _compaction(h: Harness, fake_llm: FakeLLM, question: str, summary: str) -> list[Recorded]:
    """A turn in which the model calls memory_compact at 60 %, then carries on after the summary."""
    _turn(h, fake_llm, f"before {question}", Reply(text="noted", usage=Usage(119_000, 1_000)))
    return _turn(
        h,
        fake_llm,
        question,
        Reply(tool_calls=[ToolCall("memory_compact", {})], usage=Usage(120_000, 50)),
        Reply(text=summary, usage=Usage(5_000, 300)),
        Reply(text=f"carrying on after {question}", usage=Usage(6_000, 20)),
    )


def test_memory_compact_above_half_compacts_before_the_next_request(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    sent = _compaction(h, fake_llm, "time to compact", "## Goal\n- FIRST SUMMARY: build the parser")
    assert "Compaction queued" in _tool_result(h, "memory_compact") and "60%" in _tool_result(
        h, "memory_compact"
    )
    # Sent, in order: the step that called the tool, at once the summary request (no chat step between),
    # then the turn goes on from the summary, as after an automatic compaction (issue 17).
    assert len(sent) == 3 and not _is_summary(sent[0]) and _is_summary(sent[1]) and not _is_summary(sent[2])
    carried_on = [str(m.get("content")) for m in sent[2].body["messages"] if m["role"] != "system"]
    assert carried_on[0] == "What did we do so far?" and "FIRST SUMMARY" in carried_on[1]
    # Its turn was summarised: the question is re-sent verbatim (then the context block).
    assert carried_on[-2] == "time to compact" and carried_on[-1].startswith("<system-reminder>")
    assert h.assistants()[-1].text() == "carrying on after time to compact"
    prompt = str(sent[1].body["messages"][-1]["content"])
    assert (
        "compact your own session" in prompt
        and "## Goal" in prompt
        and "## Relevant files / directories" in prompt
    )
    # The tool call and its result are part of what was summarised.
    assert "memory_compact" in str(sent[1].body["messages"])
    # The summary request carries the context block too, with the figures it is summarising.
    percent, used = _block(sent[1])[:2]
    assert percent == 60 and 120_000 < used < 120_300, used
    # The next turn starts from the summary, and the block shows the new, smaller window.
    [nxt] = _turn(h, fake_llm, "what next?", Reply(text="the parser"))
    contents = [str(m.get("content")) for m in nxt.body["messages"] if m["role"] != "system"]
    assert contents[0] == "What did we do so far?" and "FIRST SUMMARY" in contents[1]
    percent, used, _, _, _ = _block(nxt)
    assert 0 < used < 60_000 and percent < 30


def test_two_memory_compacts_keep_the_first_summary_and_compactions_lists_and_reads_them(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    _compaction(h, fake_llm, "first compaction", "## Goal\n- ONLY-IN-FIRST: the port is 8123")
    second = _compaction(
        h, fake_llm, "second compaction", "## Goal\n- merged: the port is 8123, now also tests"
    )
    # The second summary request carries the first summary in full (anchored merge).
    assert _is_summary(second[1]) and "ONLY-IN-FIRST: the port is 8123" in str(second[1].body["messages"])
    assert len(h.summaries()) == 2

    _turn(
        h, fake_llm, "list", Reply(tool_calls=[ToolCall("memory", {"tool": "compactions"})]), Reply(text="ok")
    )
    listing = _tool_result(h, "memory")
    assert "| 1 |" in listing and "| 2 |" in listing and "ONLY-IN-FIRST" in listing and "read: N" in listing
    _turn(
        h,
        fake_llm,
        "read",
        Reply(tool_calls=[ToolCall("memory", {"tool": "compactions", "args": {"read": 1}})]),
        Reply(text="ok"),
    )
    assert "Compaction 1 of 2" in _tool_result(
        h, "memory"
    ) and "ONLY-IN-FIRST: the port is 8123" in _tool_result(h, "memory")
    _turn(
        h,
        fake_llm,
        "bad",
        Reply(tool_calls=[ToolCall("memory", {"tool": "compactions", "args": {"read": 3}})]),
        Reply(text="ok"),
    )
    assert "Invalid compaction index. Session has 2 compaction(s). Use 1-2." in _tool_result(h, "memory")


def test_messages_lists_ids_that_message_reads_and_skips_blank_tool_steps(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    _turn(h, fake_llm, "remember the word PELICAN", Reply(text="I will remember PELICAN " + "x" * 600))
    _turn(
        h,
        fake_llm,
        "list",
        Reply(tool_calls=[ToolCall("memory", {"tool": "messages", "args": {"maxLength": 200}})]),
        Reply(text="ok"),
    )
    listing = _tool_result(h, "memory")
    headers = re.findall(r"### (user|assistant) · (msg_\w+)", listing)
    assert ("user", h.users()[0].id) in headers
    # The tool step (no text) is not an entry; the answer is cut and says how to read it whole.
    tool_step = h.assistants()[-1].id
    assert tool_step not in listing
    answer_id = h.assistants()[0].id
    assert ("assistant", answer_id) in headers and f'messageId: "{answer_id}"' in listing
    _turn(
        h,
        fake_llm,
        "read it",
        Reply(tool_calls=[ToolCall("memory", {"tool": "message", "args": {"messageId": answer_id}})]),
        Reply(text="ok"),
    )
    full = _tool_result(h, "memory")
    assert "I will remember PELICAN" in full and "x" * 600 in full


def test_unknown_operation_and_missing_argument_get_one_line_answers(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    _turn(h, fake_llm, "x", Reply(tool_calls=[ToolCall("memory", {"tool": "nope"})]), Reply(text="ok"))
    assert "Unknown operation 'nope'" in _tool_result(h, "memory") and "help" in _tool_result(h, "memory")
    _turn(h, fake_llm, "y", Reply(tool_calls=[ToolCall("memory", {"tool": "message"})]), Reply(text="ok"))
    assert "needs messageId" in _tool_result(h, "memory")


def test_search_finds_matches_across_two_sessions_ranked_with_ids_to_read(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _memory(tmp_path, fake_llm)
    _turn(h, fake_llm, "the deploy script uses the flamingo bucket", Reply(text="noted: flamingo bucket"))
    first_session = h.sid
    h.sid = h.store.create_session(str(h.project), "fake/test-model").id
    _turn(h, fake_llm, "unrelated question about tests", Reply(text="tests are fine"))
    _turn(
        h,
        fake_llm,
        "find it",
        Reply(tool_calls=[ToolCall("memory", {"tool": "search", "args": {"query": "flamingo"}})]),
        Reply(text="found"),
    )
    found = _tool_result(h, "memory")
    # Both hits are in the first session (the one the search was not run from), each with its ids.
    assert found.count(f"session {first_session}") == 2, found
    assert "«flamingo»" in found
    first_user = h.store.messages(first_session)[0].id
    assert f"message {first_user}" in found
    assert "tests are fine" not in found


def test_cached_tokens_count_in_the_block(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _memory(tmp_path, fake_llm)
    _turn(h, fake_llm, "start", Reply(text="ok", usage=Usage(180_000, 0, cached_tokens=150_000)))
    [rec] = _turn(h, fake_llm, "next", Reply(text="ok"))
    percent, used, _, _, block = _block(rec)
    # open-memory would show 15 %: it leaves cached tokens out
    assert percent == 90 and 180_000 < used < 180_200, used
    assert block.startswith("\U0001f7e0")
