"""A long session into a 24k window on a local server of each shape, with no limit in any config:
the window is found (asked of the server, or learned from its one overflow error), the session
compacts before any request larger than the window is sent, every turn exits 0, and
`agentcli context` names the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentcli.demo.local_servers import LocalServer
from tests.fakellm import FakeLLM, Reply
from tests.workspace import make_workspace

WINDOW = 24_576
TURNS = 7
WORDS = "the quick brown fox jumps over the lazy dog while the session keeps growing; " * 180  # ~3.5k tokens


def _local_workspace(tmp_path: Path, server: FakeLLM):  # type: ignore[no-untyped-def]
    ws = make_workspace(tmp_path, server.base_url)
    config = {
        "model": "local/test-model",
        "provider": {
            "local": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": server.base_url},
                "models": {"test-model": {}},  # no limit: the window is the server's to tell
            }
        },
    }
    (ws.project / "opencode.json").write_text(json.dumps(config))
    return ws


@pytest.mark.parametrize("shape", ["vllm", "llamacpp", "lmstudio", "ollama", "litellm", "error-only"])
def test_a_long_session_into_a_24k_local_window_compacts_before_overflowing(
    tmp_path: Path, shape: str
) -> None:
    with FakeLLM() as server:
        server.local = LocalServer(shape, WINDOW)
        server.fallback = Reply(text="noted.")
        ws = _local_workspace(tmp_path, server)
        for turn in range(TURNS):
            proc = ws.run("run", *(["--continue"] if turn else []), f"part {turn}: {WORDS}")
            assert proc.returncode == 0, proc.stderr
        context = ws.run("context")
    local = server.local
    sent_over = [size for size in local.prompts if size > WINDOW]
    if shape == "error-only":
        assert local.overflows == 1, local.prompts  # learned from its one error, never hit again
        assert len(sent_over) == 1
    else:
        assert sent_over == [], local.prompts
        assert local.overflows == 0
    assert sum(local.prompts) > 2 * WINDOW  # the session really outgrew the window
    assert context.returncode == 0, context.stderr
    assert "window 24.6k" in context.stdout, context.stdout
    assert "limit unknown" not in context.stdout


def test_a_server_that_never_says_its_window_gets_the_default_said_in_one_line(tmp_path: Path) -> None:
    with FakeLLM() as server:
        server.fallback = Reply(text="hello")
        ws = _local_workspace(tmp_path, server)
        proc = ws.run("run", "hi")
        context = ws.run("context")
    assert proc.returncode == 0, proc.stderr
    said = [
        line for line in proc.stderr.splitlines() if "context window of local/test-model is unknown" in line
    ]
    assert len(said) == 1, proc.stderr
    assert "32,768" in said[0]
    assert "window 32.8k (a default" in context.stdout, context.stdout


def test_ollama_cutting_a_prompt_silently_is_said_once_and_its_window_learned(tmp_path: Path) -> None:
    """Ollama's OpenAI endpoint truncates past its num_ctx without an error; here it says 32k in
    /api/show but cuts at 16k (a server started with another OLLAMA_CONTEXT_LENGTH)."""
    with FakeLLM() as server:
        server.local = LocalServer("ollama", 65_536, cuts_at=16_384)
        server.fallback = Reply(text="noted.")
        ws = _local_workspace(tmp_path, server)
        runs = [
            ws.run("run", *(["--continue"] if turn else []), f"part {turn}: {WORDS}") for turn in range(6)
        ]
        context = ws.run("context")
    assert all(proc.returncode == 0 for proc in runs), [proc.stderr for proc in runs]
    said = [line for proc in runs for line in proc.stderr.splitlines() if "cut the prompt" in line]
    assert len(said) == 1, [proc.stderr for proc in runs]
    assert "16,384 tokens" in said[0]
    assert "window 16.4k" in context.stdout, context.stdout
