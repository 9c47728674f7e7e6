"""OpenCode's token estimate (§2.3, §10.5) and the request estimate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentcli.llm.lazy import get_litellm
from agentcli.llm.tokens import estimate, estimate_json, estimate_request, utf16_length

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("text", "tokens"), [("x" * 4000, 1000), ("y" * 20000, 5000), ("", 0)])
def test_t1_t3(text: str, tokens: int) -> None:
    assert estimate(text) == tokens


@pytest.mark.parametrize(
    ("chars", "tokens"),
    [(1, 0), (2, 1), (3, 1), (5, 1), (6, 2), (10, 3), (14, 4), (18, 5)],  # halves round up, unlike round()
)
def test_rounding_is_javascripts(chars: int, tokens: int) -> None:
    assert estimate("a" * chars) == tokens


def test_length_is_utf16_code_units() -> None:
    assert utf16_length("😀") == 2 and utf16_length("é") == 1 and utf16_length("日本") == 2
    assert estimate("😀" * 3) == 2  # 6 code units → 1.5 → 2 (len() would say 3 → 1)
    assert estimate("é" * 6) == 2
    assert estimate("\ud83d") == 0  # a lone surrogate does not raise


def test_estimate_json_is_json_stringify() -> None:
    value = {"role": "user", "content": "héllo"}
    assert estimate_json(value) == estimate('{"role":"user","content":"héllo"}')


def test_request_estimate_without_litellm_never_imports_it() -> None:
    code = (
        "import sys, json\n"
        "from agentcli.llm.tokens import estimate_request, estimate_json\n"
        "msgs = [{'role': 'user', 'content': 'hello ' * 100}]\n"
        "tools = [{'type': 'function', 'function': {'name': 'bash'}}]\n"
        "print(json.dumps([estimate_request(msgs), estimate_json(msgs),\n"
        "                  estimate_request(msgs, tools),\n"
        "                  estimate_json({'messages': msgs, 'tools': tools}),\n"
        "                  'litellm' in sys.modules]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    got, expected, with_tools, expected_tools, imported = json.loads(out.stdout)
    assert got == expected and with_tools == expected_tools
    assert imported is False


def test_a_request_counts_the_same_once_litellm_has_loaded() -> None:
    # The size decides the pre-flight compaction: it must not change when a background import of
    # litellm finishes (before, a model litellm knows was counted by its tokenizer from then on).
    msgs = [{"role": "user", "content": "The quick brown fox jumps over the lazy dog. " * 20}]
    tools = [{"type": "function", "function": {"name": "bash"}}]
    before = estimate_request(msgs, tools)
    litellm = get_litellm()
    assert litellm.token_counter(model="gpt-4o", messages=msgs) != estimate_json(msgs)  # they differ
    assert estimate_request(msgs, tools) == before == estimate_json({"messages": msgs, "tools": tools})


def test_request_estimate_never_raises() -> None:
    get_litellm()
    odd = [{"role": "user", "content": object()}, {"role": "user", "content": {1, 2}}]
    assert isinstance(estimate_request(odd), int)  # type: ignore[arg-type]
    assert estimate_request([]) == 1  # "[]": 2 chars → 0.5 → rounds up
