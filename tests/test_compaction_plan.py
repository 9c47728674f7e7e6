"""What a compaction decides: tail selection and summary input (PR5–PR9, PR17–PR20 of reference
§10.4, where the behaviour is selection or serialisation), replay, the request, the fallback compaction
and the shrinking of a summary request that is too long."""

from __future__ import annotations

import pytest

from agentcli.session.compaction.plan import (
    CONTINUE_TEXT,
    RETRY_TOOL_OUTPUT_MAX_CHARS,
    TOOL_OUTPUT_MAX_CHARS,
    build_summary_request,
    choose_replay,
    completed_compactions,
    continue_text,
    default_preserve_budget,
    fallback_compaction,
    hide_completed,
    previous_summary,
    replay_parts,
    select_tail,
    serialize_for_summary,
    shrink_for_retry,
)
from agentcli.session.request.history import filter_compacted
from agentcli.session.request.view import PRUNED_PLACEHOLDER, SUMMARY_MARKER_TEXT, estimate_messages
from agentcli.store.records import MessageError, ToolPart, WithParts
from tests.test_history import (
    assistant,
    compaction,
    file,
    ids,
    marker,
    step,
    summary_of,
    text,
    tool,
    user,
    window,
)


def summary_request_text(head: list[WithParts], previous: str | None = None) -> str:
    return build_summary_request(serialize_for_summary(head), previous, [], None, None)[1]["content"]


def test_default_preserve_budget() -> None:
    assert default_preserve_budget(0) == 2_000
    assert default_preserve_budget(7_999) == 2_000
    assert default_preserve_budget(20_000) == 5_000
    assert default_preserve_budget(100_000) == 15_000  # §14: 15k cap, not 1.15's 8k


# --- earlier compactions -------------------------------------------------------------------------


def test_previous_summary_is_the_newest_completed_one_trimmed() -> None:
    c1 = marker()
    s1 = summary_of(c1, "summary one")
    c2 = marker()
    s2 = assistant(c2, "  part a \n", text(""), "part b  ", summary=True)
    c3 = marker()
    failed = summary_of(c3, "broken", error=MessageError(name="APIError", message="x"))
    history = [user("go"), c1, s1, user("more"), c2, s2, c3, failed]
    assert [(m.id, s.id) for m, s in completed_compactions(history)] == [(c1.id, s1.id), (c2.id, s2.id)]
    assert previous_summary(history) == "part a\n\npart b"
    assert previous_summary([user("go")]) is None


def test_hide_completed_keeps_unfinished_compactions() -> None:
    u = user("go")
    c1 = marker()
    s1 = summary_of(c1)
    c2 = marker()
    unfinished = summary_of(c2, finish=None)
    assert ids(hide_completed([u, c1, s1, c2, unfinished])) == ids([u, c2, unfinished])


# --- the verbatim tail --------------------------------------------------------------------


def test_pr5_recent_turns_are_kept() -> None:
    first, second, third = user("first"), user("second"), user("third")
    chosen = select_tail([first, second, third], tail_turns=2, budget=10_000)
    assert chosen.tail_start_id == second.id
    assert ids(chosen.head) == [first.id]


def test_pr6_tail_shrinks_to_the_budget() -> None:
    tiny = user("tiny")
    chosen = select_tail([user("first"), user("x" * 2000), tiny], tail_turns=2, budget=100)
    assert chosen.tail_start_id == tiny.id


def test_pr7_full_summary_when_one_turn_is_too_big() -> None:
    history = [user("first"), user("y" * 2000)]
    chosen = select_tail(history, tail_turns=1, budget=20)
    assert chosen.tail_start_id is None
    assert ids(chosen.head) == ids(history)
    assert "yyyy" in summary_request_text(chosen.head)


def test_pr8_media_count_when_sizing_but_not_in_the_summary_input() -> None:
    url = "data:image/png;base64," + "a" * 4000
    history = [user("older"), user("recent image turn", file("image/png", url, "big.png"))]
    chosen = select_tail(history, tail_turns=1, budget=100)
    assert chosen.tail_start_id is None
    sent = summary_request_text(chosen.head)
    assert "recent image turn" in sent
    assert "Attached image/png: big.png" in sent
    assert "aaaa" not in sent


