"""The summary request: by default the conversation exactly as last sent with the compaction
instruction as the last user message (it rides the provider's prompt cache); with
``"compaction": {"request": "transcript"}`` OpenCode's transcript request, byte for byte as before
(the golden files were captured from the code before the cache-riding request existed).

Both paths: the OpenAI-compatible one (litellm to the scripted server) and Anthropic's (the lean
path to the scripted server's /v1/messages)."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentcli.session.loop import SessionLoop
from agentcli.session.model import resolve_model
from agentcli.session.options import LoopOptions
from agentcli.session.permission import PermissionPolicy
from agentcli.session.runtime import SessionRuntime
from agentcli.store.records import SessionInfo
from agentcli.trusted_config import load_config
from tests.fakellm import FakeLLM, Recorded, Reply
from tests.test_history import SES, assistant, marker, summary_of, tool, user
from tests.workspace import make_workspace

GOLDEN = Path(__file__).parent / "fixtures" / "compaction_requests"
OPENAI = "fake/test-model"
ANTHROPIC = "anthropic/claude-sonnet-4-5"
SUMMARIZER = "You write the working summary"
INSTRUCTION = "Write the summary of the conversation above."


def _loop(tmp: Path, server: FakeLLM, model: str, compaction: dict[str, Any] | None) -> SessionLoop:
    ws = make_workspace(tmp, server.base_url)
    limit = {"context": 100_000, "output": 8_000}
    if model == ANTHROPIC:
        provider = {
            "anthropic": {
                "options": {"baseURL": server.base_url, "apiKey": "sk-ant-test"},
                "models": {"claude-sonnet-4-5": {"limit": limit}},
            }
        }
    else:
        provider = {
            "fake": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": server.base_url, "apiKey": "sk-test"},
                "models": {"test-model": {"limit": limit}},
            }
        }
    config: dict[str, Any] = {"model": model, "provider": provider}
    if compaction is not None:
        config["compaction"] = compaction
    (ws.project / "opencode.json").write_text(json.dumps(config))
    (ws.project / "AGENTS.md").write_text("Run the tests after every change.\n")
    home = ws.home
    loaded = load_config(
        cwd=ws.project,
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "AGENTCLI_TRUST_ALL": "1"},
    )
    resolved = resolve_model(model, loaded.config.providers_dict(), env={})
    from agentcli.tools.registry import all_tools

    loop = SessionLoop(
        SessionRuntime(
            store=ws.store(),
            config=loaded.config,
            model=resolved,
            options=LoopOptions(directory=ws.project, data_dir=tmp / "data"),
            tools={t.name: t for t in all_tools([])},
            policy=PermissionPolicy(yes=True),
        )
    )
    loop.runtime.store.put_session(
        SessionInfo(id=SES, directory=str(ws.project), model=resolved.name, title="t")
    )
    return loop


def _history(model: str) -> list[Any]:
    """A session with an earlier compaction, tool calls, and a secret in a tool output."""
    name = model.partition("/")[2] if model == ANTHROPIC else model
    u1 = user("fix the parser in src/parse.py", model=name)
    a1 = assistant(
        u1,
        tool("read", "def parse(x):\n    return x.split(',')\n", input={"filePath": "src/parse.py"}),
        "The parser splits on commas.",
        model=name,
    )
    m1 = marker()
    s1 = summary_of(m1, "## Objective\n- fix the parser", model=name)
    u2 = user("now run the tests", model=name)
    a2 = assistant(
        u2,
        tool(
            "bash",
            "FAILED test_parse - AssertionError\nGITHUB_TOKEN=ghp_R7q2xPz9LmN4vB8kT1wY6cJ3hF5dS0aGe2Ku",
        ),
        "One test fails: test_parse.",
        model=name,
    )
    u3 = user("fix it and rerun", model=name)
    a3 = assistant(
        u3, tool("edit", "Edit applied.", input={"filePath": "src/parse.py"}), "Fixed.", model=name
    )
    return [u1, a1, m1, s1, u2, a2, u3, a3]


def _summary_request(server: FakeLLM, before: int) -> Recorded:
    sent = [r for r in server.chat_requests()[before:] if not r.title]
    assert len(sent) == 1, [r.body for r in sent]
    return sent[0]


def _compact(
    tmp: Path, server: FakeLLM, model: str, compaction: dict[str, Any] | None
) -> tuple[Recorded, list[Recorded]]:
    """A manual compaction of the history above; returns its summary request and the requests
    before it (one chat step sent first, so there is an earlier request to share a prefix with)."""
    loop = _loop(tmp, server, model, compaction)
    loop.runtime.store.import_messages(_history(model))
    before = len(server.chat_requests())
    server.push(Reply(text="All tests pass now."))
    loop.prompt(SES, "are the tests green?")
    earlier = [r for r in server.chat_requests()[before:] if not r.title]
    start = len(server.chat_requests())
    server.push(Reply(text="## Objective\n- the parser fixed"))
    assert loop.compact(SES)
    if loop.title_thread is not None:
        loop.title_thread.join(10)
    loop.runtime.store.close()
    return _summary_request(server, start), earlier


def _golden_body(body: dict[str, Any]) -> dict[str, Any]:
    """What the golden files keep: everything but the model's name."""
    return {k: v for k, v in body.items() if k != "model"}


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC], ids=["openai-compatible", "anthropic"])
def test_the_transcript_key_sends_the_summary_request_exactly_as_before(
    tmp_path: Path, fake_llm: FakeLLM, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    request, _ = _compact(tmp_path, fake_llm, model, {"request": "transcript"})
    got = _golden_body(request.body)
    path = GOLDEN / f"{'anthropic' if model == ANTHROPIC else 'openai'}_transcript.json"
    if os.environ.get("AGENTCLI_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    assert got == json.loads(path.read_text())


def _unmarked(value: Any) -> Any:
    """``value`` without cache_control marks (they move by design: the newest messages get them)."""
    if isinstance(value, dict):
        return {k: _unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_unmarked(v) for v in value]
    return value


def _text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


@pytest.mark.parametrize("model", [OPENAI, ANTHROPIC], ids=["openai-compatible", "anthropic"])
def test_the_summary_request_is_the_conversation_as_last_sent_with_the_instruction_last(
    tmp_path: Path, fake_llm: FakeLLM, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    request, earlier = _compact(tmp_path, fake_llm, model, None)
    body, last = request.body, earlier[-1].body
    # The same system prompt, tools and conversation: the earlier request is a prefix of this one.
    assert body.get("system") == last.get("system")
    assert body["tools"] == last["tools"] and body["tools"]
    sent = _unmarked(last["messages"])
    assert _unmarked(body["messages"][: len(sent)]) == sent
    # Then the step's answer, and the instruction as the last user message, worded as before.
    newest = body["messages"][-1]
    assert newest["role"] == "user"
    assert INSTRUCTION in _text(newest) and "<template>" in _text(newest)
    assert "Do not call any tools" in _text(newest)
    assert "now run the tests" not in _text(newest)  # no transcript: the conversation is above it
    assert "All tests pass now." in json.dumps(body["messages"][len(sent) :])
    if model == ANTHROPIC:
        # Anthropic keys its message cache on tool_choice: none is sent; the instruction forbids calls.
        assert "tool_choice" not in body
        assert sum(json.dumps(body).count('"cache_control"') for _ in [0]) <= 4
    else:
        assert body["tool_choice"] == "none"  # OpenAI's protocol: outside the cached prompt


def test_the_instruction_names_where_the_kept_tail_starts_and_asks_to_merge_the_previous_summary(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTCLI_LLM_PATH", "lean")
    request, _ = _compact(tmp_path, fake_llm, OPENAI, None)
    text = _text(request.body["messages"][-1])
    assert "“fix it and rerun” to the end stay in the context word for word" in text
    assert "begins with the summary written the last time it was shortened" in text


def test_a_stray_tool_call_in_the_summary_is_dropped_and_the_summary_kept(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakellm import ToolCall

    loop = _loop(tmp_path, fake_llm, OPENAI, None)
    loop.runtime.store.import_messages(_history(OPENAI))
    fake_llm.push(Reply(text="## Objective\n- parser", tool_calls=[ToolCall("bash", {"command": "ls"})]))
    assert loop.compact(SES)
    summary = [m for m in loop.runtime.store.messages(SES) if getattr(m.info, "summary", False)][-1]
    assert summary.info.finish == "stop" and summary.info.error is None  # type: ignore[union-attr]
    assert summary.text().startswith("## Objective")
    assert not any(p.type == "tool" for p in summary.parts)


def test_a_summary_that_only_calls_a_tool_is_asked_again_as_a_transcript(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakellm import ToolCall

    loop = _loop(tmp_path, fake_llm, OPENAI, None)
    loop.runtime.store.import_messages(_history(OPENAI))
    start = len(fake_llm.chat_requests())
    fake_llm.push(
        Reply(tool_calls=[ToolCall("bash", {"command": "ls"})]), Reply(text="## Objective\n- parser")
    )
    assert loop.compact(SES)
    sent = [r.body for r in fake_llm.chat_requests()[start:] if not r.title]
    assert len(sent) == 2
    assert "tools" in sent[0] and "tools" not in sent[1]
    assert sent[1]["messages"][0]["content"].startswith(SUMMARIZER)
    summary = [m for m in loop.runtime.store.messages(SES) if getattr(m.info, "summary", False)][-1]
    assert summary.text() == "## Objective\n- parser"


def test_a_summarizer_of_another_model_gets_the_transcript(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = _loop(tmp_path, fake_llm, OPENAI, None)
    route = dataclasses.replace(loop.runtime.model.route, display="fake/other-model")
    loop.runtime.compaction_model = dataclasses.replace(loop.runtime.model, route=route)
    loop.runtime.store.import_messages(_history(OPENAI))
    start = len(fake_llm.chat_requests())
    fake_llm.push(Reply(text="## Objective\n- parser"))
    assert loop.compact(SES)
    [body] = [r.body for r in fake_llm.chat_requests()[start:] if not r.title]
    assert body["messages"][0]["content"].startswith(SUMMARIZER) and "tools" not in body
