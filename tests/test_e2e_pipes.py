"""`agentcli run` in pipelines: stdin piped in, stdout closed early."""

from __future__ import annotations

import subprocess
import time

from tests import zygote
from tests.fakellm import FakeLLM, Reply, Usage
from tests.workspace import Workspace, agentcli_argv


def _last_user_text(fake_llm: FakeLLM) -> str:
    messages = fake_llm.chat_requests()[-1].body["messages"]
    return [m["content"] for m in messages if m["role"] == "user"][-1]


def test_run_reads_piped_stdin_after_the_message(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="The disk is full.", usage=Usage(500, 5)))
    proc = workspace.run("run", "explain", input="12:00 ERROR write failed: No space left on device\n")
    assert proc.returncode == 0, proc.stderr
    sent = _last_user_text(fake_llm)
    assert sent.startswith("explain")
    assert "No space left on device" in sent
    assert "The disk is full." in proc.stdout


def test_run_takes_the_whole_message_from_stdin(workspace: Workspace, fake_llm: FakeLLM) -> None:
    fake_llm.push(Reply(text="ok", usage=Usage(500, 5)))
    proc = workspace.run("run", input="what is 2+2?")
    assert proc.returncode == 0, proc.stderr
    assert _last_user_text(fake_llm) == "what is 2+2?"


def test_run_into_head_exits_quietly_and_cancels_the_request(workspace: Workspace, fake_llm: FakeLLM) -> None:
    # 40 s of streaming if nobody stops it.
    fake_llm.push(Reply(text="".join(f"line {i}\n" for i in range(800)), chunk_size=8, delay=0.05))
    child = zygote.popen(
        [*agentcli_argv(), "run", "count"],
        cwd=workspace.project,
        env=workspace.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().startswith(b"line 0")
    started = time.monotonic()
    child.stdout.close()  # what `| head -1` does after its line
    stderr = child.stderr.read().decode()
    child.wait(timeout=60)
    assert time.monotonic() - started < 25, "the stream was read to its end instead of being cancelled"
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr
    assert child.returncode == 141
    # the provider saw the request dropped
    assert fake_llm.settled(fake_llm.chat_requests()[0]) == "client_closed"
