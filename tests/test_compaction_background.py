"""Background compaction (``compaction.background``, ``compaction.background_at``): past the threshold the
summary of the older part is written while the turn goes on; when compaction is due it is swapped in
at once, the messages after its cut kept verbatim. The loop runs in-process against the scripted
server and a real SQLite store; the summary request is held open by the server to show the model's
steps are not blocked by it (request order, never wall clock).

``{"background": false, "request": "transcript"}`` reproduces the requests of the code before
background compaction existed, byte for byte (the fixture was recorded from it)."""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from agentcli.demo.replies import is_summary_request
from agentcli.session import events
from agentcli.session.loop import SessionLoop
from agentcli.store.records import AssistantMessage, CompactionPart, WithParts
from tests.fakellm import ErrorResponse, FakeLLM, Recorded, Reply, ToolCall, Usage
from tests.test_compaction_request import OPENAI, _loop
from tests.test_history import SES

FIXTURE = Path(__file__).parent / "fixtures" / "compaction_requests" / "opencode_session.json"
# A 100k context with an 8k output limit: usable 92,000 tokens.
LOW, MID, OVER = Usage(30_000, 10), Usage(60_000, 10), Usage(93_000, 10)
FILES = [f"mod{i}.py" for i in range(8)]


def _reads(*usages: Usage) -> list[Reply]:
    """One step per usage, each reading the next file (the session's history grows)."""
    return [
        Reply(text=f"Reading {FILES[i]}.", tool_calls=[ToolCall("read", {"filePath": FILES[i]})], usage=u)
        for i, u in enumerate(usages)
    ]


def _start(tmp: Path, server: FakeLLM, compaction: dict[str, Any] | None) -> SessionLoop:
    loop = _loop(tmp, server, OPENAI, compaction)
    project = loop.runtime.options.directory
    for i, name in enumerate(FILES):
        (project / name).write_text(f"def f{i}(x):\n    return x + {i}  # line of {name}\n")
    return loop


def _bodies(server: FakeLLM, tmp: Path) -> list[dict[str, Any]]:
    """The chat requests sent, without what changes from run to run (the temporary paths, the date,
    the model's name)."""
    out = []
    for rec in server.chat_requests():
        text = json.dumps({k: v for k, v in rec.body.items() if k != "model"}, sort_keys=True)
        text = text.replace(str(tmp), "<tmp>")
        text = re.sub(r"Today's date: [A-Za-z]{3} [A-Za-z]{3} \d\d \d{4}", "Today's date: <date>", text)
        out.append(json.loads(text))
    return out


def _finish(loop: SessionLoop) -> None:
    if loop.title_thread is not None:
        loop.title_thread.join(10)
    loop.runtime.store.close()


