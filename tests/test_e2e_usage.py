"""Usage is what the provider reported, never made up: a stream without usage gives a step that says
so, an estimate the gauge marks as one, and nothing added to the session's billed totals."""

from __future__ import annotations

import pytest

from agentcli.store.records import AssistantMessage, StepFinishPart
from tests.fakellm import FakeLLM, Reply
from tests.fakellm import Usage as WireUsage
from tests.workspace import Workspace


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_a_stream_without_usage_is_estimated_visibly(
    workspace: Workspace, fake_llm: FakeLLM, path: str
) -> None:
    workspace.extra_env["AGENTCLI_LLM_PATH"] = path
    fake_llm.push(Reply(text="hello there, " * 50, send_usage=False))
    proc = workspace.run("run", "hi " * 200, timeout=120)
    assert proc.returncode == 0, proc.stderr
    store = workspace.store()
    [session] = store.list_sessions()
    answer = next(m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage))
    [finish] = [p for p in answer.parts if isinstance(p, StepFinishPart)]
    assert finish.tokens.estimated and answer.info.tokens.estimated  # the step says so
    # The gauge and the overflow check have a figure: the request (~200 words) and the answer.
    assert session.context_estimated and session.context_tokens > 150
    assert session.tokens.total == 0 and session.cost == 0  # nothing invented in the billed totals


def test_reported_usage_is_taken_as_is(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="hello", usage=WireUsage(1234, 56)))
    proc = workspace.run("run", "hi", timeout=120)
    assert proc.returncode == 0, proc.stderr
    [session] = workspace.store().list_sessions()
    assert not session.context_estimated and session.context_tokens == 1234 + 56
    assert session.tokens.total >= 1234 + 56
