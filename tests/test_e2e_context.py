"""Context management end to end: the real CLI against the scripted server — pruning, the summary
compaction after a usage overflow, the provider overflow replay, a summary that itself overflows, loop
guards, the manual compact command and plugins."""

from __future__ import annotations

import json
from typing import Any

from agentcli.session.request.view import PRUNED_PLACEHOLDER, SUMMARY_MARKER_TEXT
from agentcli.store.artifacts import split_summary
from agentcli.store.records import AssistantMessage, CompactionPart, TextPart, ToolPart
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall, Usage, is_summary_request
from tests.workspace import Workspace

SMALL = Usage(1000, 10)


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return body["messages"]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(item.get("text", "") for item in content if isinstance(item, dict))
    return content or ""


def _is_summary_request(body: dict[str, Any]) -> bool:
    return is_summary_request(body)


def _part_count(ws: Workspace) -> int:
    store = ws.store()
    [session] = store.list_sessions()
    return store.count_parts(session.id)


def test_pruning_sends_the_placeholder_for_exactly_the_pruned_outputs(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(context=1_000_000, output=8_000)
    line = "abcdefghij" * 4  # 40 characters
    for name in "abcdefghij":
        (workspace.project / f"{name}.txt").write_text(
            "\n".join(f"{name} {i:04d} {line}" for i in range(850)) + "\n"
        )
    # Five turns, each reading two ~11k-token files; then a sixth turn to see what the model is sent.
    files = iter("abcdefghij")
    for turn in range(5):
        first, second = next(files), next(files)
        fake_llm.push(
            Reply(
                tool_calls=[
                    ToolCall("read", {"filePath": f"{first}.txt"}, id=f"call_{first}"),
                    ToolCall("read", {"filePath": f"{second}.txt"}, id=f"call_{second}"),
                ],
                usage=SMALL,
            ),
            Reply(text=f"read {first} and {second}", usage=SMALL),
        )
        args = ["run", "read two files"] if turn == 0 else ["run", "--continue", "read two more"]
        proc = workspace.run(*args)
        assert proc.returncode == 0, proc.stderr

    store = workspace.store()
    [session] = store.list_sessions()
    tools = {p.call_id: p for m in store.messages(session.id) for p in m.parts if isinstance(p, ToolPart)}
    sizes = {cid: round(len(p.state.output) / 4) for cid, p in tools.items()}
    # Preconditions of the hand computation below: every output is 10.5k-13k estimated tokens.
    assert all(10_500 <= size <= 13_000 for size in sizes.values()), sizes
    # After turn 5, walking newest→oldest past the two newest turns (i, j and g, h): f, e, d stay
    # within 40k; c crosses it and is cleared with everything older (b, a): 3 outputs > 20k, applied.
    # After turn 4 only a crossed, and one output is not > 20k: nothing was pruned then.
    pruned = {cid for cid, p in tools.items() if p.state.time.compacted}
    assert pruned == {"call_a", "call_b", "call_c"}

    fake_llm.push(Reply(text="done", usage=SMALL))
    proc = workspace.run("run", "--continue", "summarise what you read")
    assert proc.returncode == 0, proc.stderr
    body = fake_llm.chat_requests()[-1].body
    results = {m["tool_call_id"]: m["content"] for m in _messages(body) if m["role"] == "tool"}
    assert {cid for cid, text in results.items() if text == PRUNED_PLACEHOLDER} == pruned
    assert set(results) - pruned, "no output was left unpruned to compare"
    for cid in set(results) - pruned:
        assert results[cid] == tools[cid].state.output  # untouched outputs sent verbatim
    # Pruning deletes nothing: the outputs are still in the database, and browsable.
    assert all(tools[cid].state.output for cid in pruned)
    # (The sixth turn pruned again, up to the first already-pruned output: count from the database.)
    now_pruned = [
        p
        for m in store.messages(session.id)
        for p in m.parts
        if isinstance(p, ToolPart) and p.state.time.compacted
    ]
    assert len(now_pruned) > len(pruned)
    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0
    assert shown.stdout.count("hidden from the model (--full shows it)") == len(now_pruned)
    assert "a 0001" not in shown.stdout  # a.txt's content is hidden…
    full = workspace.run("sessions", "show", "--full", session.id)
    assert "a 0001" in full.stdout  # …and shown with --full


def _three_turns_then_overflow(
    ws: Workspace,
    fake_llm: FakeLLM,
    overflow: Reply | ErrorResponse,
    summary: str = "## Objective\n- keep answering questions",
) -> None:
    """Two ordinary turns played in-process, then the script for a third (CLI) turn that overflows."""
    ws.seed_turns(
        fake_llm,
        [
            ("first question", Reply(text="answer one", usage=SMALL)),
            ("second question", Reply(text="answer two", usage=SMALL)),
        ],
    )
    fake_llm.push(overflow, Reply(text=summary, usage=Usage(45_000, 200)))


def test_usage_overflow_compacts_onto_a_summary_and_continues(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    # OpenCode's transcript request: the head written out, the tail left out of it.
    workspace.write_config({"compaction": {"request": "transcript"}}, context=50_000, output=8_000)
    _three_turns_then_overflow(workspace, fake_llm, Reply(text="answer three", usage=Usage(42_500, 100)))
    fake_llm.push(Reply(text="carrying on", usage=Usage(3_000, 10)))
    proc = workspace.run("run", "--continue", "third question")
    assert proc.returncode == 0, proc.stderr
    assert "compacted" in proc.stderr
    # stdout is the answer; the summary streamed as progress on stderr.
    assert "carrying on" in proc.stdout and "keep answering questions" not in proc.stdout
    assert "keep answering questions" in proc.stderr

    requests = [r.body for r in fake_llm.chat_requests()]
    assert len(requests) == 5
    summary_req, after = requests[3], requests[4]
    assert _is_summary_request(summary_req) and "tool_choice" not in summary_req
    head = _text(summary_req["messages"][1])
    assert "first question" in head and "answer one" in head
    assert "second question" not in head and "third question" not in head  # the kept tail
    for section in (
        "## Objective",
        "## Important Details",
        "## Work State",
        "## Next Move",
        "## Relevant Files",
    ):
        assert section in head
    assert (
        "secret" in head.lower()
        or "credential" in head.lower()
        or "secret" in _text(summary_req["messages"][0]).lower()
    )

    msgs = _messages(after)
    assert msgs[0]["role"] == "system"
    assert (msgs[1]["role"], _text(msgs[1])) == ("user", SUMMARY_MARKER_TEXT)
    assert msgs[2]["role"] == "assistant" and "keep answering questions" in _text(msgs[2])
    assert [_text(m) for m in msgs[3:7]] == [
        "second question",
        "answer two",
        "third question",
        "answer three",
    ]
    assert msgs[7]["role"] == "user" and "Continue if you have next steps" in _text(msgs[7])
    # OpenCode's request, message for message; beyond it (agentcli's carryover, issue 17) the summarised
    # first question survives word for word in the block after the summary, and only there.
    summary_text, carried = split_summary(_text(msgs[2]))
    assert summary_text == "## Objective\n- keep answering questions"
    assert carried.startswith("<user-messages>") and "first question" in carried
    without_carryover = [*msgs[:2], {**msgs[2], "content": summary_text}, *msgs[3:]]
    assert len(msgs) == 8 and "first question" not in json.dumps(without_carryover)

    store = workspace.store()
    [session] = store.list_sessions()
    assert session.compactions == 1
    # The gauge figure is the new window's estimate, not the summary request's 45k usage.
    assert 0 < session.context_tokens < 5_000
    marker = next(m for m in store.messages(session.id) if m.compaction())
    part = marker.compaction()
    assert isinstance(part, CompactionPart) and part.auto and not part.overflow and part.tail_start_id

    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    assert (
        "auto" in shown.stdout
        and "keep answering questions" in shown.stdout
        and "first question" in shown.stdout
    )
    listed = json.loads(workspace.run("sessions", "list", "--json").stdout)
    assert listed[0]["compactions"] == 1


def test_provider_overflow_replays_the_question_after_the_compaction(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(context=50_000, output=8_000)
    _three_turns_then_overflow(workspace, fake_llm, ErrorResponse.context_length())
    fake_llm.push(Reply(text="third answer after compaction", usage=Usage(3_000, 10)))
    proc = workspace.run("run", "--continue", "third question")
    assert proc.returncode == 0, proc.stderr
    assert "third answer after compaction" in proc.stdout

    requests = [r.body for r in fake_llm.chat_requests()]
    assert len(requests) == 5  # no retry of the overflowing request
    assert _is_summary_request(requests[3])
    assert "third question" not in _text(requests[3]["messages"][1])
    msgs = _messages(requests[4])
    texts = [_text(m) for m in msgs]
    assert texts[1] == SUMMARY_MARKER_TEXT
    assert texts[-1] == "third question" and texts.count("third question") == 1
    assert not any("Continue if you have next steps" in t for t in texts)

    store = workspace.store()
    [session] = store.list_sessions()
    marker = next(m for m in store.messages(session.id) if m.compaction())
    assert marker.compaction().overflow  # type: ignore[union-attr]


def test_provider_overflow_with_autocompact_off_is_an_error(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"compaction": {"auto": False}}, context=50_000, output=8_000)
    fake_llm.push(ErrorResponse.context_length())
    proc = workspace.run("run", "hello")
    assert proc.returncode == 1
    assert "context" in proc.stderr.lower() and "Traceback" not in proc.stderr
    assert len(fake_llm.chat_requests()) == 1
    [session] = workspace.store().list_sessions()
    assert session.compactions == 0


def test_summary_request_that_overflows_falls_back_and_the_session_goes_on(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.write_config(context=50_000, output=8_000)
    workspace.seed_turns(
        fake_llm,
        [
            ("first question", Reply(text="answer one", usage=SMALL)),
            ("second question", Reply(text="answer two", usage=SMALL)),
        ],
    )
    parts_before = _part_count(workspace)
    fake_llm.push(
        ErrorResponse.context_length(),  # the turn's request
        Reply(text="answered after a fallback compaction", usage=Usage(2_000, 10)),
    )
    rejected = fake_llm.on(lambda r: _is_summary_request(r.body), ErrorResponse.context_length())
    proc = workspace.run("run", "--continue", "third question")
    fake_llm.off(rejected)
    assert proc.returncode == 0, proc.stderr
    assert "without a model" in proc.stderr and "Traceback" not in proc.stderr

    requests = [r.body for r in fake_llm.chat_requests()]
    summaries = [b for b in requests if _is_summary_request(b)]
    # The summary and its smaller retries (at most 3), none sent twice: each one smaller.
    assert 2 <= len(summaries) <= 4
    sizes = [len(json.dumps(b)) for b in summaries]
    assert sizes == sorted(set(sizes), reverse=True)
    final = _messages(requests[-1])
    assert _text(final[1]) == SUMMARY_MARKER_TEXT and "without a model" in _text(final[2]).lower()
    assert _text(final[-1]) == "third question"

    # Nothing deleted; the fallback is recorded like any compaction and shown.
    assert _part_count(workspace) > parts_before
    store = workspace.store()
    [session] = store.list_sessions()
    summary = next(
        m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage) and m.info.summary
    )
    assert summary.info.finish and any(isinstance(p, TextPart) and p.fallback for p in summary.parts)
    shown = workspace.run("sessions", "show", session.id)
    assert "without a model" in shown.stdout

    fake_llm.push(Reply(text="still here", usage=SMALL))
    again = workspace.run("run", "--continue", "are you there?")
    assert again.returncode == 0 and "still here" in again.stdout


def test_every_reply_overflowing_does_not_loop_forever(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config(context=50_000, output=8_000)
    workspace.seed_turns(
        fake_llm,
        [
            ("first question", Reply(text="one", usage=SMALL)),
            ("second question", Reply(text="two", usage=SMALL)),
        ],
    )
    fake_llm.fallback = Reply(text="huge again", usage=Usage(45_000, 10))  # every later reply overflows
    proc = workspace.run("run", "--continue", "third question", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "not compacting again" in proc.stderr
    requests = fake_llm.chat_requests()[2:]
    assert len([r for r in requests if _is_summary_request(r.body)]) <= 2
    assert len(requests) <= 5


def test_manual_compact_with_focus(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.seed_turns(
        fake_llm, [(f"question {i}", Reply(text=f"answer {i}", usage=SMALL)) for i in range(3)]
    )
    fake_llm.push(Reply(text="## Objective\n- parser work", usage=Usage(5_000, 300)))
    proc = workspace.run("compact", "--focus", "the parser bug")
    assert proc.returncode == 0, proc.stderr
    assert "→" in proc.stderr and "compacted" in proc.stderr
    summary_req = fake_llm.chat_requests()[-1].body
    assert _is_summary_request(summary_req) and "the parser bug" in _text(summary_req["messages"][-1])

    fake_llm.push(Reply(text="next", usage=SMALL))
    assert workspace.run("run", "--continue", "go on").returncode == 0
    msgs = _messages(fake_llm.chat_requests()[-1].body)
    assert _text(msgs[1]) == SUMMARY_MARKER_TEXT and "parser work" in _text(msgs[2])
    assert not any("Continue if you have next steps" in _text(m) for m in msgs)  # manual: no continue message
    assert _text(msgs[-1]) == "go on"


PLUGIN = """
from agentcli.plugins import hookimpl

@hookimpl
def session_compacting(input, output):
    output["prompt"] = "PLUGIN PROMPT: list only the file names"

@hookimpl
def compaction_autocontinue(input, output):
    output["enabled"] = False
"""

BLOCKER = """
from agentcli.plugins import hookimpl

@hookimpl
def session_compacting(input, output):
    output["block"] = True
"""


def test_plugin_replaces_prompt_and_disables_continue(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "myplugin.py").write_text(PLUGIN)
    workspace.write_config({"plugin": ["myplugin.py"]}, context=50_000, output=8_000)
    _three_turns_then_overflow(workspace, fake_llm, Reply(text="answer three", usage=Usage(42_500, 100)))
    proc = workspace.run("run", "--continue", "third question")
    assert proc.returncode == 0, proc.stderr
    requests = [r.body for r in fake_llm.chat_requests()]
    assert "PLUGIN PROMPT" in _text(requests[3]["messages"][-1])
    assert len(requests) == 4  # no continue message, so no request after the summary


def test_plugin_can_block_compaction(workspace: Workspace, fake_llm: FakeLLM) -> None:
    (workspace.project / "blocker.py").write_text(BLOCKER)
    workspace.write_config({"plugin": ["blocker.py"]}, context=50_000, output=8_000)
    fake_llm.push(Reply(text="answer one", usage=Usage(42_500, 10)))
    proc = workspace.run("run", "first question")
    assert proc.returncode == 0, proc.stderr
    assert "blocked" in proc.stderr
    assert not any(_is_summary_request(r.body) for r in fake_llm.chat_requests())
    fake_llm.push(Reply(text="answer two", usage=SMALL))
    assert workspace.run("run", "--continue", "second").returncode == 0
    msgs = _messages(fake_llm.chat_requests()[-1].body)
    assert SUMMARY_MARKER_TEXT not in [_text(m) for m in msgs]  # no dangling marker sent
    assert _text(msgs[1]) == "first question"


def test_summary_uses_agent_compaction_model(workspace: Workspace, fake_llm: FakeLLM) -> None:
    config = workspace.write_config(context=50_000, output=8_000)
    config["provider"]["fake"]["models"]["summarizer"] = {"limit": {"context": 200_000, "output": 4_000}}
    config["agent"] = {"compaction": {"model": "fake/summarizer"}}
    (workspace.project / "opencode.json").write_text(json.dumps(config))
    _three_turns_then_overflow(workspace, fake_llm, Reply(text="answer three", usage=Usage(42_500, 100)))
    fake_llm.push(Reply(text="carrying on", usage=Usage(3_000, 10)))
    proc = workspace.run("run", "--continue", "third question")
    assert proc.returncode == 0, proc.stderr
    models = [r.body["model"] for r in fake_llm.chat_requests()]
    assert models == ["test-model", "test-model", "test-model", "summarizer", "test-model"]
    assert fake_llm.chat_requests()[3].body.get("max_tokens") == 4_000  # the summarizer's own output limit
    store = workspace.store()
    [session] = store.list_sessions()
    summary = next(
        m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage) and m.info.summary
    )
    assert summary.info.model == "fake/summarizer" and summary.info.agent == "compaction"