def test_the_opencode_keys_reproduce_the_requests_of_before_background_compaction(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn that climbs past the background threshold, then past the usable window (an automatic
    compaction mid-turn), then a second turn: every request body as the code before sent it."""
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, {"background": False, "request": "transcript"})
    fake_llm.push(
        *_reads(LOW, MID, Usage(80_000, 10), OVER),
        Reply(text="## Objective\n- read the modules"),  # the summary
        Reply(text="All eight modules add their index.", usage=Usage(20_000, 10)),
    )
    loop.prompt(SES, "read the modules one by one")
    fake_llm.push(*_reads(MID, OVER), Reply(text="## Objective\n- again"), Reply(text="Done.", usage=LOW))
    loop.prompt(SES, "read them again")
    _finish(loop)
    got = _bodies(fake_llm, tmp_path)
    if os.environ.get("AGENTCLI_UPDATE_GOLDEN"):
        FIXTURE.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert sum(is_summary_request(b) for b in got) == 2
    assert got == json.loads(FIXTURE.read_text())


# --- background compaction ------------------------------------------------------------------------

BG_SUMMARY = "## Objective\n- read the modules (written in the background)"
KEEP = {"preserve_recent_tokens": 200}  # the tail: the newest steps (the messages are small)


class Summarizer:
    """Answers every summary request (a rule, so the model's scripted replies are not taken): held
    open until ``gate`` is set; ``fail_first``: the first one answered with an HTTP 400."""

    def __init__(self, server: FakeLLM, *, fail_first: bool = False, texts: list[str] | None = None) -> None:
        self.gate = threading.Event()
        self.arrived = threading.Event()  # the first summary request arrived
        self.answered_at: list[int] = []  # chat requests the server had when each summary was answered
        self.arrived_with: list[int] = []  # chat requests the server had answered when each one arrived
        self.second = threading.Event()  # the second summary request arrived
        self.answered = threading.Event()  # the first one was answered
        self.server = server
        self.asked = 0
        self.texts = texts or [BG_SUMMARY]
        self.fail_first = fail_first
        server.on(lambda r: is_summary_request(r.body), self._answer)

    def _answer(self, _rec: Recorded) -> Reply | ErrorResponse:
        self.asked += 1
        self.arrived_with.append(len(self.server.chat_requests()))
        self.arrived.set()
        if self.asked == 2:
            self.second.set()
        if self.fail_first and self.asked == 1:
            return ErrorResponse(400, {"error": {"message": "the summarizer is down"}})
        self.gate.wait(30)
        self.answered_at.append(len(self.server.chat_requests()))
        self.answered.set()
        return Reply(text=self.texts[min(self.asked, len(self.texts)) - 1])


def _release_after(server: FakeLLM, requests: int, gate: threading.Event) -> threading.Thread:
    """Set ``gate`` once ``requests`` chat requests were recorded (the model's steps while it is held)."""

    def watch() -> None:
        server.wait_for(requests, timeout=30)
        gate.set()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _summaries(loop: SessionLoop) -> list[WithParts]:
    return [
        m for m in loop.runtime.store.messages(SES) if isinstance(m.info, AssistantMessage) and m.info.summary
    ]


def _marker(loop: SessionLoop) -> CompactionPart:
    return [p for m in loop.runtime.store.messages(SES) for p in m.parts if isinstance(p, CompactionPart)][-1]


def _kinds(server: FakeLLM) -> list[str]:
    return ["summary" if is_summary_request(r.body) else "step" for r in server.chat_requests()]


def test_the_summary_is_written_while_the_turn_goes_on_and_swapped_in_with_the_tail_intact(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, {"preserve_recent_tokens": 3_000})
    # An earlier turn that read a long file (what the summary is for: it does not fit the kept tail).
    (loop.runtime.options.directory / "big.py").write_text(
        "".join(f"def big{i}(): pass\n" for i in range(900))
    )
    fake_llm.push(
        Reply(tool_calls=[ToolCall("read", {"filePath": "big.py"})], usage=LOW), Reply(text="Big.", usage=LOW)
    )
    loop.prompt(SES, "read big.py")
    fake_llm.requests.clear()
    summarizer = Summarizer(fake_llm)
    # Step 2 passes 70 % of the usable 92,000: the summary is asked for; steps 3 and 4 go on while it
    # is held open, step 4 reaches the budget: the compaction is due and the summary swapped in.
    # Step 3's answer waits for the summary request to arrive; the summary's answer waits for step 4's
    # request: a loop that waited for the summary would never send step 4 before it is answered.
    steps = _reads(LOW, Usage(70_000, 10), Usage(80_000, 10), OVER)
    steps[2].hold = summarizer.arrived
    fake_llm.push(*steps, Reply(text="Done.", usage=LOW))
    _release_after(fake_llm, 4, summarizer.gate)  # steps 1 to 4 (a request is recorded once answered)
    heard: list[Any] = []
    loop.runtime.bus.subscribe(heard.append)
    loop.prompt(SES, "read the modules one by one")
    # The front ends hear that the summary written in the background was swapped in, and the marker
    # keeps how long it took to write and by which model (the next sessions' pace starts from it).
    [started] = [e for e in heard if isinstance(e, events.CompactionStarted)]
    [finished] = [e for e in heard if isinstance(e, events.CompactionFinished)]
    assert started.background and finished.background and "in the background" in finished.how()
    made = _marker(loop).diagnostics
    assert made is not None and made.background and made.summarizer == loop.runtime.model.name
    assert made.summary_ms > 0
    kinds = _kinds(fake_llm)
    assert kinds.count("summary") == 1  # the background one, swapped in: no second summary request
    assert kinds == ["step"] * 4 + ["summary", "step"]
    assert summarizer.answered_at == [4]  # answered only once step 4 was asked for
    [summary] = _summaries(loop)
    assert summary.text() == BG_SUMMARY and summary.info.error is None  # type: ignore[union-attr]
    assert summary.info.tokens.output > 0  # type: ignore[union-attr]  # its usage counted once

    # Every message before the compaction is in the summary's request (the head, before the cut) or
    # sent verbatim after the summary (the tail, from the cut on); the head is not sent again.
    cut, marker_id = _marker(loop).tail_start_id, _marker(loop).message_id
    order = loop.runtime.store.messages(SES)
    ids = [m.id for m in order]
    assert cut is not None and 0 < ids.index(cut) < ids.index(marker_id)
    head, tail = order[: ids.index(cut)], order[ids.index(cut) : ids.index(marker_id)]
    asked = json.dumps([r.body for r in fake_llm.chat_requests() if is_summary_request(r.body)])
    after = json.dumps(fake_llm.chat_requests()[-1].body["messages"])
    assert "written in the background" in after
    head_reads, tail_reads = _reads_in(head), _reads_in(tail)
    assert -1 in head_reads and tail_reads == [0, 1, 2, 3]  # the long read summarised, this turn kept
    assert all(f"def f{i}(" in asked for i in head_reads if i >= 0) and "def big1()" in asked
    assert all(f"def f{i}(" in after for i in tail_reads)
    assert "def big1()" not in after
    assert "Done." in json.dumps([m.text() for m in loop.runtime.store.messages(SES)])  # the turn went on
    _finish(loop)


def _read_big(loop: SessionLoop, server: FakeLLM) -> None:
    """An earlier turn that read a long file: what the summary is for (it does not fit the kept tail)."""
    big = "".join(f"def big{i}(): pass\n" for i in range(900))
    (loop.runtime.options.directory / "big.py").write_text(big)
    server.push(Reply(tool_calls=[ToolCall("read", {"filePath": "big.py"})], usage=LOW))
    server.push(Reply(text="Big.", usage=LOW))
    loop.prompt(SES, "read big.py")


def _reads_in(messages: list[WithParts]) -> list[int]:
    """The files (their index) the read tool calls of ``messages`` read."""
    return [
        FILES.index(p.state.input["filePath"]) if p.state.input["filePath"] in FILES else -1  # type: ignore[union-attr]
        for m in messages
        for p in m.parts
        if getattr(p, "tool", None) == "read"
    ]


def test_a_background_summary_that_fails_falls_back_to_compacting_then_and_says_so_once(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, KEEP)
    summarizer = Summarizer(fake_llm, fail_first=True, texts=["unused", "## Objective\n- written when due"])
    summarizer.gate.set()
    said: list[str] = []
    loop.runtime.bus.subscribe(lambda e: said.append(getattr(e, "message", "")))
    fake_llm.push(*_reads(LOW, Usage(70_000, 10), OVER), Reply(text="Done.", usage=LOW))
    loop.prompt(SES, "read the modules one by one")
    assert _kinds(fake_llm).count("summary") == 2  # the background one failed; one asked when due
    [summary] = _summaries(loop)
    assert summary.text() == "## Objective\n- written when due"
    made = _marker(loop).diagnostics
    assert made is not None and not made.background  # written when due, the turn waiting
    failed = [m for m in said if "background summary failed" in m]
    assert (
        len(failed) == 1 and "the summarizer is down" in failed[0] and failed[0].endswith("summarising now")
    )
    assert not any("Traceback" in m for m in said)
    _finish(loop)


def test_a_summary_still_being_written_when_the_turn_ends_is_swapped_in_the_next_turn_not_before(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, KEEP)
    summarizer = Summarizer(fake_llm)
    fake_llm.push(*_reads(LOW, Usage(70_000, 10)), Reply(text="Read two.", usage=Usage(75_000, 10)))
    loop.prompt(SES, "read two modules")  # ends while the summary is held open
    job = loop.runtime.background.job(SES)
    assert job is not None and not job.done.is_set()
    summarizer.gate.set()
    assert job.done.wait(30) and job.ready is not None
    assert _summaries(loop) == []  # ready, but nothing written until compaction is due
    fake_llm.push(*_reads(OVER), Reply(text="Done.", usage=LOW))
    loop.prompt(SES, "one more")
    assert _kinds(fake_llm).count("summary") == 1
    [summary] = _summaries(loop)
    assert summary.text() == BG_SUMMARY
    _finish(loop)


def test_a_manual_compaction_discards_the_background_summary(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, KEEP)
    summarizer = Summarizer(fake_llm, texts=[BG_SUMMARY, "## Objective\n- the manual one"])
    fake_llm.push(*_reads(LOW, Usage(70_000, 10)), Reply(text="Read two.", usage=Usage(75_000, 10)))
    loop.prompt(SES, "read two modules")
    job = loop.runtime.background.job(SES)
    assert job is not None
    summarizer.gate.set()
    assert job.done.wait(30) and job.ready is not None
    assert loop.compact(SES)
    assert loop.runtime.background.job(SES) is None
    texts = [m.text() for m in _summaries(loop)]
    assert texts == ["## Objective\n- the manual one"]  # never the background one
    _finish(loop)


@pytest.mark.parametrize("request_kind", ["cache", "transcript"])
def test_the_second_background_summary_sends_only_what_was_dropped_since_the_first(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, request_kind: str
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, {"preserve_recent_tokens": 3_000, "request": request_kind})
    summarizer = Summarizer(fake_llm, texts=[BG_SUMMARY, "## Objective\n- second"])
    summarizer.gate.set()
    _read_big(loop, fake_llm)
    fake_llm.push(
        *_reads(LOW, Usage(70_000, 10), OVER),
        Reply(text="Read three.", usage=Usage(30_000, 10)),
    )
    loop.prompt(SES, "read three modules")
    first_cut = _marker(loop).tail_start_id
    fake_llm.push(
        *[
            Reply(text=f"Reading {n}.", tool_calls=[ToolCall("read", {"filePath": n})], usage=u)
            for n, u in zip(FILES[4:7], [Usage(40_000, 10), Usage(70_000, 10), OVER], strict=True)
        ],
        Reply(text="Read the rest.", usage=LOW),
    )
    loop.prompt(SES, "now the rest")
    bodies = [r.body for r in fake_llm.chat_requests() if is_summary_request(r.body)]
    assert len(bodies) == 2 and len(_summaries(loop)) == 2
    second = json.dumps(bodies[1]["messages"])
    assert "written in the background" in second  # anchored on the first summary
    assert "def big1()" in json.dumps(bodies[0]["messages"])
    assert "def big1()" not in second  # what the first summarised: not sent again
    assert "def f2(" in second  # kept verbatim by the first, dropped by the second: the new span
    assert _marker(loop).tail_start_id != first_cut
    _finish(loop)


@pytest.mark.parametrize("summarizer", ["slow", "fast"])
def test_a_summarizer_learned_slow_is_asked_before_background_at_and_a_fast_one_at_it(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, summarizer: str
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    loop = _start(tmp_path, fake_llm, KEEP)
    # The runtime's clock: 3 s per model step answered (virtual: what the test asserts is the order of
    # the requests the scripted server saw, never the wall clock).
    loop.runtime.background.clock = lambda: 3.0 * _kinds(fake_llm).count("step")
    writer = Summarizer(fake_llm)
    # Turn 1: the first summary is asked for at background_at (70 % of the usable 92,000: nothing is
    # learned yet). The slow summarizer answers once step 6 reached the budget (4 steps: 12 s); the
    # fast one at once (step 3 is answered only then: 0 or 3 s).
    first = _reads(*[Usage(t, 10) for t in (30_000, 70_000, 75_000, 80_000, 85_000)], OVER)
    if summarizer == "slow":
        _release_after(fake_llm, 6, writer.gate)
    else:
        writer.gate.set()
        first[2].hold = writer.answered
    fake_llm.push(*first, Reply(text="Read six.", usage=LOW))
    loop.prompt(SES, "read six modules")
    assert writer.asked == 1 and len(_summaries(loop)) == 1
    before = len(fake_llm.chat_requests())
    # Turn 2 grows 10,000 tokens a step (3 s): due in 12.6 s at 50,000, inside 1.5 × 12 s; past
    # the 0.5 floor. Slow: asked for after the 50,000 step (step 3 is answered only once it arrived,
    # or after 10 s on a loop that does not ask then). Fast: only past 70 %, after the 70,000 step.
    second = _reads(*[Usage(t, 10) for t in (40_000, 50_000, 60_000, 70_000)])
    if summarizer == "slow":
        held = threading.Event()
        second[2].hold = held
        threading.Thread(target=lambda: (writer.second.wait(10), held.set()), daemon=True).start()
    fake_llm.push(*second, Reply(text="Read four.", usage=Usage(75_000, 10)))
    loop.prompt(SES, "read four more")
    job = loop.runtime.background.job(SES)
    assert job is not None and job.done.wait(30) and writer.asked == 2
    if summarizer == "slow":
        assert writer.arrived_with[1] <= before + 3  # after the 50,000 step, before the 60,000 one ended
    else:
        assert writer.arrived_with[1] >= before + 4  # once the 70,000 step was answered
    _finish(loop)
