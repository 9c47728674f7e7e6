"""Reasoning goes back as reasoning where the provider requires it (DeepSeek answers 400 when a
reasoning + tool-call step comes back without its reasoning_content) and is left out where providers
reject the field (Groq, Mistral, OpenAI-compatible servers in general)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace

REASONING = "The user wants the file; read it first."


def _assistant_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


def _turn(workspace: Workspace, fake_llm: FakeLLM, model: str, path: str) -> dict[str, Any]:
    """A reasoning + tool-call step, then the answer; the second request's body."""
    workspace.extra_env["AGENTCLI_LLM_PATH"] = path
    (workspace.project / "app.py").write_text("print('hi')\n")
    fake_llm.push(
        Reply(reasoning=REASONING, tool_calls=[ToolCall("read", {"filePath": "app.py"})]),
        Reply(text="It prints hi."),
    )
    proc = workspace.run("run", "--model", model, "--api-base", fake_llm.base_url, "what does app.py do?")
    assert proc.returncode == 0, proc.stderr
    [_, second] = fake_llm.chat_requests()
    return second.body


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_deepseek_gets_its_reasoning_back_after_a_tool_call(
    workspace: Workspace, fake_llm: FakeLLM, path: str
) -> None:
    body = _turn(workspace, fake_llm, "deepseek/deepseek-reasoner", path)
    [step] = _assistant_messages(body)
    assert step["reasoning_content"] == REASONING and step["tool_calls"]


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_other_providers_get_no_reasoning_field(workspace: Workspace, fake_llm: FakeLLM, path: str) -> None:
    body = _turn(workspace, fake_llm, "openai/test-model", path)
    [step] = _assistant_messages(body)
    assert "reasoning_content" not in step and step["tool_calls"]
