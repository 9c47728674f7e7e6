"""`agentcli run --format json` for scripts: the answer streams as it arrives, and a run that cannot
start says so as JSON on stdout too (with a non-zero exit)."""

from __future__ import annotations

import json
import queue
import subprocess
import threading

import pytest

from tests import zygote
from tests.fakellm import FakeLLM, Reply
from tests.workspace import Workspace, agentcli_argv


def test_text_streams_as_it_arrives(workspace: Workspace, fake_llm: FakeLLM) -> None:
    gate = threading.Event()
    fake_llm.push(Reply(text="The first words, then the rest of the answer.", chunk_size=10, hold=gate))
    proc = zygote.popen(
        [*agentcli_argv(), "run", "--format", "json", "answer slowly"],
        cwd=workspace.project,
        env=workspace.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in proc.stdout or []:
            lines.put(line)
        lines.put("")  # the end of stdout

    threading.Thread(target=read, daemon=True).start()
    try:
        # The server holds the rest of the reply until the first piece has reached stdout.
        first = json.loads(lines.get(timeout=60))
        assert first == {"type": "text_delta", "part_id": first["part_id"], "text": "The first "}
    finally:
        gate.set()
    assert proc.wait(timeout=60) == 0
    out = [first] + [json.loads(line) for line in iter(lambda: lines.get(timeout=30), "")]
    deltas = "".join(e["text"] for e in out if e["type"] == "text_delta")
    [text] = [e for e in out if e["type"] == "text"]
    assert deltas == text["text"] == "The first words, then the rest of the answer."
    assert out[-1]["type"] == "result" and out[-1]["exit_code"] == 0


@pytest.mark.parametrize(
    ("args", "config", "words"),
    [
        (["--model", "nosuchprovider-model-xyz"], None, "unknown model"),
        (["--model", "anthropic/claude-sonnet-4-5"], None, "needs ANTHROPIC_API_KEY"),
        ([], '{"compaction": {"reserved": -5}}', "compaction.reserved"),
        ([], '{"model": "fake/test-model",\n "compaction": {"auto": tru}}', "invalid JSON"),
    ],
)
def test_a_run_that_cannot_start_says_why_as_json(
    workspace: Workspace, fake_llm: FakeLLM, args: list[str], config: str | None, words: str
) -> None:
    if config is not None:
        (workspace.project / "opencode.json").write_text(config)
    proc = workspace.run("run", "--format", "json", *args, "hi")
    assert proc.returncode != 0
    [line] = proc.stdout.splitlines()
    result = json.loads(line)
    assert result["type"] == "result" and result["exit_code"] == proc.returncode
    assert words in result["error"]["message"]
    assert "Traceback" not in proc.stderr and fake_llm.chat_requests() == []
