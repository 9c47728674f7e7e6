"""The model's view of a session: filter_compacted (F1–F12), latest (L1–L2), to_model_messages
(M1–M20 adapted to chat-completions), the token estimate (T1–T3). Reference §4 and §10.

The record builders at the top are shared with test_prune and test_compaction_plan.
F8 (fork remaps tail_start_id) is not ported: agentcli has no fork.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agentcli.llm.tokens import estimate as _estimate
from agentcli.session.request.history import INTERRUPTED_TEXT, filter_compacted, latest
from agentcli.session.request.view import PRUNED_PLACEHOLDER, SUMMARY_MARKER_TEXT, to_model_messages
from agentcli.store.ids import ascending
from agentcli.store.records import (
    AssistantMessage,
    Attachment,
    CompactionPart,
    FilePart,
    MessageError,
    Part,
    ReasoningPart,
    StepStartPart,
    TextPart,
    ToolPart,
    ToolState,
    ToolTime,
    UserMessage,
    WithParts,
)

# --- record builders (ids from ascending(), so creation order is history order) -------------

SES = "ses_test"
MODEL = "test/test-model"
PartMaker = Callable[[str], Part]


def _ids(mid: str) -> dict[str, str]:
    return {"id": ascending("prt"), "session_id": SES, "message_id": mid}


def text(value: str, **fields: Any) -> PartMaker:
    return lambda mid: TextPart(**_ids(mid), text=value, **fields)


def reasoning(value: str) -> PartMaker:
    return lambda mid: ReasoningPart(**_ids(mid), text=value)


def file(mime: str, url: str, filename: str | None = None) -> PartMaker:
    return lambda mid: FilePart(**_ids(mid), mime=mime, url=url, filename=filename)


def step() -> PartMaker:
    return lambda mid: StepStartPart(**_ids(mid))


def compaction(*, auto: bool = False, overflow: bool = False, tail_start_id: str | None = None) -> PartMaker:
    return lambda mid: CompactionPart(**_ids(mid), auto=auto, overflow=overflow, tail_start_id=tail_start_id)


def tool(
    name: str = "bash",
    output: str = "ok",
    *,
    input: dict[str, Any] | None = None,
    status: str = "completed",
    compacted: int | None = None,
    error: str | None = None,
    metadata: dict[str, Any] | None = None,
    attachments: list[Attachment] | None = None,
) -> PartMaker:
    state = ToolState(
        status=status,  # type: ignore[arg-type]
        input=input if input is not None else {"command": "ls"},
        output=output,
        error=error,
        metadata=metadata or {},
        time=ToolTime(compacted=compacted),
        attachments=attachments or [],
    )
    return lambda mid: ToolPart(**_ids(mid), call_id=f"call_{ascending('prt')[-8:]}", tool=name, state=state)


def user(*parts: str | PartMaker, model: str | None = MODEL) -> WithParts:
    mid = ascending("msg")
    made = [text(p)(mid) if isinstance(p, str) else p(mid) for p in parts]
    return WithParts(info=UserMessage(id=mid, session_id=SES, model=model), parts=made)


def marker(**fields: Any) -> WithParts:
    return user(compaction(**fields))


def assistant(
    parent: WithParts,
    *parts: str | PartMaker,
    finish: str | None = "stop",
    summary: bool = False,
    error: MessageError | None = None,
    model: str | None = MODEL,
) -> WithParts:
    mid = ascending("msg")
    info = AssistantMessage(
        id=mid, session_id=SES, parent_id=parent.id, finish=finish, summary=summary, error=error, model=model
    )
    made = [text(p)(mid) if isinstance(p, str) else p(mid) for p in parts]
    return WithParts(info=info, parts=made)


def summary_of(marker_msg: WithParts, body: str = "the summary", **fields: Any) -> WithParts:
    return assistant(marker_msg, body, summary=True, **fields)


def window(*chronological: WithParts) -> list[WithParts]:
    """filter_compacted fed newest first, as the store will."""
    return filter_compacted(reversed(chronological))


def ids(msgs: list[WithParts]) -> list[str]:
    return [m.id for m in msgs]


# --- token estimate -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tokens"),
    [
        ("x" * 4000, 1000),  # T1
        ("y" * 20000, 5000),  # T2
        ("", 0),  # T3
        ("ab", 1),  # 0.5 rounds up, like JS Math.round
        ("abcdef", 2),  # 1.5 → 2
        ("a" * 10, 3),  # 2.5 → 3 (Python's round() would say 2)
        ("😀" * 2, 1),  # UTF-16: each emoji is two code units, 4 units → 1
        ("é" * 6, 2),  # non-ASCII but one unit each
    ],
)
def test_estimate_is_js_round_of_utf16_length_over_4(value: str, tokens: int) -> None:
    assert _estimate(value) == tokens


# --- filter_compacted -----------------------------------------------------------------------


def test_f1_without_compaction_everything_in_order() -> None:
    msgs = [user(f"u{i}") for i in range(5)]
    assert ids(window(*msgs)) == ids(msgs)


def test_f2_completed_compaction_is_the_cut_off() -> None:
    old = user("ancient")
    u1 = user("first question", compaction())
    a1 = summary_of(u1, finish="end_turn")
    u2 = user("second")
    a2 = assistant(u2, "reply")
    result = window(old, u1, a1, u2, a2)
    assert len(result) == 4
    assert result[0].id == u1.id


def test_f3_empty() -> None:
    assert filter_compacted([]) == []


def test_f4_marker_without_summary_is_no_cut_off() -> None:
    u1 = marker()
    u2 = user("world")
    assert ids(window(u1, u2)) == [u1.id, u2.id]


def test_f5_summary_with_error_does_not_complete_the_compaction() -> None:
    u1 = marker()
    s = summary_of(u1, error=MessageError(name="APIError", message="boom"))
    u2 = user("next")
    assert len(window(u1, s, u2)) == 3


def test_f6_unfinished_summary_does_not_complete_the_compaction() -> None:
    u1 = marker()
    s = summary_of(u1, finish=None)
    u2 = user("next")
    assert len(window(u1, s, u2)) == 3


def test_f7_summary_goes_before_the_kept_tail() -> None:
    u1 = user("one")
    a1 = assistant(u1, "r1")
    u2 = user("two")
    a2 = assistant(u2, "r2")
    c1 = marker(tail_start_id=u2.id)
    s1 = summary_of(c1)
    u3 = user("three")
    a3 = assistant(u3, "r3")
    assert ids(window(u1, a1, u2, a2, c1, s1, u3, a3)) == ids([c1, s1, u2, a2, u3, a3])


def test_f9_tail_starting_inside_a_turn() -> None:
    u1 = user("one")
    a1 = assistant(u1, "r1")
    u2 = user("two")
    a2 = assistant(u2, "r2")
    a3 = assistant(u2, "r3")
    c1 = marker(tail_start_id=a3.id)
    s1 = summary_of(c1)
    u3 = user("three")
    a4 = assistant(u3, "r4")
    assert ids(window(u1, a1, u2, a2, a3, c1, s1, u3, a4)) == ids([c1, s1, a3, u3, a4])


def test_f10_two_compactions_only_the_newest_counts() -> None:
    u1, a1 = (u := user("one")), assistant(u, "r1")
    u2, a2 = (u := user("two")), assistant(u, "r2")
    c1 = marker(tail_start_id=u2.id)
    s1 = summary_of(c1)
    u3, a3 = (u := user("three")), assistant(u, "r3")
    c2 = marker(tail_start_id=u3.id)
    s2 = summary_of(c2)
    u4, a4 = (u := user("four")), assistant(u, "r4")
    result = window(u1, a1, u2, a2, c1, s1, u3, a3, c2, s2, u4, a4)
    assert ids(result) == ids([c2, s2, u3, a3, u4, a4])


def test_f11_f12_plain_list_equals_reversed_input_without_compaction() -> None:
    msgs = [user("a"), user("b"), user("c")]
    newest_first = list(reversed(msgs))
    assert filter_compacted(newest_first) == list(reversed(newest_first))


def test_consumes_lazily_and_stops_at_the_cut_off() -> None:
    older = user("never read")
    c1 = marker()
    s1 = summary_of(c1)
    u2 = user("after")

    def pages() -> Iterator[WithParts]:
        yield from (u2, s1, c1)
        raise AssertionError("read past the cut-off")
        yield older  # pragma: no cover

    assert ids(filter_compacted(pages())) == ids([c1, s1, u2])


def test_retained_tail_reads_no_further_than_the_tail_start() -> None:
    u1 = user("old")
    u2 = user("kept")
    c1 = marker(tail_start_id=u2.id)
    s1 = summary_of(c1)

    def pages() -> Iterator[WithParts]:
        yield from (s1, c1, u2)
        raise AssertionError("read past the tail start")
        yield u1  # pragma: no cover

    assert ids(filter_compacted(pages())) == ids([c1, s1, u2])


def test_tail_starting_at_the_marker_itself_stops_there() -> None:
    c1 = marker()
    c1.parts[0].tail_start_id = c1.id  # type: ignore[union-attr]
    s1 = summary_of(c1)
    u2 = user("after")

    def pages() -> Iterator[WithParts]:
        yield from (u2, s1, c1)
        raise AssertionError("read past the marker")

    assert ids(filter_compacted(pages())) == ids([c1, s1, u2])


# --- latest ---------------------------------------------------------------------------------


def _l_fixture() -> list[WithParts]:
    m1 = user("tail")
    m2 = assistant(m1, tool(), finish="tool-calls")
    m3 = marker(auto=True, tail_start_id=m1.id)
    m4 = summary_of(m3, finish="stop")
    m5 = user(text("Continue", synthetic=True))
    return [m1, m2, m3, m4, m5]


def test_l1_latest_by_id_not_position() -> None:
    m1, m2, m3, m4, m5 = _l_fixture()
    filtered = window(m1, m2, m3, m4, m5)
    assert ids(filtered) == ids([m3, m4, m1, m2, m5])
    found = latest(filtered)
    assert found.finished is not None and found.finished.id == m4.id
    assert found.finished.info.summary is True  # type: ignore[union-attr]
    assert found.user is not None and found.user.id == m5.id
    assert found.assistant is not None and found.assistant.id == m4.id
    assert found.tasks == []


def test_l2_pending_compaction_is_a_task() -> None:
    msgs = [*_l_fixture(), marker(auto=True)]
    found = latest(msgs)
    assert found.finished is not None and found.finished.id == msgs[3].id
    assert found.user is not None and found.user.id == msgs[5].id
    assert len(found.tasks) == 1 and found.tasks[0].auto is True


def test_latest_of_nothing() -> None:
    found = latest([])
    assert (found.user, found.assistant, found.finished, found.tasks) == (None, None, None, [])


# --- to_model_messages ----------------------------------------------------------------------


def test_m1_message_without_parts_dropped() -> None:
    assert to_model_messages([user(), user("hello")]) == [{"role": "user", "content": "hello"}]


def test_m2_m3_ignored_or_empty_text_only_gives_nothing() -> None:
    assert to_model_messages([user(text("skip me", ignored=True))]) == []
    assert to_model_messages([user("")]) == []


def test_m4_empty_texts_dropped_others_kept() -> None:
    assert to_model_messages([user("", "hello")]) == [{"role": "user", "content": "hello"}]


def test_m5_synthetic_text_is_kept() -> None:
    u = user(text("hello", synthetic=True))
    a = assistant(u, text("assistant", synthetic=True))
    assert to_model_messages([u, a]) == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "assistant"},
    ]


def test_m6_user_parts() -> None:
    u = user(
        "hello",
        text("hidden", ignored=True),
        file("image/png", "https://example.com/img.png", "img.png"),
        file("text/plain", "file:///a.txt", "a.txt"),
        file("application/x-directory", "file:///dir", "dir"),
        compaction(),
    )
    assert to_model_messages([u]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image_url", "image_url": {"url": "https://example.com/img.png"}},
                {"type": "text", "text": SUMMARY_MARKER_TEXT},
            ],
        }
    ]


def test_non_image_file_is_a_file_item() -> None:
    u = user("read this", file("application/pdf", "data:application/pdf;base64,JVBE", "doc.pdf"))
    content = to_model_messages([u])[0]["content"]
    assert content[1] == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBE", "filename": "doc.pdf"},
    }


def test_strip_media_turns_media_into_a_note() -> None:
    u = user("look", file("image/png", "data:image/png;base64,AAAA", "cat.png"), file("image/jpeg", "x"))
    assert to_model_messages([u], strip_media=True) == [
        {"role": "user", "content": "look\n\n[Attached image/png: cat.png]\n\n[Attached image/jpeg: file]"}
    ]


def test_media_a_model_does_not_take_goes_as_opencodes_error_text() -> None:
    u = user(
        "look",
        file("image/png", "data:image/png;base64,AAAA", "cat.png"),
        file("application/pdf", "data:application/pdf;base64,JVBE", "doc.pdf"),
        file("image/jpeg", "data:image/jpeg;base64,"),
    )
    [text_only] = to_model_messages([u], media=frozenset())
    assert text_only["content"] == "\n\n".join(
        [
            "look",
            'ERROR: Cannot read "cat.png" (this model does not support image input). Inform the user.',
            'ERROR: Cannot read "doc.pdf" (this model does not support pdf input). Inform the user.',
            "ERROR: Image file is empty or corrupted. Please provide a valid image.",
        ]
    )
    [images_only] = to_model_messages([u], media=frozenset({"image"}))
    kinds = [item["type"] for item in images_only["content"]]
    assert kinds == ["text", "image_url", "text", "text"]
    assert "does not support pdf input" in images_only["content"][2]["text"]


def _tool_results(msgs: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in msgs if m["role"] == "tool"]


def test_tool_call_and_result_shape() -> None:
    u = user("list")
    a = assistant(u, "done", tool("bash", "a.txt\nb.txt", input={"command": "ls", "timeout": 5}))
    call_id = a.parts[1].call_id  # type: ignore[union-attr]
    assert to_model_messages([u, a])[1:] == [
        {
            "role": "assistant",
            "content": "done",
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": "ls", "timeout": 5})},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": "a.txt\nb.txt"},
    ]


def test_assistant_with_only_tool_calls_has_no_content() -> None:
    u = user("go")
    out = to_model_messages([u, assistant(u, tool())])
    assert out[1]["content"] is None and len(out[1]["tool_calls"]) == 1


def test_m11_compacted_output_is_the_placeholder_and_attachments_go() -> None:
    u = user("go")
    png = Attachment(mime="image/png", url="data:image/png;base64,Zm9v")
    a = assistant(u, tool(output="this should be cleared", compacted=1, attachments=[png]))
    out = to_model_messages([u, a])
    assert _tool_results(out) == [PRUNED_PLACEHOLDER]
    assert len(out) == 3  # no media message


def test_m12_truncation() -> None:
    u = user("go")
    a = assistant(u, tool(output="abcdefghij"))
    out = to_model_messages([u, a], tool_output_max_chars=4)
    assert _tool_results(out) == ["abcd\n[Tool output truncated for compaction: omitted 6 chars]"]
    assert _tool_results(to_model_messages([u, a])) == ["abcdefghij"]


def test_m13_error_text() -> None:
    u = user("go")
    a = assistant(u, tool(status="error", output="", error="nope"))
    assert _tool_results(to_model_messages([u, a])) == ["nope"]


def test_m14_interrupted_bash_sends_its_partial_output() -> None:
    u = user("go")
    meta = {"interrupted": True, "output": "partial lines"}
    a = assistant(u, tool(status="error", error="aborted", metadata=meta))
    assert _tool_results(to_model_messages([u, a])) == ["partial lines"]


def test_m15_assistant_with_api_error_dropped() -> None:
    u = user("go")
    a = assistant(u, "half", error=MessageError(name="APIError", message="x"))
    assert to_model_messages([a]) == []


def test_m16_aborted_assistant_kept_only_with_content() -> None:
    u = user("go")
    aborted = MessageError(name="MessageAbortedError", message="aborted")
    kept = assistant(u, reasoning("thinking"), "partial answer", error=aborted)
    dropped = assistant(u, step(), reasoning("thinking"), error=aborted)
    assert to_model_messages([kept, dropped]) == [{"role": "assistant", "content": "partial answer"}]


def test_reasoning_dropped_for_same_model_and_text_for_another() -> None:
    u = user("go")
    a = assistant(u, "done", reasoning("thinking"), reasoning("   "), tool(), model="other/model")
    same = to_model_messages([a], target_model="other/model")
    other = to_model_messages([a], target_model=MODEL)
    assert same[0]["content"] == "done"
    assert other[0]["content"] == "done\n\nthinking"
    assert len(other[0]["tool_calls"]) == 1


def test_m18_step_start_splits_the_assistant_message() -> None:
    u = user("go")
    a = assistant(u, step(), "first", step(), "second")
    assert to_model_messages([a]) == [
        {"role": "assistant", "content": "first"},
        {"role": "assistant", "content": "second"},
    ]


def test_m19_only_step_start_gives_nothing() -> None:
    assert to_model_messages([assistant(user("go"), step())]) == []


def test_m20_pending_and_running_calls_get_the_interrupted_result() -> None:
    u = user("go")
    a = assistant(u, tool(status="pending", output=""), tool(status="running", output=""))
    out = to_model_messages([a])
    assert len(out[0]["tool_calls"]) == 2
    assert _tool_results(out) == [INTERRUPTED_TEXT, INTERRUPTED_TEXT]


def test_tool_media_follow_all_tool_results_as_a_user_message() -> None:
    u = user("go")
    png = Attachment(mime="image/png", filename="shot.png", url="data:image/png;base64,Zm9v")
    pdf = Attachment(mime="application/pdf", filename="doc.pdf", url="data:application/pdf;base64,JVBE")
    a = assistant(
        u, tool("read", "Image read", attachments=[png]), tool("read", "PDF read", attachments=[pdf])
    )
    out = to_model_messages([a])
    assert [m["role"] for m in out] == ["assistant", "tool", "tool", "user"]
    assert out[3]["content"] == [
        {"type": "text", "text": "Attached media from tool result:"},
        {"type": "image_url", "image_url": {"url": png.url}},
        {"type": "file", "file": {"file_data": pdf.url, "filename": "doc.pdf"}},
    ]
    assert [m["role"] for m in to_model_messages([a], strip_media=True)] == ["assistant", "tool", "tool"]
