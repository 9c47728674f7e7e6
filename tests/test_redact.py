"""Secrets never reach a summary or a title. The scripted model reads files full of real-format fake
secrets; a compaction is forced; the summary request, the title request and the stored summary are
checked for every one of them — and the look-alikes (UUIDs, SHAs, base64 of text, lockfile hashes)
must come through intact."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentcli.redact import PLACEHOLDER, redact, redact_messages
from agentcli.store.records import AssistantMessage
from tests.fakellm import FakeLLM, Reply, ToolCall, Usage
from tests.secret_corpus import LOOKALIKES, SECRETS
from tests.workspace import Workspace

TYPED_TOKEN = "ghp_" + "Zq8" * 12  # a token the user pastes into their first message


def strings(body: dict[str, Any]) -> str:
    """Every string a request carries (message texts, tool-call arguments), decoded."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(body.get("messages"))
    return "\n".join(out)


# --------------------------------------------------------------------------- the detector


@pytest.mark.parametrize("sample", SECRETS, ids=lambda s: s.kind)
def test_each_kind_of_secret_is_replaced_by_a_typed_placeholder(sample: Any) -> None:
    out = redact(sample.context)
    assert sample.secret not in out
    assert PLACEHOLDER.search(out)


def test_lookalikes_stay_intact_and_the_false_positive_rate_is_zero() -> None:
    changed = [s.kind for s in LOOKALIKES if redact(s.context) != s.context]
    assert len(SECRETS) >= 15 and len(LOOKALIKES) >= 30
    assert changed == [], f"false positives: {changed} of {len(LOOKALIKES)}"


def test_secrets_are_found_in_a_large_mixed_text_however_often_their_keywords_occur() -> None:
    """The detector only tries a rule where its keyword occurs, and switches strategy when a keyword
    occurs very often: neither may lose a secret — repeated, next to non-ASCII text, at the start."""
    noise = "token sk- password= key- sha256 secret: api_key glpat- " * 600  # every keyword, 600 times
    contexts = "\n".join(s.context for s in SECRETS)
    big = redact(f"{noise}\nnaïve café — {contexts} ✓\n{contexts}\n{noise}")
    for sample in SECRETS:
        assert sample.secret not in big, sample.kind
        assert sample.secret not in redact(f"İstanbul {sample.context}"), (
            sample.kind
        )  # "İ" lower-cases to 2 chars
    token = next(s.secret for s in SECRETS if s.kind == "log-token")
    assert token not in redact(f"{token} in a log")
    lookalikes = "\n".join(s.context for s in LOOKALIKES)
    assert redact(f"{noise}\n{lookalikes}\n{noise}") == f"{noise}\n{lookalikes}\n{noise}"


def test_redaction_keeps_the_readable_parts_and_is_idempotent() -> None:
    text = "DATABASE_URL=postgres://app:s3cretPass99@db.internal:5432/app"
    out = redact(text)
    assert out == "DATABASE_URL=postgres://app:[REDACTED:connection-password]@db.internal:5432/app"
    assert redact(out) == out


def test_tool_call_arguments_and_content_parts_are_redacted() -> None:
    key = SECRETS[0].secret
    messages = [
        {"role": "user", "content": [{"type": "text", "text": f"use {key}"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": f"export K={key}"})},
                }
            ],
        },
    ]
    out = json.dumps(redact_messages(messages))
    assert key not in out and "[REDACTED:openai-api-key]" in out
    assert json.loads(
        redact_messages(messages)[1]["tool_calls"][0]["function"]["arguments"]
    )  # still valid JSON
    assert key in json.dumps(messages)  # the caller's messages are not changed


# --------------------------------------------------------------------------- end to end


