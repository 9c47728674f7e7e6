"""A prefix that holds still, so the provider's prompt cache serves it: the system prompt is built once
per session and process and sent byte for byte at every step (an instruction file edited mid-turn
shows from the next user turn), and the memory plugin's per-step figures go after the newest message,
never into the cached prefix — with the plugin on, every step's request starts with the previous one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.plugins.memory import make_plugin
from agentcli.session.permission import PermissionPolicy
from agentcli.tools.registry import all_tools
from tests.builders import Harness
from tests.fakellm import FakeLLM, Recorded, Reply, ToolCall, Usage


def _harness(tmp_path: Path, fake_llm: FakeLLM, plugins: list[Any] | None = None) -> Harness:
    return Harness.make(
        tmp_path,
        fake_llm,
        plugins=plugins,
        tools={t.name: t for t in all_tools([])},
        policy=PermissionPolicy(yes=True),
        context=200_000,
        output=8_000,
    )


def _system(rec: Recorded) -> list[str]:
    return [m["content"] for m in rec.body["messages"] if m["role"] == "system"]


def _turn(h: Harness, fake_llm: FakeLLM, text: str, *replies: Reply) -> list[Recorded]:
    before = len(fake_llm.chat_requests())
    fake_llm.push(*replies)
    h.loop.prompt(h.sid, text)
    return fake_llm.chat_requests()[before:]


def test_instruction_file_edited_mid_turn_shows_from_the_next_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    h = _harness(tmp_path, fake_llm)
    agents = h.project / "AGENTS.md"
    agents.write_text("Rule: version one.\n")
    first = _turn(
        h,
        fake_llm,
        "update the rules",
        Reply(tool_calls=[ToolCall("read", {"filePath": str(agents)})]),
        Reply(tool_calls=[ToolCall("write", {"filePath": str(agents), "content": "Rule: version two.\n"})]),
        Reply(text="Updated."),
    )
    assert agents.read_text() == "Rule: version two.\n"  # written during the turn's second step
    assert len(first) == 3
    assert _system(first[0]) == _system(first[1]) == _system(first[2])  # byte for byte, every step
    assert "Rule: version one." in _system(first[2])[1]
    [second] = _turn(h, fake_llm, "and now?", Reply(text="Version two."))
    assert "Rule: version two." in _system(second)[1]
    assert _system(second)[0] == _system(first[0])[0]  # the agent prompt and environment: unchanged


def test_the_system_prompt_is_built_once_per_session(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = _harness(tmp_path, fake_llm)
    _turn(h, fake_llm, "one", Reply(text="a"))
    # Were the environment block built again, the date (and the whole prefix after it) could change
    # between two steps; as built at the session's start it stays.
    monkeypatch.setattr("agentcli.session.request.system.environment", lambda *_: "Today's date: another day")
    [later] = _turn(h, fake_llm, "two", Reply(text="b"))
    assert "another day" not in _system(later)[0] and "Today's date:" in _system(later)[0]


@pytest.mark.parametrize("memory", [False, True], ids=["plain", "memory-plugin"])
def test_each_steps_request_starts_with_the_previous_one(
    tmp_path: Path, fake_llm: FakeLLM, memory: bool
) -> None:
    h = _harness(tmp_path, fake_llm, [make_plugin()] if memory else [])
    steps = []
    for n in range(4):
        (h.project / f"m{n}.py").write_text(f"x = {n}\n")
        read = ToolCall("read", {"filePath": str(h.project / f"m{n}.py")})
        steps.append(Reply(tool_calls=[read], usage=Usage(1000 + 500 * n, 20)))
    sent = _turn(h, fake_llm, "read it a few times", *steps, Reply(text="done", usage=Usage(9000, 5)))
    assert len(sent) == 5
    for before, after in zip(sent, sent[1:], strict=False):
        previous, now = before.body["messages"], after.body["messages"]
        if memory:  # the figures: last, and new at each step
            assert previous[-1]["content"].startswith("<system-reminder>") and previous[-1] != now[-1]
            previous = previous[:-1]
        assert now[: len(previous)] == previous
    blocks = [m["content"] for m in sent[-1].body["messages"] if m["role"] == "system"]
    assert not any("Context:" in b for b in blocks)