def test_pr9_split_turn_suffix_is_kept() -> None:
    older = user("older")
    r = user("recent turn")
    big = assistant(r, "z" * 2000)
    k = assistant(r, "keep tail")
    chosen = select_tail([older, r, big, k], tail_turns=1, budget=100)
    assert chosen.tail_start_id == k.id
    sent = summary_request_text(chosen.head)
    assert "zzzz" in sent and "keep tail" not in sent
    p = marker(tail_start_id=chosen.tail_start_id)
    s = summary_of(p)
    result = window(older, r, big, k, p, s)
    assert ids(result)[:3] == [p.id, s.id, k.id]
    assert result[1].info.summary is True  # type: ignore[union-attr]
    assert big.id not in ids(result)


def test_nothing_is_kept_when_the_tail_would_be_the_whole_history() -> None:
    a, b = user("a"), user("b")
    history = [a, b, assistant(b, "reply")]
    chosen = select_tail(history, tail_turns=2, budget=10_000)
    assert chosen.tail_start_id is None
    assert ids(chosen.head) == ids(history)


def test_no_tail_turns_means_summarise_everything() -> None:
    history = [user("a"), user("b")]
    assert select_tail(history, tail_turns=0, budget=10_000).tail_start_id is None


def test_pr17_only_the_head_is_summarised() -> None:
    history = [user("older context"), user("keep this turn"), user("and this one too")]
    chosen = select_tail(history, tail_turns=None, budget=default_preserve_budget(68_000))
    sent = summary_request_text(chosen.head)
    assert "older context" in sent
    for absent in ("keep this turn", "and this one too", SUMMARY_MARKER_TEXT):
        assert absent not in sent


def test_pr18_repeated_compaction_merges_the_previous_summary() -> None:
    older, keep = user("older context"), user("keep this turn")
    c1 = marker(tail_start_id=keep.id)
    s1 = summary_of(c1, "summary one")
    latest_turn = user("latest turn")
    c2 = marker()
    history = window(older, keep, c1, s1, latest_turn, c2)[:-1]  # the marker being processed is not history
    chosen = select_tail(hide_completed(history), tail_turns=2, budget=10_000)
    sent = summary_request_text(chosen.head, previous_summary(history))
    assert "<previous-summary>" in sent
    assert sent.count("summary one") == 1
    assert "## Work State" in sent and "## Next Move" in sent


def test_pr19_recent_turns_survive_repeated_compactions() -> None:
    u1, u2, u3 = user("one"), user("two"), user("three")
    first = select_tail([u1, u2, u3], tail_turns=2, budget=10_000)
    assert first.tail_start_id == u2.id
    c1 = marker(tail_start_id=first.tail_start_id)
    s1 = summary_of(c1)
    u4 = user("four")
    c2_probe = marker()
    history = window(u1, u2, u3, c1, s1, u4, c2_probe)[:-1]
    second = select_tail(hide_completed(history), tail_turns=2, budget=10_000)
    assert second.tail_start_id == u3.id
    c2 = marker(tail_start_id=second.tail_start_id)
    s2 = summary_of(c2)
    final = window(u1, u2, u3, c1, s1, u4, c2, s2)
    assert ids(final) == ids([c2, s2, u3, c1, s1, u4])


def test_pr20_previous_summaries_are_not_sized() -> None:
    older = user("older")
    k = user("keep this turn")
    k_reply = assistant(k, "keep reply")
    c1 = marker()
    s1 = summary_of(c1, "summary " * 800)
    recent = user("recent turn")
    recent_reply = assistant(recent, "recent reply")
    history = [older, k, k_reply, c1, s1, recent, recent_reply]
    assert select_tail(hide_completed(history), tail_turns=2, budget=500).tail_start_id == k.id
    # Sized with the old summary inside K's turn, K's turn would not fit.
    assert select_tail(history, tail_turns=2, budget=500).tail_start_id != k.id