def plant(ws: Workspace) -> list[ToolCall]:
    """The corpora in files small enough that the summariser's input keeps each read whole (it cuts
    every tool result at 2,000 characters); returns the read calls for all of them."""
    fixtures = ws.project / "fixtures"
    fixtures.mkdir()
    calls = []
    for name, samples in (("leaked", SECRETS), ("lookalikes", LOOKALIKES)):
        chunk: list[str] = []
        for i, sample in enumerate(samples):
            chunk.append(sample.context)
            if sum(len(c) + 8 * (c.count("\n") + 1) for c in chunk) > 1_200 or i == len(samples) - 1:
                path = fixtures / f"{name}-{len(calls)}.txt"
                path.write_text("\n".join(chunk) + "\n")
                calls.append(ToolCall("read", {"filePath": f"fixtures/{path.name}"}))
                chunk = []
    return calls


def around(sample: Any) -> str:
    """Readable text just before a sample's secret: proof that its file reached the request."""
    if sample.context.startswith("-----BEGIN"):
        return "[REDACTED:private-key]"
    lines = sample.context.split(sample.secret)[0].splitlines()
    return lines[-1][:10] if lines else ""


def test_no_secret_reaches_the_summary_or_the_title(workspace: Workspace, fake_llm: FakeLLM) -> None:
    workspace.write_config({"compaction": {"tail_turns": 0}})
    reads = plant(workspace)
    echoed = SECRETS[4].secret  # a summariser that repeats a secret anyway
    fake_llm.push(
        Reply(tool_calls=reads, usage=Usage(9_000, 20)),
        Reply(text="I read the files.", usage=Usage(10_000, 10)),
    )
    proc = workspace.run("run", f"deploy with my token {TYPED_TOKEN} after reading fixtures/")
    assert proc.returncode == 0, proc.stderr
    fake_llm.push(
        Reply(
            text=f"## Objective\n- deploy\n## Important Details\n- the token is {echoed}",
            usage=Usage(5_000, 50),
        )
    )
    proc = workspace.run("compact")
    assert proc.returncode == 0, proc.stderr

    titles = [r for r in fake_llm.requests if r.title]
    summary = fake_llm.chat_requests()[-1]
    assert titles and "tools" not in summary.body
    sent = strings(summary.body) + "\n".join(strings(t.body) for t in titles)
    assert [s.kind for s in SECRETS if around(s) not in sent] == []  # every file reached the summariser
    leaked = [s.kind for s in SECRETS if s.secret in sent]
    assert leaked == []
    assert TYPED_TOKEN not in sent and "[REDACTED:github-token]" in strings(titles[0].body)
    body = strings(summary.body)
    assert [s.kind for s in LOOKALIKES if s.secret not in body] == []  # look-alikes went through intact

    store = workspace.store()
    [session] = store.list_sessions()
    assert TYPED_TOKEN not in (session.title or "")
    [stored] = [
        m for m in store.messages(session.id) if isinstance(m.info, AssistantMessage) and m.info.summary
    ]
    assert echoed not in stored.text() and "[REDACTED:github-token]" in stored.text()

    shown = workspace.run("sessions", "show", session.id)
    assert shown.returncode == 0, shown.stderr
    assert "1 secret redacted: github-token" in shown.stdout


def test_model_requests_are_redacted_only_when_configured(workspace: Workspace, fake_llm: FakeLLM) -> None:
    reads = plant(workspace)
    secret = SECRETS[2].secret  # an AWS access key id
    script = [Reply(tool_calls=reads, usage=Usage(3_000, 20)), Reply(text="done", usage=Usage(4_000, 5))]
    fake_llm.push(*script)
    assert workspace.run("run", "read the fixtures").returncode == 0
    assert secret in strings(fake_llm.chat_requests()[-1].body)  # default: the model sees what it read

    workspace.write_config({"redact": {"model_requests": True}})
    fake_llm.push(*script)
    assert workspace.run("run", "read the fixtures").returncode == 0
    sent = strings(fake_llm.chat_requests()[-1].body)
    assert [s.kind for s in SECRETS if s.secret in sent] == []
    assert "[REDACTED:aws-access-key]" in sent
