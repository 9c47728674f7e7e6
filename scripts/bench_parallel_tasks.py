"""Tasks of one message run together (issue 19): a turn whose model asks for 3 tasks at once, each a
subagent that reads a file and then streams a short answer (about 0.5 s, as a slow model would), timed
with the tasks run one after the other (``MAX_PARALLEL_TASKS = 1``) and together (3), interleaved.

The real session loop against the scripted model on 127.0.0.1, one SQLite file. Prints one figure per
line: ``name: value``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agentcli.config import Config  # noqa: E402
from agentcli.demo.scripted_server import FakeLLM, Recorded, Reply, ToolCall  # noqa: E402
from agentcli.session import toolrunner  # noqa: E402
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

TASKS = 3
ROUNDS = 5
ANSWER = "This part of the code base parses invoices and checks their totals against the ledger."
CHUNK_DELAY = 0.05  # s between the answer's chunks of 8 characters: about 0.5 s per answer


def _loop(store: Store, llm: FakeLLM, project: Path, data: Path) -> SessionLoop:
    providers = {
        "fake": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": llm.base_url, "apiKey": "sk-bench"},
            "models": {"m": {"limit": {"context": 200_000, "output": 8_000}}},
        }
    }
    config = Config.model_validate({"model": "fake/m", "provider": providers, "compaction": {"prune": False}})
    model = resolve_model("fake/m", config.providers_dict(), env={})
    return SessionLoop(
        SessionRuntime(
            store=store, config=config, model=model, options=LoopOptions(directory=project, data_dir=data)
        )
    )


def _is_task(request: Recorded) -> bool:
    messages = request.body["messages"]
    return len(messages) > 1 and str(messages[1].get("content", "")).startswith("Survey part")


def _subagent(request: Recorded) -> Reply:
    messages = request.body["messages"]
    if any(m["role"] == "tool" for m in messages):
        return Reply(text=ANSWER, delay=CHUNK_DELAY)
    part = str(messages[1]["content"]).split()[2]
    return Reply(tool_calls=[ToolCall("read", {"filePath": f"part_{part}.py"})])


def _turn(store: Store, llm: FakeLLM, project: Path, data: Path) -> float:
    loop = _loop(store, llm, project, data)
    session = store.create_session(str(project), loop.runtime.model.name, title="bench")
    args = [
        {"description": f"survey {i}", "prompt": f"Survey part {i}", "subagent_type": "general"}
        for i in range(TASKS)
    ]
    tasks: list[Any] = [ToolCall("task", a) for a in args]
    llm.push(Reply(tool_calls=tasks), Reply(text="Surveyed."))
    start = time.perf_counter()
    loop.prompt(session.id, "Survey the three parts of the code base.")
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as llm:
        root = Path(tmp)
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        for i in range(TASKS):
            (project / f"part_{i}.py").write_text(f"def part_{i}():\n    return {i}\n")
        store = Store(root / "bench.db")
        llm.on(_is_task, _subagent)
        times: dict[int, list[float]] = {1: [], TASKS: []}
        _turn(store, llm, project, root / "data")  # warm up: imports, the first connection
        for _ in range(ROUNDS):
            for limit in times:
                toolrunner.MAX_PARALLEL_TASKS = limit
                times[limit].append(_turn(store, llm, project, root / "data"))
        one, together = statistics.median(times[1]), statistics.median(times[TASKS])
        print(f"tasks in the message: {TASKS}")
        print(f"turn, tasks one after the other (s, median of {ROUNDS}): {one:.2f}")
        print(f"turn, tasks together, at most {TASKS} at once (s, median of {ROUNDS}): {together:.2f}")
        print(f"speed-up: {one / together:.1f}x")


if __name__ == "__main__":
    main()