# --- replay -------------------------------------------------------------------------------


def test_pr11_the_prior_user_turn_is_replayed_with_media_as_notes() -> None:
    root = user("root")
    x = user("image", file("image/png", "https://example.com/cat.png", "cat.png"))
    current = user("current")
    replay, before = choose_replay([root, x, current], current.id)
    assert replay is x and ids(before) == [root.id]
    parts = replay_parts(x)
    assert [p["type"] for p in parts] == ["text", "text"]
    assert parts[0]["text"] == "image"
    assert parts[1]["text"] == "[Attached image/png: cat.png]"
    assert all("id" not in p for p in parts)


def test_replay_after_a_provider_overflow_drops_the_failed_answer() -> None:
    first = user("first")
    reply = assistant(first, "done")
    last = user("the big request", file("application/pdf", "data:application/pdf;base64,JVBE", "a.pdf"))
    failed = assistant(last, finish=None)
    c = marker(auto=True, overflow=True)
    replay, before = choose_replay([first, reply, last, failed, c], c.id)
    assert replay is last
    assert ids(before) == [first.id, reply.id]
    assert [p["type"] for p in replay_parts(last)] == ["text", "text"]


def test_replay_keeps_non_media_files_and_drops_compaction_parts() -> None:
    u = user("see", file("text/plain", "file:///a.txt", "a.txt"), compaction())
    assert [p["type"] for p in replay_parts(u)] == ["text", "file"]


def test_pr12_no_replay_without_earlier_context() -> None:
    earlier, current = user("earlier"), user("current")
    replay, before = choose_replay([earlier, current], current.id)
    assert replay is None and ids(before) == [earlier.id, current.id]


def test_pr1_parent_must_be_a_user_message() -> None:
    hello = user("hello")
    reply = assistant(hello, "hi")
    with pytest.raises(ValueError, match=f"Compaction parent must be a user message: {reply.id}"):
        choose_replay([hello, reply], reply.id)


def test_continue_text() -> None:
    assert continue_text(False) == CONTINUE_TEXT
    assert "Continue if you have next steps" in CONTINUE_TEXT
    with_note = continue_text(True)
    assert with_note.endswith(CONTINUE_TEXT) and "media" in with_note.split(CONTINUE_TEXT)[0]


# --- the summary request ------------------------------------------------------------------


def test_serialisation_of_each_kind_of_part() -> None:
    u = user("fix the bug", file("image/png", "data:image/png;base64,AAAA", "shot.png"))
    a = assistant(
        u,
        step(),
        "Looking.",
        tool("read", "r" * 2500, input={"filePath": "src/app.py"}),
        tool("bash", "hidden", compacted=1),
        tool("bash", status="error", output="", error="command not found"),
        tool("bash", status="running", output=""),
    )
    c = marker()
    s = summary_of(c, "old summary")
    nudge = user(text(CONTINUE_TEXT, synthetic=True, metadata={"compaction_continue": True}))
    out = serialize_for_summary([u, a, c, s, nudge])
    blocks = out.split("\n\n")
    assert blocks[0] == "[User]: fix the bug\n[User]: [Attached image/png: shot.png]"
    lines = blocks[1].split("\n")
    assert lines[0] == "[Assistant]: Looking."
    assert lines[1] == '[Assistant tool call]: read({"filePath": "src/app.py"})'
    assert lines[2] == "[Tool result]: " + "r" * TOOL_OUTPUT_MAX_CHARS
    assert lines[3] == "[Tool output truncated for compaction: omitted 500 chars]"
    assert lines[5] == f"[Tool result]: {PRUNED_PLACEHOLDER}"
    assert lines[7] == "[Tool error]: command not found"
    assert lines[9] == "[Tool result]: [Tool execution was interrupted]"
    assert len(blocks) == 2  # marker, summary and the synthetic nudge are left out
    assert "AAAA" not in out and "hidden" not in out


