"""Aborting a turn while it waits to retry (OpenCode's PR13): the wait ends at once, the assistant
message is marked aborted, and nothing more is sent."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from agentcli.session import events
from tests.builders import Harness
from tests.fakellm import ErrorResponse, FakeLLM


def test_abort_during_retry_backoff_stops_quickly(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm)
    fake_llm.push(ErrorResponse.rate_limited(retry_after=10))
    abort = threading.Event()
    done = threading.Event()
    box: dict = {}

    def turn() -> None:
        box["last"] = h.loop.prompt(h.sid, "hello", abort)
        done.set()

    worker = threading.Thread(target=turn, daemon=True)
    worker.start()
    deadline = time.monotonic() + 20
    while not h.of(events.Retrying) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert h.of(events.Retrying), "the rate limit was not retried"
    abort.set()
    assert done.wait(8), "the turn kept waiting for its retry (10 s)"
    [assistant] = h.assistants()
    assert assistant.info.error is not None and assistant.info.error.name == "MessageAbortedError"
    assert len(fake_llm.chat_requests()) == 1
