"""Images reach only a model that takes them, as OpenCode's ``unsupportedParts`` has it: an image
attached to the message (``@pic.png``) or returned by a tool (``read``) goes to a model whose
capabilities (the config's ``modalities``/``attachment``, else litellm's model map) say images, and
to any other as OpenCode's error text. The CLI in a subprocess, the scripted server on both wire
formats (OpenAI chat completions and Anthropic Messages)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.fakellm import FakeLLM, Reply, ToolCall
from tests.workspace import Workspace

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
B64 = base64.b64encode(PNG).decode()
REFUSED = 'ERROR: Cannot read "{}" (this model does not support image input). Inform the user.'


def _turn(workspace: Workspace, fake_llm: FakeLLM) -> list[dict[str, Any]]:
    """A message attaching pic.png, then the model reading shot.png; the bodies of both requests."""
    (workspace.project / "pic.png").write_bytes(PNG)
    (workspace.project / "shot.png").write_bytes(PNG)
    fake_llm.push(Reply(tool_calls=[ToolCall("read", {"filePath": "shot.png"})]), Reply(text="Seen."))
    proc = workspace.run("run", "what is in @pic.png?")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [r.body for r in fake_llm.chat_requests()[:2]]


def _openai_config(workspace: Workspace, **model: Any) -> None:
    config = workspace.write_config()
    config["provider"]["fake"]["models"]["test-model"].update(model)
    workspace.write_config(config)


@pytest.mark.parametrize("model", [{}, {"modalities": {"input": ["text"]}}, {"attachment": False}])
def test_a_model_that_takes_no_images_is_told_so_in_opencodes_words(
    workspace: Workspace, fake_llm: FakeLLM, model: dict[str, Any]
) -> None:
    _openai_config(workspace, **model)  # {}: a model nobody describes takes no images, as in OpenCode
    first, second = _turn(workspace, fake_llm)
    assert B64 not in json.dumps(first) + json.dumps(second)
    assert "image_url" not in json.dumps(second)
    assert first["messages"][-1]["content"] == f"what is in @pic.png?\n\n{REFUSED.format('pic.png')}"
    # The read image follows the tool results as the user's, as its error text.
    assert second["messages"][-1] == {
        "role": "user",
        "content": [
            {"type": "text", "text": "Attached media from tool result:"},
            {"type": "text", "text": REFUSED.format("shot.png")},
        ],
    }


@pytest.mark.parametrize(
    "model",
    [{"modalities": {"input": ["text", "image"]}}, {"attachment": True}],
    ids=["modalities", "attachment"],
)
def test_a_model_that_takes_images_gets_both_images(
    workspace: Workspace, fake_llm: FakeLLM, model: dict[str, Any]
) -> None:
    _openai_config(workspace, **model)
    first, second = _turn(workspace, fake_llm)
    url = f"data:image/png;base64,{B64}"
    assert {"type": "image_url", "image_url": {"url": url}} in first["messages"][-1]["content"]
    assert {"type": "image_url", "image_url": {"url": url}} in second["messages"][-1]["content"]
    assert "Cannot read" not in json.dumps(second)


def _anthropic_config(workspace: Workspace, fake_llm: FakeLLM, **model: Any) -> None:
    workspace.extra_env["AGENTCLI_LLM_PATH"] = "lean"
    entry = {"limit": {"context": 200_000, "output": 8_000}, **model}
    workspace.write_config(
        {
            "model": "anthropic/claude-sonnet-4-5",
            "provider": {
                "anthropic": {
                    "options": {"baseURL": fake_llm.base_url, "apiKey": "sk-ant-test"},
                    "models": {"claude-sonnet-4-5": entry},
                }
            },
        }
    )


def _blocks(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]


def test_anthropic_a_vision_model_gets_image_blocks_by_litellms_map(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _anthropic_config(workspace, fake_llm)  # no modalities: litellm's map says claude takes images
    first, second = _turn(workspace, fake_llm)
    assert [b["source"]["data"] for b in _blocks(first) if b["type"] == "image"] == [B64]
    assert [b["source"]["data"] for b in _blocks(second) if b["type"] == "image"] == [B64, B64]


def test_anthropic_a_model_declared_text_only_gets_the_error_text(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    _anthropic_config(workspace, fake_llm, modalities={"input": ["text"]})
    first, second = _turn(workspace, fake_llm)
    assert B64 not in json.dumps(first) + json.dumps(second)
    assert not [b for b in _blocks(second) if b["type"] == "image"]
    texts = [b.get("text", "") for b in _blocks(second)]
    assert any(REFUSED.format("pic.png") in t for t in texts)
    assert any(REFUSED.format("shot.png") in t for t in texts)
