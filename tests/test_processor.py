"""The processor and the loop around one step, in-process: real store, real litellm, scripted server.

Ported from reference §10.11 (PX1, PX2), §10.12 (retry: context overflow is never retried) and the
§10.8 E-cases that reach the processor as HTTP answers; plus tool part states, text durability,
max steps, the preflight overflow check, compaction.auto=false and title generation.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from agentcli.llm.errors import LLMError, retry_delay
from agentcli.llm.stream import ChatRequest
from agentcli.session import events
from agentcli.session.processor import Processor, StepPolicy
from agentcli.store import ids
from agentcli.store.records import AssistantMessage, StepFinishPart, TextPart, ToolPart, UserMessage
from agentcli.store.store import Store
from agentcli.tools.read import ReadTool
from tests.builders import Harness
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall, Usage


def _step(h: Harness, *, auto_compact: bool = True, with_tools: bool = True) -> tuple[AssistantMessage, str]:
    """One processor step on a fresh user message, with the loop's overflow rule."""
    user = UserMessage(id=ids.ascending("msg"), session_id=h.sid, model=h.runtime.model.name)
    h.store.put_message(user)
    h.store.put_part(TextPart(id=ids.ascending("prt"), session_id=h.sid, message_id=user.id, text="hi"))
    msg = AssistantMessage(
        id=ids.ascending("msg"), session_id=h.sid, parent_id=user.id, model=h.runtime.model.name
    )
    h.store.put_message(msg)
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}], **h.runtime.model.request_kwargs())
    policy = StepPolicy(
        cost=lambda _u: 0.0,
        is_overflow=h.runtime.overflows,
        auto_compact=auto_compact,
        run_tools=(lambda _m, _p: None) if with_tools else None,
    )
    outcome = Processor(h.store, h.runtime.bus, threading.Event()).process(msg, request, policy)
    return msg, outcome


def test_px1_usage_over_the_usable_budget_asks_for_compaction(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, context=20, output=10)
    fake_llm.push(Reply(text="after", usage=Usage(prompt_tokens=100, completion_tokens=0)))
    msg, outcome = _step(h)
    assert outcome == "compact"  # usable = 20 - 10 = 10 <= 100
    parts = h.store.get_message(msg.id).parts
    assert any(isinstance(p, TextPart) and p.text == "after" for p in parts)
    finish = [p for p in parts if isinstance(p, StepFinishPart)]
    assert len(finish) == 1 and finish[0].tokens.input == 100


def test_usage_under_the_budget_continues(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, context=1000, output=10)
    fake_llm.push(Reply(text="fine", usage=Usage(prompt_tokens=100, completion_tokens=5)))
    msg, outcome = _step(h)
    assert outcome == "continue"
    stored = h.store.get_message(msg.id).info
    assert stored.finish == "stop" and stored.tokens.input == 100 and stored.error is None  # type: ignore[union-attr]
    assert h.store.get_session(h.sid).context_tokens == 105


