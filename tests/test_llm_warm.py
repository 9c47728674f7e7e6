"""A model served through litellm does not make its user wait for litellm's lazy imports on the first
turn: they are rehearsed in the background (``agentcli.llm.warm``) while the REPL waits for the first
message, without a byte sent anywhere, without a word printed and without holding up the exit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect

from tests.fakellm import FakeLLM, Reply
from tests.idle import cpu_seconds, wait_until_idle
from tests.terminal import PROMPT, leave, say, spawn
from tests.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
LITELLM = {"AGENTCLI_LLM_PATH": "litellm"}  # the scripted server's model, sent through litellm
# What the first answer may cost beyond the next ones, counted as the CPU the CLI spends from Enter to
# the answer's first words: 0.10-0.13 s more with the rehearsal (the REPL's own first turn, as on the
# lean path), 0.8-1.1 s more without it (litellm's first stream imports ~540 modules). Its wall time
# (2.3-3x the next ones' against 11-16x) measures the other processes too on a loaded machine: a
# first answer after 0.87 s for 0.18 s of CPU was seen beside a build.
FIRST_TURN_EXTRA_CPU = 0.35


def _enter_to_answer(child: pexpect.spawn, line: str, answer: str) -> tuple[float, float]:
    """Seconds from Enter to the answer's first words on screen, and the CPU seconds the CLI spent
    meanwhile."""
    child.send(line)
    cpu, start = cpu_seconds(child.pid), time.monotonic()
    child.send("\r")
    child.expect(answer)
    took = (time.monotonic() - start, cpu_seconds(child.pid) - cpu)
    child.expect(PROMPT)
    return took


def _check_first(first: tuple[float, float], later: list[tuple[float, float]]) -> None:
    usual = sum(cpu for _, cpu in later) / len(later)
    assert first[1] - usual <= FIRST_TURN_EXTRA_CPU, (
        f"the first answer took {first} (wall, CPU seconds), the next ones {later}"
    )


def test_the_first_litellm_turn_answers_about_as_soon_as_the_next_ones(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    workspace.extra_env.update(LITELLM)
    fake_llm.push(Reply(text="Answer one."), Reply(text="Answer two."), Reply(text="Answer three."))
    child = spawn(workspace)
    wait_until_idle(child.pid)  # the user reads the screen, types: the background work is over
    first = _enter_to_answer(child, "one", "Answer one")
    later = [_enter_to_answer(child, "two", "Answer two"), _enter_to_answer(child, "three", "Answer three")]
    assert leave(child) == 0
    _check_first(first, later)


def test_a_message_sent_while_litellm_still_warms_up_is_answered(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """The first turn's stream and the rehearsal import the same modules at once, in two threads."""
    workspace.extra_env.update(LITELLM)
    fake_llm.push(Reply(text="Answered at once."), Reply(text="And again."))
    child = spawn(workspace)
    say(child, "quick question", "Answered at once")
    say(child, "another", "And again")
    assert leave(child) == 0
    assert "Traceback" not in (child.before or "")


def test_leaving_while_litellm_warms_up_exits_cleanly_and_silently(workspace: Workspace) -> None:
    workspace.extra_env.update(LITELLM)
    child = spawn(workspace)
    child.sendcontrol("d")  # the rehearsal has only begun: it takes a second of CPU or more
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in (child.before or "") and "Exception" not in (child.before or "")


_NO_NETWORK = """
import json, socket, sys
calls = []
def refuse(*args, **kwargs):
    calls.append(repr(args[:2]))
    raise OSError("no network in this test")
socket.socket.connect = lambda self, address: refuse(address)
socket.socket.connect_ex = lambda self, address: refuse(address)
socket.getaddrinfo = refuse
socket.create_connection = refuse
from agentcli.llm import warm
threads = [warm.start(model) for model in sys.argv[1:]]
threads[0].join(300)
print(json.dumps({"calls": calls, "alive": threads[0].is_alive(), "daemon": threads[0].daemon,
                  "one_thread": all(t is threads[0] for t in threads)}))
"""


def test_the_rehearsal_sends_nothing_and_prints_nothing() -> None:
    """Not even for a provider whose litellm code asks the network before a mock answer (Hugging Face):
    the rehearsal's model is a neutral one. Once a process: a second call returns the same thread."""
    models = ["huggingface/meta-llama/Llama-3.1-8B-Instruct", "gemini/gemini-2.0-flash"]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = subprocess.run(
        [sys.executable, "-c", _NO_NETWORK, *models],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 1, out.stdout  # nothing printed but the probe's own line
    got = json.loads(lines[0])
    assert got["calls"] == [] and out.stderr == ""
    assert got["alive"] is False and got["daemon"] is True and got["one_thread"] is True


_FIRST_STREAM = """
import json, os, sys
os.environ["AGENTCLI_LLM_PATH"] = "litellm"
from agentcli.llm import warm
from agentcli.llm.stream import ChatRequest, stream_chat
if sys.argv[2] == "rehearsed":
    warm.rehearse("openai/test-model", sys.argv[1])
else:
    from agentcli.llm.lazy import get_litellm
    get_litellm()
before = set(sys.modules)
req = ChatRequest(model="openai/test-model", messages=[{"role": "user", "content": "hi"}],
                  api_base=sys.argv[1], api_key="sk-test")
text = "".join(getattr(e, "text", "") for e in stream_chat(req))
print(json.dumps({"text": text, "new": sorted(set(sys.modules) - before)}))
"""


def _first_stream(fake_llm: FakeLLM, mode: str) -> dict[str, object]:
    fake_llm.push(Reply(text="streamed"))
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_STREAM, fake_llm.base_url, mode],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    got: dict[str, object] = json.loads(out.stdout)
    return got


def test_after_the_rehearsal_litellm_s_first_stream_imports_almost_nothing(fake_llm: FakeLLM) -> None:
    cold, rehearsed = _first_stream(fake_llm, "cold"), _first_stream(fake_llm, "rehearsed")
    assert cold["text"] == rehearsed["text"] == "streamed"
    cold_new, rehearsed_new = cold["new"], rehearsed["new"]
    assert isinstance(cold_new, list) and isinstance(rehearsed_new, list)
    assert len(cold_new) > 300, "litellm's first stream no longer imports much: the rehearsal may go"
    assert len(rehearsed_new) < 30, rehearsed_new


def test_an_acp_session_s_first_litellm_prompt_answers_about_as_soon_as_the_next_ones(
    workspace: Workspace, fake_llm: FakeLLM
) -> None:
    """An editor opens a session, the user types: the rehearsal starts when the session opens."""
    import asyncio

    from tests.acp_client import Editor, run, running_agent

    workspace.extra_env.update(LITELLM)
    fake_llm.push(*(Reply(text=f"Answer {n}.") for n in range(3)))
    editor = Editor()
    took: list[tuple[float, float]] = []

    async def session() -> None:
        async with running_agent(workspace, editor) as agent:
            sid = await agent.start(editor, workspace.project)
            pid = agent.process.pid
            await asyncio.to_thread(wait_until_idle, pid)
            for n in range(3):
                cpu, start = cpu_seconds(pid), time.monotonic()
                answer = await agent.say(sid, f"question {n}")
                took.append((time.monotonic() - start, cpu_seconds(pid) - cpu))
                assert answer.stop_reason == "end_turn"

    run(session())
    _check_first(took[0], took[1:])
