"""Plugins own more of a compaction (OpenCode's newer hooks, issue 17): ``session_compacting`` may
write the summary itself, decline or delay an automatic compaction — within limits that keep the
session alive. In-process: the real loop and store, the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.plugins import hookimpl
from agentcli.session import events
from agentcli.session.compaction.hooks import MAX_DELAYS, hear, hook_output
from tests.builders import Harness
from tests.fakellm import ErrorResponse, FakeLLM, Reply, ToolCall, Usage, is_summary_request

SMALL = Usage(300, 10)
OVER = Usage(42_500, 10)  # usable = 50,000 − 8,000 = 42,000


def _is_summary(body: dict[str, Any]) -> bool:
    return is_summary_request(body)


class _Plugin:
    def __init__(self, **output: Any) -> None:
        self.output = output
        self.inputs: list[dict[str, Any]] = []

    @hookimpl
    def session_compacting(self, input: dict[str, Any], output: dict[str, Any]) -> None:
        self.inputs.append(dict(input))
        output.update(self.output)


def _harness(tmp_path: Path, fake_llm: FakeLLM, plugin: _Plugin) -> Harness:
    return Harness.make(tmp_path, fake_llm, plugins=[plugin], context=50_000, output=8_000)


def test_a_plugin_writes_the_summary_itself_and_no_model_is_asked(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _harness(tmp_path, fake_llm, _Plugin(summary="## Objective\n- PLUGIN-MADE SUMMARY"))
    fake_llm.push(Reply(text="one", usage=SMALL))
    h.loop.prompt(h.sid, "first question")
    assert h.loop.compact(h.sid)
    assert not any(_is_summary(r.body) for r in fake_llm.chat_requests())
    fake_llm.push(Reply(text="two", usage=SMALL))
    h.loop.prompt(h.sid, "next")
    assert "PLUGIN-MADE SUMMARY" in json.dumps(fake_llm.chat_requests()[-1].body["messages"])
    [summary] = h.summaries()
    assert summary.info.finish == "stop"  # type: ignore[union-attr]


def test_a_delayed_automatic_compaction_waits_for_the_next_step_but_not_forever(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    plugin = _Plugin(delay=True)
    h = _harness(tmp_path, fake_llm, plugin)
    fake_llm.push(  # every step overflows
        *[Reply(tool_calls=[ToolCall("probe", {"n": i})], usage=OVER) for i in range(MAX_DELAYS + 1)],
        Reply(text="## Objective\n- compacted at last", usage=SMALL),
        Reply(text="done", usage=SMALL),
    )
    h.loop.prompt(h.sid, "work")
    bodies = [r.body for r in fake_llm.chat_requests()]
    summaries = [i for i, b in enumerate(bodies) if _is_summary(b)]
    # Each delay let one more step run; the fourth time the plugin is overruled.
    assert summaries == [MAX_DELAYS + 1] and len(plugin.inputs) == MAX_DELAYS + 1
    failed = [e.message for e in h.of(events.CompactionFailed)]
    assert sum("delayed the automatic compaction" in m for m in failed) == MAX_DELAYS
    assert any("compacting anyway: a plugin delayed it 3 times" in m for m in failed)
    assert h.assistants()[-1].text() == "done"


def test_a_declined_compaction_still_happens_on_a_hard_overflow(tmp_path: Path, fake_llm: FakeLLM) -> None:
    plugin = _Plugin(block=True)
    h = _harness(tmp_path, fake_llm, plugin)
    fake_llm.push(Reply(text="one", usage=SMALL), Reply(text="two", usage=SMALL))
    h.loop.prompt(h.sid, "first question")
    h.loop.prompt(h.sid, "second question")
    fake_llm.push(
        ErrorResponse.context_length(),  # the provider rejects the request: the session would die
        Reply(text="## Objective\n- answer questions", usage=SMALL),
        Reply(text="three", usage=SMALL),
    )
    h.loop.prompt(h.sid, "third question")
    assert plugin.inputs[-1]["hard"] and plugin.inputs[-1]["overflow"]
    assert len(h.summaries()) == 1 and h.assistants()[-1].text() == "three"
    assert any("but the context no longer fits" in e.message for e in h.of(events.CompactionFailed))


def test_what_is_heard_of_a_plugin() -> None:
    def heard(automatic: bool, hard: bool = False, delays: int = 0, **out: Any) -> str:
        return hear({**hook_output(), **out}, automatic=automatic, hard=hard, delays=delays).action

    assert heard(False, block=True) == "cancel"  # /compact, agentcli compact: a plugin may cancel
    assert heard(False, delay=True) == "compact"  # someone asked for it now
    assert heard(True, block=True) == "decline"
    assert heard(True, delay=True) == "delay"
    assert heard(True, hard=True, block=True) == "compact"
    assert heard(True, delays=MAX_DELAYS, delay=True) == "compact"


def test_two_compactions_asked_at_once_in_one_process_make_one_summary(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    import threading

    from agentcli.session.loop import SessionLoop
    from agentcli.session.options import LoopOptions
    from agentcli.session.runtime import SessionRuntime

    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(Reply(text="one", usage=SMALL))
    h.loop.prompt(h.sid, "first question")
    waiting, entered, release = threading.Event(), threading.Event(), threading.Event()

    def held(_rec: Any) -> Reply:
        entered.set()
        release.wait(60)
        return Reply(text="## Objective\n- the one summary", usage=SMALL)

    fake_llm.on(lambda r: _is_summary(r.body), held)
    other = SessionLoop(
        SessionRuntime(
            store=type(h.store)(h.store.target),
            config=h.runtime.config,
            model=h.runtime.model,
            options=LoopOptions(
                directory=h.project, data_dir=tmp_path / "d2", on_busy=lambda _m: waiting.set()
            ),
            tools={},
        )
    )
    results: dict[str, bool] = {}
    first = threading.Thread(target=lambda: results.setdefault("first", h.loop.compact(h.sid)))
    first.start()
    assert entered.wait(60)
    second = threading.Thread(target=lambda: results.setdefault("second", other.compact(h.sid)))
    second.start()
    assert waiting.wait(60)  # the second read the session and waits for the first's lease
    release.set()
    first.join(60)
    second.join(60)
    assert results == {"first": True, "second": False}
    assert len(h.summaries()) == 1