def test_px2_structured_context_overflow_compacts_without_retry(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(ErrorResponse(400, {"type": "error", "error": {"code": "context_length_exceeded"}}))
    msg, outcome = _step(h)
    assert outcome == "compact"
    assert len(fake_llm.chat_requests()) == 1
    _assert_overflow_recorded(h, msg.id)
    assert not h.of(events.Retrying)


def _assert_overflow_recorded(h: Harness, message_id: str) -> None:
    """Unlike OpenCode (PX2: ``assistant.error`` undefined) the refused step keeps the provider's error,
    so `sessions show` says why it has no answer and it is never taken for a step a crash left open.
    The model's view is the same: an errored step without content is not sent."""
    info = h.store.get_message(message_id).info
    assert info.error is not None and info.error.name == "ContextOverflowError"  # type: ignore[union-attr]
    assert info.completed is not None and info.finish is None  # type: ignore[union-attr]


def test_retry_never_retries_context_overflow() -> None:
    err = LLMError(kind="context_overflow", message="too long", retryable=True)
    assert retry_delay(err, 1) is None


def test_overflow_without_auto_compact_is_an_error_not_a_retry(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(ErrorResponse.context_length())
    msg, outcome = _step(h, auto_compact=False)
    assert outcome == "stop"
    assert len(fake_llm.chat_requests()) == 1
    error = h.store.get_message(msg.id).info.error  # type: ignore[union-attr]
    assert error is not None and error.name == "ContextOverflowError"


@pytest.mark.parametrize(
    "response",
    [
        ErrorResponse(
            400, {"error": {"message": "prompt is too long: 213462 tokens > 200000 maximum"}}
        ),  # E4
        ErrorResponse(400, {"error": {"message": "Your input exceeds the context window of this model"}}),
        ErrorResponse(
            400,
            {
                "error": {
                    "message": "The input token count (1196265) exceeds the maximum number of "
                    "tokens allowed (1048575)"
                }
            },
        ),
        ErrorResponse(400, {"error": {"message": "Please reduce the length of the messages or completion"}}),
        ErrorResponse(422, {"error": {"code": "context_length_exceeded", "message": "nope"}}),  # E5
        ErrorResponse.too_large(),  # 413
    ],
    ids=["anthropic", "openai", "gemini", "groq", "422-code", "413"],
)
def test_e4_e5_provider_overflow_answers_compact(
    tmp_path: Path, fake_llm: FakeLLM, response: ErrorResponse
) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(response)
    msg, outcome = _step(h)
    assert outcome == "compact"
    assert len(fake_llm.chat_requests()) == 1
    _assert_overflow_recorded(h, msg.id)


def test_e6_rate_limit_is_retried_not_compacted(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(ErrorResponse.rate_limited(retry_after=0), Reply(text="ok"))
    msg, outcome = _step(h)
    assert outcome == "continue"
    assert len(fake_llm.chat_requests()) == 2
    assert [e.attempt for e in h.of(events.Retrying)] == [1]
    assert h.store.get_message(msg.id).info.error is None  # type: ignore[union-attr]


def test_auth_error_stops_once_with_the_error_recorded(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(ErrorResponse.unauthorized())
    msg, outcome = _step(h)
    assert outcome == "stop"
    assert len(fake_llm.chat_requests()) == 1
    error = h.store.get_message(msg.id).info.error  # type: ignore[union-attr]
    assert error is not None and error.name == "ProviderAuthError" and error.status == 401
    assert [e.kind for e in h.of(events.ErrorOccurred)] == ["auth"]


def test_server_error_retries_then_gives_up(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_MAX_RETRIES", "2")
    h = Harness.make(tmp_path, fake_llm)
    boom = ErrorResponse(500, {"error": {"message": "boom"}}, {"retry-after": "0"})
    fake_llm.push(boom, boom, boom, Reply(text="never"))
    msg, outcome = _step(h)
    assert outcome == "stop"
    assert len(fake_llm.chat_requests()) == 3  # the first try and two retries
    error = h.store.get_message(msg.id).info.error  # type: ignore[union-attr]
    assert error is not None and error.name == "APIError"


def test_summary_step_refuses_tool_calls(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(Reply(tool_calls=[ToolCall("_noop", {})]))
    msg, outcome = _step(h, auto_compact=False, with_tools=False)
    assert outcome == "stop"
    stored = h.store.get_message(msg.id)
    assert not [p for p in stored.parts if isinstance(p, ToolPart)]
    assert stored.info.error is not None and "Tool call not allowed" in stored.info.error.message  # type: ignore[union-attr]


# --- through the loop ---------------------------------------------------------------------------


def test_tool_part_states_are_published_in_order(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, tools={"read": ReadTool()})
    (h.project / "notes.txt").write_text("remember the milk\n")
    seen: list[tuple[str, str]] = []
    h.runtime.bus.subscribe(
        lambda e: (
            seen.append((e.part.call_id, e.part.state.status)) if isinstance(e, events.ToolUpdated) else None
        )
    )
    fake_llm.push(
        Reply(
            tool_calls=[
                ToolCall("read", {"filePath": str(h.project / "notes.txt")}, id="c1"),
                ToolCall("missing_tool", {}, id="c2"),
            ]
        ),
        Reply(text="done"),
    )
    h.loop.prompt(h.sid, "read it")
    for call, final in (("c1", "completed"), ("c2", "error")):
        states = [s for c, s in seen if c == call]
        assert states[0] == "pending" and states[-1] == final, states
        assert "running" in states and states.index("running") < len(states) - 1
    tools = {p.call_id: p for m in h.assistants() for p in m.parts if isinstance(p, ToolPart)}
    assert "remember the milk" in (tools["c1"].state.output or "")
    assert "Unknown tool" in (tools["c2"].state.error or "")
    assert h.assistants()[-1].info.finish == "stop"  # type: ignore[union-attr]


def test_streamed_text_is_durable_before_the_stream_ends(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    full = "the quick brown fox jumps over the lazy dog"
    fake_llm.push(Reply(text=full, chunk_size=1, delay=0.03))  # ~1.3 s of streaming
    worker = threading.Thread(target=h.loop.prompt, args=(h.sid, "say it"))
    worker.start()
    other = Store(h.store.target)  # a second connection, as another agentcli process would open
    partial = ""
    deadline = time.monotonic() + 10
    while worker.is_alive() and time.monotonic() < deadline:
        texts = [
            p.text
            for m in other.messages(h.sid)
            if m.role == "assistant"
            for p in m.parts
            if isinstance(p, TextPart)
        ]
        if texts and 0 < len(texts[0]) < len(full):
            partial = texts[0]
            break
        time.sleep(0.05)
    worker.join(10)
    assert partial and full.startswith(partial)
    assert h.assistants()[-1].text() == full
    other.close()


def test_max_steps_stops_the_turn_with_a_one_line_error(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, tools={"read": ReadTool()}, max_steps=2)
    call = Reply(tool_calls=[ToolCall("read", {"filePath": str(tmp_path / "nope.txt")})])
    fake_llm.push(call, call, call, Reply(text="never"))
    h.loop.prompt(h.sid, "loop forever")
    assert len(fake_llm.chat_requests()) == 2
    errors = [e for e in h.of(events.ErrorOccurred) if e.kind == "max_steps"]
    assert len(errors) == 1 and "\n" not in errors[0].message and "max steps" in errors[0].message


def _near_full(h: Harness, fake_llm: FakeLLM) -> int:
    """A first turn whose 1 000-token question fits a 2 000-token context; the next one of the same
    size cannot fit beside it. Returns the number of requests sent so far."""
    fake_llm.push(Reply(text="noted", usage=Usage(prompt_tokens=900, completion_tokens=2)))
    h.loop.prompt(h.sid, "w " * 2_000)
    return len(fake_llm.chat_requests())


def test_preflight_overflow_compacts_before_any_normal_request(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # Two 1 000-token questions against a 2 000-token context: the second request is certain to be
    # rejected.
    h = Harness.make(tmp_path, fake_llm, context=2_000, output=100)
    before = _near_full(h, fake_llm)
    fake_llm.push(Reply(text="## Goal\nsummary"), Reply(text="answer"))
    h.loop.prompt(h.sid, "x " * 2_000)
    requests = fake_llm.chat_requests()[before:]
    assert requests, "nothing was sent"
    first_system = " ".join(
        str(m.get("content")) for m in requests[0].body["messages"] if m["role"] == "system"
    )
    assert "summar" in first_system.lower(), "the first request was not the summary request"
    assert h.summaries() and h.of(events.CompactionFinished)


def test_auto_false_never_compacts_on_usage_overflow(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, context=200, output=50, extra={"compaction": {"auto": False}})
    fake_llm.push(
        Reply(text="one", usage=Usage(prompt_tokens=10_000, completion_tokens=5)),
        Reply(text="two", usage=Usage(prompt_tokens=10_000, completion_tokens=5)),
    )
    h.loop.prompt(h.sid, "first")
    h.loop.prompt(h.sid, "second")
    assert len(fake_llm.chat_requests()) == 2
    assert not h.summaries() and not h.of(events.CompactionStarted)
    assert all(m.compaction() is None for m in h.users())


def test_usage_overflow_compacts_before_the_next_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, context=50_000, output=1_000)
    fake_llm.push(
        Reply(text="big", usage=Usage(prompt_tokens=49_500, completion_tokens=5)),
        Reply(text="## Goal\nthe summary"),
        Reply(text="next"),
    )
    h.loop.prompt(h.sid, "first")
    finished = h.of(events.CompactionFinished)
    assert len(finished) == 1 and finished[0].auto and not finished[0].overflow
    continues = [p for m in h.users() for p in m.parts if isinstance(p, TextPart) and p.synthetic]
    assert continues and continues[-1].compaction_continue
    assert h.assistants()[-1].text() == "next"


# --- titles -------------------------------------------------------------------------------------


def test_title_is_generated_in_the_background(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.title = "Fixing the build"
    fake_llm.push(Reply(text="hello"))
    h.loop.prompt(h.sid, "why does my build fail?\nsecond line")
    h.join_title()
    assert h.store.get_session(h.sid).title == "Fixing the build"


def test_title_failure_keeps_the_first_line(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.off(fake_llm.title_rule)
    fake_llm.on(lambda r: r.title, ErrorResponse.unauthorized())
    fake_llm.push(Reply(text="hello"))
    h.loop.prompt(h.sid, "why does my build fail?\nsecond line")
    h.join_title()
    assert h.store.get_session(h.sid).title == "why does my build fail?"


def test_a_preflight_compaction_does_not_use_up_a_step_of_the_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # One step allowed; the question does not fit until compacted: the step is still the answer's.
    h = Harness.make(tmp_path, fake_llm, max_steps=1, context=2_000, output=100)
    _near_full(h, fake_llm)
    fake_llm.push(Reply(text="## Goal\nsummary"), Reply(text="answer"))
    h.loop.prompt(h.sid, "x " * 2_000)
    assert h.of(events.CompactionFinished)
    assert not [e for e in h.of(events.ErrorOccurred) if e.kind == "max_steps"]
    assert h.assistants()[-1].text() == "answer"


def test_a_reused_stream_index_with_a_new_id_is_a_second_call(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # Some providers number every call 0: a new id at a used index starts a new call (before, the
    # two became one call whose arguments were both JSON objects run together, which no tool reads).
    h = Harness.make(tmp_path, fake_llm, tools={"read": ReadTool()})
    calls = [
        ToolCall("read", {"filePath": "a.txt"}, id="call_a", index=0),
        ToolCall("read", {"filePath": "b.txt"}, id="call_b", index=0),
    ]
    fake_llm.push(Reply(tool_calls=calls))
    msg, _ = _step(h)
    parts = [p for p in h.store.get_message(msg.id).parts if isinstance(p, ToolPart)]
    assert [(p.call_id, p.state.input) for p in parts] == [
        ("call_a", {"filePath": "a.txt"}),
        ("call_b", {"filePath": "b.txt"}),
    ]
