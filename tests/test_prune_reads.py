"""Pruning after a turn reads only as far back as its walk can go (the first already-pruned output),
so its cost follows recent history, not the session's age — and it prunes exactly as a full read would."""

from __future__ import annotations

from pathlib import Path

from agentcli.session.compaction import prune
from agentcli.store.records import ToolPart
from tests.builders import Harness, counting
from tests.fakellm import FakeLLM
from tests.test_history import SES, assistant, tool, user

BIG = "x" * 60_000  # 15,000 estimated tokens per output


def _turns(n: int, compacted_before: int) -> list:
    msgs = []
    for i in range(n):
        question = user(f"turn {i}")
        stamp = 1 if i < compacted_before else None
        msgs += [question, assistant(question, tool("bash", BIG, compacted=stamp))]
    return msgs


def test_prune_stops_reading_at_the_first_pruned_output(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = Harness.make(tmp_path, fake_llm, session_id=SES)
    history = _turns(300, compacted_before=290)  # 600 messages, the oldest 290 outputs already pruned
    h.store.import_messages(history)
    expected = prune.plan(h.store.messages(SES))  # what a walk over the whole session decides

    pulled = [0]
    real_stream = h.store.stream
    h.store.stream = lambda sid, page=50: counting(real_stream(sid, page), pulled)  # type: ignore[method-assign]
    try:
        tokens = h.loop.prune(SES)
    finally:
        h.store.stream = real_stream  # type: ignore[method-assign]

    assert pulled[0] <= 30  # the 10 unpruned turns and the first pruned one, not 600 messages
    assert tokens == expected.tokens > 0
    now = {
        p.id
        for m in h.store.messages(SES)
        for p in m.parts
        if isinstance(p, ToolPart) and p.state.time.compacted
    }
    assert {p.id for p in expected.parts} <= now
    assert len(now) == 290 + len(expected.parts)
