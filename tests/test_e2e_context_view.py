"""`agentcli context` and `/context`: the window by category, adding up to the gauge."""

from __future__ import annotations

import re

from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.terminal import leave, say, spawn
from tests.workspace import Workspace

# A negative difference (the estimate above the provider's count) shows a negative share too.
ROW = re.compile(r"^■ (?P<label>[^\d(]+?)(?: \(.*\))?\s+(?P<tokens>−?[\d.]+k?)\s+-?[\d.]+%$")


def _tokens(text: str) -> int:
    sign = -1 if text.startswith("−") else 1
    text = text.lstrip("−")
    return sign * round(float(text[:-1]) * 1000) if text.endswith("k") else sign * int(text)


def _seeded(ws: Workspace, llm: FakeLLM) -> str:
    (ws.project / "notes.txt").write_text("remember the milk\n" * 200)
    sid = ws.seed_turns(
        llm,
        [
            ("first question", Reply(text="first answer " * 50, usage=Usage(2_000, 10))),
            ("second question", Reply(text="second answer", usage=Usage(2_500, 10))),
        ],
    )
    ws.seed_compaction(llm, Reply(text="## Objective\n- answer questions", usage=Usage(3_000, 50)), sid)
    llm.push(
        Reply(
            tool_calls=[ToolCall("read", {"filePath": str(ws.project / "notes.txt")})], usage=Usage(3_100, 10)
        )
    )
    ws.seed_turns(
        llm, [("read my notes", Reply(text="They say: remember the milk.", usage=Usage(4_321, 12)))]
    )
    return sid


def test_context_splits_the_window_and_adds_up_to_the_gauge(workspace: Workspace, fake_llm: FakeLLM) -> None:
    sid = _seeded(workspace, fake_llm)
    proc = workspace.run("context")
    assert proc.returncode == 0, proc.stderr
    rows = {
        m["label"].strip(): _tokens(m["tokens"])
        for line in proc.stdout.splitlines()
        if (m := ROW.match(line.strip()))
    }
    for label in (
        "system prompt",
        "tool schemas",
        "summaries",
        "user messages",
        "assistant text",
        "tool calls",
        "tool outputs",
        "pruned outputs",
        "reasoning",
    ):
        assert label in rows, proc.stdout
    assert rows["system prompt"] > 0 and rows["tool schemas"] > 0 and rows["summaries"] > 0
    assert rows["tool outputs"] > 0 and rows["user messages"] > 0
    gauge = workspace.store().get_session(sid).context_tokens
    assert gauge == 4_321 + 12
    total = re.search(r"total \(the gauge\)\s+([\d.]+k?)", proc.stdout)
    assert total and _tokens(total.group(1)) == round(gauge, -2)  # shown as 4.3k
    assert abs(sum(rows.values()) - gauge) <= 50 * len(rows)  # each row rounded to 0.1k
    assert (
        "usable 92k" in proc.stdout
        and "auto-compaction at 92k" in proc.stdout
        and "reserved 8k" in proc.stdout
    )


def test_slash_context_in_the_chat(workspace: Workspace, fake_llm: FakeLLM) -> None:
    _seeded(workspace, fake_llm)
    child = spawn(workspace, "chat", "--continue")
    say(child, "/context", "tool schemas", "total")
    assert leave(child) == 0