def test_errored_assistant_is_not_serialised() -> None:
    u = user("go")
    bad = assistant(u, "garbage", error=MessageError(name="APIError", message="x"))
    assert serialize_for_summary([u, bad]) == "[User]: go"


def test_request_is_system_then_user_in_order() -> None:
    messages = build_summary_request(
        "[User]: hello", "earlier facts", ["PLUGIN CONTEXT"], "the database layer", None
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    system, body = messages[0]["content"], messages[1]["content"]
    assert "secret" in system.lower() and "api key" in system.lower()
    assert "tool" in system.lower()
    order = [
        "<conversation>\n[User]: hello\n</conversation>",
        "<previous-summary>\nearlier facts\n</previous-summary>",
        "## Objective",
        "## Important Details",
        "## Work State",
        "### Completed",
        "### Active",
        "### Blocked",
        "## Next Move",
        "## Relevant Files",
        "The user asked the summary to focus on: the database layer",
        "PLUGIN CONTEXT",
    ]
    positions = [body.index(marker_text) for marker_text in order]
    assert positions == sorted(positions)


def test_request_without_previous_summary_or_focus() -> None:
    body = build_summary_request("[User]: hello", None, [], None, None)[1]["content"]
    assert "<previous-summary>" not in body and "focus on" not in body


def test_prompt_override_replaces_the_instructions_only() -> None:
    body = build_summary_request("[User]: hello", "old", ["PLUGIN CONTEXT"], None, "Just list the files.")[1][
        "content"
    ]
    assert "<conversation>\n[User]: hello\n</conversation>" in body
    assert "<previous-summary>\nold\n</previous-summary>" in body
    assert body.endswith("Just list the files.")
    assert "## Objective" not in body and "PLUGIN CONTEXT" not in body


# --- shrinking and the fallback compaction -----------------------------------------------------


def test_shrink_for_retry() -> None:
    head = [user(f"m{i}") for i in range(8)]
    assert shrink_for_retry(head, 0) == (head, TOOL_OUTPUT_MAX_CHARS)
    assert shrink_for_retry(head, 1) == (head, RETRY_TOOL_OUTPUT_MAX_CHARS)
    assert shrink_for_retry(head, 2) == (head[4:], RETRY_TOOL_OUTPUT_MAX_CHARS)
    assert shrink_for_retry(head, 3) == (head[6:], RETRY_TOOL_OUTPUT_MAX_CHARS)
    assert shrink_for_retry(head, 10) == (head[7:], RETRY_TOOL_OUTPUT_MAX_CHARS)
    assert shrink_for_retry(head[:5], 2)[0] == head[2:5]  # the newest half, rounded up
    assert shrink_for_retry([], 3) == ([], RETRY_TOOL_OUTPUT_MAX_CHARS)
    with pytest.raises(ValueError):
        shrink_for_retry(head, -1)


def test_retry_cap_reaches_the_serialisation() -> None:
    u = user("go")
    a = assistant(u, tool(output="o" * 800))
    head, cap = shrink_for_retry([u, a], 1)
    assert "omitted 300 chars" in serialize_for_summary(head, cap)


def _long_session(turns: int) -> list[WithParts]:
    msgs: list[WithParts] = []
    for n in range(1, turns + 1):
        u = user(f"request number {n}: " + "please " * 100)
        msgs += [u, assistant(u, f"answer {n}", tool("read", "c" * 8000, input={"filePath": f"src/f{n}.py"}))]
    return msgs


def _tool_ids(msgs: list[WithParts]) -> list[str]:
    return [p.id for m in msgs for p in m.parts if isinstance(p, ToolPart)]


def _stamped(msgs: list[WithParts], part_ids: list[str]) -> list[WithParts]:
    """The messages as the model sees them once the given tool parts are pruned."""

    def stamp(p: ToolPart) -> ToolPart:
        time = p.state.time.model_copy(update={"compacted": 1})
        return p.model_copy(update={"state": p.state.model_copy(update={"time": time})})

    return [
        m.model_copy(update={"parts": [stamp(p) if p.id in part_ids else p for p in m.parts]})  # type: ignore[arg-type]
        for m in msgs
    ]


def test_fallback_keeps_what_fits_and_clears_older_outputs() -> None:
    msgs = _long_session(10)
    plan = fallback_compaction(msgs, budget=2_500, tail_turns=2)
    assert plan.tail_start_id is not None
    start = ids(msgs).index(plan.tail_start_id)
    assert msgs[start].role == "user" and start > 0  # whole turns left out, oldest first
    intact = select_tail(msgs, tail_turns=2, budget=2_500)
    intact_start = len(intact.head)
    assert start < intact_start  # more than the intact tail stays, with its outputs cleared
    assert plan.prune_part_ids == _tool_ids(msgs[start:intact_start])
    # What the model will see after the compaction fits the budget; one more turn would not.
    one_more = msgs[start - 2 : start]
    assert estimate_messages(_stamped(msgs[start:], plan.prune_part_ids)) <= 2_500
    assert (
        estimate_messages(_stamped(one_more + msgs[start:], plan.prune_part_ids + _tool_ids(one_more)))
        > 2_500
    )
    text_ = plan.summary_text
    assert text_.startswith("# Session summary (made without a model)")
    assert text_.index("1. request number 1") < text_.index("10. request number 10")
    assert "- src/f1.py" in text_ and "- src/f10.py" in text_
    assert "answer 10" in text_
    left = start // 2
    assert f"Turns 1–{left} of 10 are left out" in text_
    assert all(len(line) < 320 for line in text_.splitlines())


def test_fallback_when_nothing_fits_keeps_nothing_and_carries_the_old_summary() -> None:
    c = marker()
    s = summary_of(c, "EARLIER FACTS")
    u = user("huge " * 3000)
    msgs = [c, s, u, assistant(u, "x" * 40_000)]
    plan = fallback_compaction(msgs, budget=500, tail_turns=2)
    assert plan.tail_start_id is None and plan.prune_part_ids == []
    assert "EARLIER FACTS" in plan.summary_text
    assert "Turns 1–1 of 1 are left out; none of them are" in plan.summary_text
    assert len(plan.summary_text) < 3_000


def test_fallback_keeps_the_intact_tail_when_nothing_older_fits() -> None:
    huge = user("words " * 4000)  # not a tool output: clearing cannot shrink it
    small = user("small")
    plan = fallback_compaction([huge, small, assistant(small, "ok", tool())], budget=500, tail_turns=1)
    assert plan.tail_start_id == small.id
    assert plan.prune_part_ids == []
    assert "Turns 1–1 of 2 are left out; the later ones are still in the context." in plan.summary_text


def test_fallback_of_a_small_session_keeps_it_all() -> None:
    u = user("hi")
    a = assistant(u, "hello", tool(output="short"))
    u2 = user("again")
    plan = fallback_compaction([u, a, u2], budget=10_000, tail_turns=1)
    assert plan.tail_start_id == u.id
    assert plan.prune_part_ids == _tool_ids([a])
    assert "left out" not in plan.summary_text


def test_filter_compacted_after_a_fallback_compaction() -> None:
    msgs = _long_session(6)
    plan = fallback_compaction(msgs, budget=2_000, tail_turns=1)
    c = marker(tail_start_id=plan.tail_start_id)
    s = summary_of(c, plan.summary_text)
    seen = filter_compacted(reversed([*msgs, c, s]))
    assert ids(seen)[:3] == [c.id, s.id, plan.tail_start_id]


def test_a_window_with_no_user_turn_keeps_no_tail_instead_of_crashing() -> None:
    """/compact right after a compaction: the window is the summary alone (found by the history fuzz)."""
    c = marker()
    s = summary_of(c, "summary one")
    chosen = select_tail([c, s], tail_turns=2, budget=10_000)
    assert chosen.tail_start_id is None and [m.id for m in chosen.head] == [c.id, s.id]
