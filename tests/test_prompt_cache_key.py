"""OpenAI's ``prompt_cache_key``: the session id on every request of the session (every step, every
turn, the summary request too), for ``openai/`` models also at a custom base URL, on the lean path and
through litellm; ``provider.<id>.options.setCacheKey: false`` turns it off, and providers known to
reject it (Groq) never get it."""

from __future__ import annotations

from typing import Any

import pytest

from agentcli.llm import cache
from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace


def _provider(workspace: Workspace, provider: str = "fake", **options: Any) -> None:
    workspace.write_config(
        {
            "model": f"{provider}/test-model",
            "provider": {
                provider: {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": workspace.base_url, "apiKey": "sk-test", **options},
                    "models": {"test-model": {"limit": {"context": 100_000, "output": 8_000}}},
                }
            },
        }
    )


def _keys(fake_llm: FakeLLM) -> list[Any]:
    return [r.body.get("prompt_cache_key", "absent") for r in fake_llm.chat_requests()]  # titles apart


@pytest.mark.parametrize("path", ["lean", "litellm"])
def test_every_request_of_a_session_carries_its_id_as_the_cache_key(
    workspace: Workspace, fake_llm: FakeLLM, path: str
) -> None:
    workspace.extra_env["AGENTCLI_LLM_PATH"] = path
    (workspace.project / "app.py").write_text("print('hi')\n")
    fake_llm.push(Reply(tool_calls=[ToolCall("read", {"filePath": "app.py"})]), Reply(text="It prints hi."))
    first = workspace.run("run", "what does app.py do?")
    assert first.returncode == 0, first.stderr
    fake_llm.push(Reply(text="Still hi."))
    second = workspace.run("run", "--continue", "and now?")
    assert second.returncode == 0, second.stderr
    fake_llm.push(Reply(text="## Objective\n- explain app.py"))
    assert workspace.run("compact").returncode == 0
    [session] = workspace.store().list_sessions()
    assert _keys(fake_llm) == [session.id] * 4  # two steps, the next turn, the summary request
    title = next(r for r in fake_llm.requests if r.title)
    assert "prompt_cache_key" not in title.body  # not the session's conversation: nothing to share


def test_a_bare_model_at_api_base_gets_the_key_too(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="hi"))
    proc = workspace.run("run", "--model", "local-model", "--api-base", fake_llm.base_url, "say hi")
    assert proc.returncode == 0, proc.stderr
    [session] = workspace.store().list_sessions()
    assert _keys(fake_llm) == [session.id]


def test_set_cache_key_false_turns_it_off(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _provider(workspace, setCacheKey=False)
    fake_llm.push(Reply(text="hi"))
    proc = workspace.run("run", "say hi")
    assert proc.returncode == 0, proc.stderr
    assert _keys(fake_llm) == ["absent"]


def test_groq_never_gets_the_key_even_when_asked(workspace: Workspace, fake_llm: FakeLLM) -> None:
    # Groq answers 400 "property 'prompt_cache_key' is unsupported"; OpenCode's groq provider id,
    # its baseURL aimed at the scripted server (the lean path serves Groq).
    workspace.write_config(
        {
            "model": "groq/test-model",
            "provider": {
                "groq": {
                    "options": {"baseURL": workspace.base_url, "apiKey": "gsk-test", "setCacheKey": True},
                    "models": {"test-model": {"limit": {"context": 100_000, "output": 8_000}}},
                }
            },
        }
    )
    fake_llm.push(Reply(text="hi"))
    proc = workspace.run("run", "say hi")
    assert proc.returncode == 0, proc.stderr
    assert _keys(fake_llm) == ["absent"]


def test_which_providers_get_the_key() -> None:
    env: dict[str, str] = {}
    sends = [
        ("openai/gpt-4o", None, None),
        ("gpt-4o", None, None),  # a bare OpenAI name
        ("azure/gpt-4o", None, None),
        ("openai/qwen3", "http://127.0.0.1:8000/v1", None),  # a local OpenAI-compatible server ignores it
        ("deepseek/deepseek-chat", None, True),  # asked for
        ("openrouter/openai/gpt-4o", None, True),
    ]
    never = [
        ("openai/gpt-4o", None, False),  # turned off
        ("deepseek/deepseek-chat", None, None),  # not OpenAI's API: only when asked
        ("openai/llama-3.3-70b", "https://api.groq.com/openai/v1", None),  # Groq behind openai/
        ("openai/llama-3.3-70b", "https://api.groq.com/openai/v1", True),
        ("groq/llama-3.3-70b-versatile", None, True),
        ("openai/gemini-2.5-pro", "https://generativelanguage.googleapis.com/v1beta/openai", None),
        ("anthropic/claude-sonnet-4-5", None, True),  # Anthropic has no such field
        ("claude-sonnet-4-5", None, True),
    ]
    assert [s for s in sends if not cache.sends_cache_key(*s, env=env)] == []
    assert [s for s in never if cache.sends_cache_key(*s, env=env)] == []
    assert not cache.sends_cache_key(
        "openai/x", None, None, env={"OPENAI_BASE_URL": "https://api.groq.com/v1"}
    )
