"""`agentcli acp` timings against the scripted server (tests/fakellm.py, on 127.0.0.1), through the
agent-client-protocol package's client side, the agent a real subprocess:

- start: spawn to the answer of ``initialize``;
- session_new: ``session/new`` (config, trust, the loop and its plugins built);
- prompt: a one-step answer, from ``session/prompt`` to its answer, the loop warm (median of
  BENCH_RUNS): what the protocol, the outbox and the thread hand-over add to a turn is inside it;
- cancel: ``session/cancel`` sent mid-stream to the ``cancelled`` answer (median; the issue asks
  for under 2 s).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from tests.acp_client import Editor, running_agent  # noqa: E402
from tests.fakellm import FakeLLM, Reply  # noqa: E402
from tests.workspace import make_workspace  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "7"))


async def acp_figures(ws, llm: FakeLLM) -> dict[str, float]:  # type: ignore[no-untyped-def]
    editor = Editor()
    streaming = asyncio.Event()
    editor.on_update = lambda u: streaming.set() if u.session_update == "agent_message_chunk" else None
    began = time.perf_counter()
    async with running_agent(ws, editor) as agent:
        await agent.conn.initialize(protocol_version=1, client_capabilities=editor.capabilities())
        started = time.perf_counter()
        sid = (await agent.conn.new_session(cwd=str(ws.project), mcp_servers=[])).session_id
        opened = time.perf_counter()
        prompts = []
        for _ in range(RUNS):
            llm.push(Reply(text="A short answer."))
            t = time.perf_counter()
            await agent.say(sid, "a question")
            prompts.append(time.perf_counter() - t)
        cancels = []
        for _ in range(RUNS):
            llm.push(Reply(text="word " * 400, chunk_size=5, delay=0.05))
            streaming.clear()
            turn = asyncio.create_task(agent.say(sid, "talk"))
            await streaming.wait()
            t = time.perf_counter()
            await agent.conn.cancel(session_id=sid)
            await turn
            cancels.append(time.perf_counter() - t)
    return {
        "start": started - began,
        "session_new": opened - started,
        "prompt": statistics.median(prompts),
        "cancel": statistics.median(cancels),
    }


def main() -> None:
    with FakeLLM() as llm, tempfile.TemporaryDirectory() as tmp:
        ws = make_workspace(Path(tmp), llm.base_url)
        ws.write_config()
        figures = asyncio.run(acp_figures(ws, llm))
    for name, value in figures.items():
        print(f"acp_{name}_s: {value:.3f}")


if __name__ == "__main__":
    main()
