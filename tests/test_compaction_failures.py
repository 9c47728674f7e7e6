"""A compaction never loses the user's question and never leaves a session stuck: the newest
unanswered message survives verbatim; every kind of summary failure ends usable (a compaction
without a model over the budget, nothing under it, told in one line naming the summary); Ctrl-C
leaves no errored summary and no marker; a killed summary is redone; a second request joins the
pending one; the marker keeps diagnostics. In-process, through the scripted server."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.plugins.hookspecs import hookimpl
from agentcli.session import events
from agentcli.session.request.history import filter_compacted
from agentcli.session.request.view import SUMMARY_MARKER_TEXT
from agentcli.store.artifacts import split_summary
from agentcli.store.records import AssistantMessage, CompactionPart, TextPart, Tokens
from tests.builders import Harness
from tests.fakellm import ErrorResponse, FakeLLM, Hang, Reply, Usage, is_summary_request
from tests.test_history import SES, assistant, marker, tool, user

SMALL = Usage(1_000, 10)
QUESTION = "Which file defines parse_config, and why does it ignore YAML anchors?"


def _make(tmp_path: Path, fake_llm: FakeLLM, **compaction: Any) -> Harness:
    extra = {"compaction": compaction} if compaction else None
    return Harness.make(tmp_path, fake_llm, session_id=SES, extra=extra, context=50_000, output=8_000)


def _user_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "user" and isinstance(m["content"], str)]


def _is_summary(body: dict[str, Any]) -> bool:
    return is_summary_request(body)


def _first_turn_overflows(h: Harness) -> None:
    """A first turn whose answer used more than the usable budget (as the provider reported)."""
    first = user("first question")
    answer = assistant(first, "answer one")
    answer.info = answer.info.model_copy(update={"tokens": Tokens(total=42_600, input=42_500, output=100)})
    h.store.import_messages([first, answer])
    h.store.update_session(h.sid, context_tokens=42_600)


# --- the user's newest message ------------------------------------------------------------


@pytest.mark.parametrize("setting", [{"tail_turns": 0}, {"preserve_recent_tokens": 0}])
def test_a_question_asked_into_a_full_context_reaches_the_model_verbatim(
    tmp_path: Path, fake_llm: FakeLLM, setting: dict[str, int]
) -> None:
    h = _make(tmp_path, fake_llm, **setting)
    _first_turn_overflows(h)
    fake_llm.push(
        Reply(text="## Objective\n- answer questions", usage=SMALL), Reply(text="in config.py", usage=SMALL)
    )
    h.loop.prompt(h.sid, QUESTION)  # the start-of-turn check compacts before the model sees it
    requests = [r.body for r in fake_llm.chat_requests()]
    assert _is_summary(requests[0]) and not _is_summary(requests[1])
    assert QUESTION in _user_texts(requests[1])  # verbatim, not only inside the summary
    assert h.assistants()[-1].text() == "in config.py"


def test_compact_with_a_question_pending_keeps_it_verbatim(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _make(tmp_path, fake_llm, tail_turns=0)
    first = user("first question")
    answer = assistant(first, "answer one")
    pending = user(QUESTION)  # asked, never answered (the turn was cancelled)
    h.store.import_messages([first, answer, pending])
    fake_llm.push(Reply(text="## Objective\n- answer questions", usage=SMALL))
    assert h.loop.compact(h.sid) is True
    built = h.runtime.build_request(h.sid, filter_compacted(h.store.stream(h.sid)))
    assert QUESTION in _user_texts({"messages": built.messages})
    assert "first question" not in _user_texts({"messages": built.messages})  # that one was summarised


BUILD_LOG = "gcc -O2 -c src/parser.c -o build/parser.o: warning: unused variable\n" * 1_600  # ~28k tokens


def _answered_turns_without_usage(h: Harness) -> None:
    """Two answered turns whose tool outputs alone exceed the 50k context, from a provider that reported
    no usage: the start-of-turn check has nothing to go on, only the pre-flight size estimate can tell."""
    turns = []
    for question in ("build the project", "build it again with -O2"):
        asked = user(question)
        turns += [asked, assistant(asked, tool(output=BUILD_LOG), "it built, with warnings")]
    h.store.import_messages(turns)


def test_a_question_into_an_oversize_request_reaches_the_model_verbatim_after_the_preflight_compaction(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _make(tmp_path, fake_llm, tail_turns=0, preserve_recent_tokens=10)
    _answered_turns_without_usage(h)
    fake_llm.push(
        Reply(text="## Objective\n- build the project", usage=SMALL), Reply(text="in config.py", usage=SMALL)
    )
    h.loop.prompt(h.sid, QUESTION)
    requests = [r.body for r in fake_llm.chat_requests()]
    assert len(requests) == 2 and _is_summary(requests[0])  # nothing was sent with the oversize window
    [mark] = [p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]
    assert mark.auto and mark.overflow  # the pre-flight path (the start-of-turn path queues overflow=False)
    after = requests[1]
    assert QUESTION in _user_texts(after)  # verbatim, not only inside the summary
    assert "gcc -O2" not in json.dumps(after)  # the oversize outputs went into the summary
    assert h.assistants()[-1].text() == "in config.py"


# --- summary failures ---------------------------------------------------------------------


FAILURES = {
    "http-400": [ErrorResponse(400, {"error": {"message": "invalid request: unsupported parameter"}})],
    "http-500-after-retries": [
        ErrorResponse(500, {"error": {"message": "upstream broke"}}, {"retry-after": "0"})
    ]
    * 2,
    "empty": [Reply(text="", usage=SMALL)],
    "whitespace": [Reply(text=" \n\t ", usage=SMALL)],
    "cut-stream": [Reply(text="## Objective\n- this summary is cut", cut_after=2)],
}


@pytest.mark.parametrize("kind", list(FAILURES))
def test_a_failed_summary_over_the_budget_compacts_without_a_model(
    tmp_path: Path, fake_llm: FakeLLM, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_MAX_RETRIES", "1")
    h = _make(tmp_path, fake_llm)
    _first_turn_overflows(h)
    fake_llm.push(*FAILURES[kind], Reply(text="carrying on", usage=SMALL))
    last = h.loop.prompt(h.sid, QUESTION)
    assert last is not None and last.error is None and h.assistants()[-1].text() == "carrying on"
    [failed] = h.of(events.CompactionFailed)
    assert failed.message.startswith("the summary failed (") and "without a model" in failed.message
    assert "\n" not in failed.message
    [done] = h.of(events.CompactionFinished)
    assert done.fallback
    after = fake_llm.chat_requests()[-1].body
    assert any(
        "made without a model" in t
        for t in _user_texts(after)
        + [m["content"] or "" for m in after["messages"] if m["role"] == "assistant"]
    )
    assert QUESTION in _user_texts(after)
    # No errored summary is left in the window; the marker says what happened.
    assert all(s.info.error is None for s in h.summaries())  # type: ignore[union-attr]
    [mark] = [p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]
    assert mark.diagnostics is not None and mark.diagnostics.fallback
    assert mark.diagnostics.fallback_reason and mark.diagnostics.fallback_reason.startswith(
        "the summary failed"
    )
    assert mark.diagnostics.attempts >= 1 and mark.diagnostics.tokens_before > mark.diagnostics.tokens_after


def test_a_successful_compaction_keeps_its_diagnostics_on_the_marker(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _make(tmp_path, fake_llm)
    _first_turn_overflows(h)
    fake_llm.push(Reply(text="## Objective\n- answer", usage=SMALL), Reply(text="ok", usage=SMALL))
    h.loop.prompt(h.sid, QUESTION)
    [mark] = [p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]
    d = mark.diagnostics
    assert d is not None and not d.fallback and d.fallback_reason is None and d.attempts == 1
    assert d.tokens_before == 42_600 and 0 < d.tokens_after < d.tokens_before
    assert d.request_tokens > 0 and d.duration_ms >= 0


# --- cancelled and killed summaries -------------------------------------------------------


def _no_compaction_left(h: Harness) -> None:
    assert not h.summaries()
    assert not [p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]


def test_ctrl_c_during_the_summary_stream_leaves_no_summary_and_no_marker(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _make(tmp_path, fake_llm)
    first = user("first question")
    h.store.import_messages([first, assistant(first, "answer one")])
    fake_llm.push(Reply(text="## Objective\n" + "- a long summary line\n" * 200, chunk_size=4, delay=0.02))
    abort = threading.Event()
    worker = threading.Thread(target=h.loop.compact, args=(h.sid,), kwargs={"abort": abort})
    worker.start()
    fake_llm.wait_for(1, timeout=60)
    for _ in range(600):  # until some of the summary has streamed in
        if any(isinstance(e, events.TextDelta) for e in list(h.events)):
            break
        threading.Event().wait(0.05)
    abort.set()
    worker.join(60)
    assert not worker.is_alive()
    _no_compaction_left(h)
    assert "cancelled" in h.of(events.CompactionFailed)[-1].message
    # The next turn does not fire a compaction by surprise: one request, the answer.
    fake_llm.push(Reply(text="second answer", usage=SMALL))
    h.loop.prompt(h.sid, "second question")
    assert not any(_is_summary(r.body) for r in fake_llm.chat_requests()[1:])
    assert h.assistants()[-1].text() == "second answer"


class _InterruptedHook:
    """Ctrl-C arriving while a plugin's session_compacting hook runs."""

    def __init__(self) -> None:
        self.abort = threading.Event()

    @hookimpl
    def session_compacting(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        self.abort.set()


def test_ctrl_c_inside_the_compacting_hook_leaves_no_marker(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = _InterruptedHook()
    h = Harness.make(tmp_path, fake_llm, session_id=SES, plugins=[plugin])
    first = user("first question")
    h.store.import_messages([first, assistant(first, "answer one")])
    h.loop.compact(h.sid, abort=plugin.abort)
    assert not fake_llm.chat_requests()  # no summary request sent
    _no_compaction_left(h)


def test_a_summary_killed_mid_stream_is_redone_and_the_question_kept(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    h = _make(tmp_path, fake_llm, tail_turns=0)
    first = user("first question")
    answer = assistant(first, "answer one")
    mark = marker(auto=True)
    # What SIGKILL during the summary leaves: the marker and a summary that never finished.
    killed = assistant(mark, "## Objective\n- half writ", summary=True, finish=None)
    h.store.import_messages([first, answer, mark, killed])
    fake_llm.push(
        Reply(text="## Objective\n- answer questions", usage=SMALL), Reply(text="answer two", usage=SMALL)
    )
    h.loop.prompt(h.sid, QUESTION)
    requests = [r.body for r in fake_llm.chat_requests()]
    assert _is_summary(requests[0]) and "half writ" not in str(requests[0])
    assert QUESTION in _user_texts(requests[1])
    assert SUMMARY_MARKER_TEXT in _user_texts(requests[1])
    # The summary is compared without the carryover block that follows it (the user's words).
    replies = [split_summary(m["content"])[0] for m in requests[1]["messages"] if m["role"] == "assistant"]
    assert "## Objective\n- answer questions" in replies and "half writ" not in str(requests[1])
    assert h.assistants()[-1].text() == "answer two"
    summaries = h.summaries()
    assert len(summaries) == 1 and summaries[0].info.finish == "stop"  # type: ignore[union-attr]


def test_a_bare_marker_is_never_sent(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _make(tmp_path, fake_llm)
    first = user("first question")
    answer = assistant(first, "answer one")
    mark = marker(auto=True)
    killed = assistant(mark, summary=True, finish=None)
    h.store.import_messages([first, answer, mark, killed])
    built = h.runtime.build_request(h.sid, filter_compacted(h.store.stream(h.sid)))
    assert SUMMARY_MARKER_TEXT not in _user_texts({"messages": built.messages})


# --- a second request joins the pending one -----------------------------------------------


def test_a_second_compaction_request_joins_the_pending_one(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _make(tmp_path, fake_llm)
    first = user("first question")
    h.store.import_messages([first, assistant(first, "answer one")])
    compactor = h.runtime.compactor(threading.Event())
    one = compactor.create(h.sid, auto=False, overflow=False, focus="the parser")
    two = compactor.create(h.sid, auto=True, overflow=False)
    assert one == two
    assert len([p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]) == 1
    fake_llm.push(Reply(text="## Objective\n- parser", usage=SMALL))
    assert h.loop.compact(h.sid) is True  # joins too, and runs the one pending compaction
    assert len(h.summaries()) == 1 and len(h.of(events.CompactionFinished)) == 1
    [summary] = h.summaries()
    assert isinstance(summary.info, AssistantMessage) and summary.info.parent_id == one
    assert any(isinstance(p, TextPart) for p in summary.parts)


# --- a summary request that stalls past the provider's timeout -----------------------------


def _with_timeout(tmp_path: Path, fake_llm: FakeLLM, timeout_ms: int) -> Harness:
    """A harness whose provider sets ``options.timeout`` (milliseconds, as in OpenCode's config)."""
    provider = {
        "fake": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": fake_llm.base_url, "apiKey": "sk-test", "timeout": timeout_ms},
            "models": {"test-model": {"limit": {"context": 50_000, "output": 8_000}}},
        }
    }
    return Harness.make(tmp_path, fake_llm, session_id=SES, extra={"provider": provider})


STALLS = {
    # Accepted, then not a byte (nor headers) until long after the timeout.
    "silent": [Hang(120)],
    # Headers and the role chunk, then nothing.
    "before-any-text": [Reply(text="## Objective", cut_after=1, stall=120)],
    # Some of the summary's text, then nothing: a stream that stops mid-summary (not retried).
    "mid-stream": [
        Reply(
            text="## Objective\n- this summary stalls here and never ends",
            chunk_size=6,
            cut_after=4,
            stall=120,
        )
    ],
}


@pytest.mark.parametrize("kind", list(STALLS))
def test_a_summary_that_times_out_over_the_budget_compacts_without_a_model(
    tmp_path: Path, fake_llm: FakeLLM, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "AGENTCLI_MAX_RETRIES", "0"
    )  # a timeout is retried like any provider failure: not here
    h = _with_timeout(tmp_path, fake_llm, timeout_ms=3_000)
    _first_turn_overflows(h)
    fake_llm.push(*STALLS[kind], Reply(text="carrying on", usage=SMALL))
    started = time.monotonic()
    last = h.loop.prompt(h.sid, QUESTION)
    assert time.monotonic() - started < 60  # bounded by the timeout, not by the provider's stall
    assert last is not None and last.error is None and h.assistants()[-1].text() == "carrying on"
    [failed] = h.of(events.CompactionFailed)
    assert failed.message.startswith("the summary failed (") and "without a model" in failed.message
    assert "timed out" in failed.message and "\n" not in failed.message
    [done] = h.of(events.CompactionFinished)
    assert done.fallback
    requests = fake_llm.chat_requests()
    assert all(_is_summary(r.body) for r in requests[:-1]) and not _is_summary(requests[-1].body)
    after = requests[-1].body
    assert any("made without a model" in (m["content"] or "") for m in after["messages"])
    assert QUESTION in _user_texts(after)
    assert "this summary stalls" not in str(after)  # the stalled fragment is not passed off as a summary
    assert all(s.info.error is None for s in h.summaries())  # type: ignore[union-attr]
    [mark] = [p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]
    assert mark.diagnostics is not None and mark.diagnostics.fallback
    assert mark.diagnostics.fallback_reason and "timed out" in mark.diagnostics.fallback_reason


def test_compactions_requested_at_once_in_one_process_write_one_marker(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    for round_ in range(3):
        folder = tmp_path / f"round{round_}"
        folder.mkdir()
        h = _make(folder, fake_llm)
        first = user("first question")
        h.store.import_messages([first, assistant(first, "answer one")])
        start = threading.Barrier(6)
        ids: list[str | None] = []

        def request(auto: bool, h: Harness = h, start: threading.Barrier = start, ids: list = ids) -> None:
            compactor = h.runtime.compactor(threading.Event())  # each its own, as /compact and a plugin's
            start.wait()
            ids.append(compactor.create(h.sid, auto=auto, overflow=False))

        threads = [threading.Thread(target=request, args=(i % 2 == 0,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        markers = [p for m in h.users() for p in m.parts if isinstance(p, CompactionPart)]
        assert len(markers) == 1 and len(set(ids)) == 1, (round_, len(markers))
