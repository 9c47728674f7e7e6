"""The window saved by delegation (issue 19): one scripted task — read 20 source files and say what
they do — done by the agent itself, and handed to the ``general`` subagent through the task tool.

Both runs use the real session loop against the scripted model on 127.0.0.1, one SQLite file and a
project of 20 files of about 3 KB each. Afterwards the parent's window is measured the way the loop
measures a request it is about to send (system prompt, tool schemas, the window since the last
compaction; ``SessionLoop.build_request``): with the files read directly it holds every file; with
the subagent it holds the task call and its answer.

Prints one figure per line: ``name: value``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agentcli.config import Config  # noqa: E402
from agentcli.demo.scripted_server import FakeLLM, Reply, ToolCall  # noqa: E402
from agentcli.session.agents.subagent import child_runtime  # noqa: E402
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.request.history import filter_compacted  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.session.toolset import offered_tools  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

FILES = 20
ANSWER = (
    "The 20 modules form a small billing service: module_00 to module_04 parse invoices, 05 to 09 "
    "validate them, 10 to 14 compute taxes and totals, 15 to 19 render PDFs and e-mails. Entry point: "
    "module_00.handle(). No module imports a later one; tests are missing for 12 and 17."
)


def _project(root: Path) -> list[str]:
    (root / ".git").mkdir(parents=True)
    names = []
    for i in range(FILES):
        body = "\n".join(
            f"def step_{i:02d}_{j:02d}(invoice, rate=0.{j:02d}):\n"
            f'    """Part {j} of module {i}: apply the rate to the invoice lines."""\n'
            f"    return [line * (1 + rate) for line in invoice.lines if line > {j}]\n"
            for j in range(24)
        )
        name = f"module_{i:02d}.py"
        (root / name).write_text(body)
        names.append(name)
    return names


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


def _window(runtime: SessionRuntime, session_id: str) -> tuple[int, int]:
    """The next request's tokens, and the same without the conversation (system prompt and tools)."""
    window = filter_compacted(runtime.store.stream(session_id))
    runner = runtime.runner(threading.Event(), offered_tools(runtime))
    return runtime.build_request(session_id, window, runner).tokens, runtime.build_request(
        session_id, [], runner
    ).tokens


def _run(
    store: Store, llm: FakeLLM, project: Path, data: Path, replies: list[Any]
) -> tuple[SessionLoop, str]:
    loop = _loop(store, llm, project, data)
    session = store.create_session(str(project), loop.runtime.model.name, title="bench")
    llm.push(*replies)
    loop.prompt(session.id, "Read every module here and tell me what this code base does.")
    return loop, session.id


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeLLM() as llm:
        root = Path(tmp)
        project = root / "project"
        names = _project(project)
        store = Store(root / "bench.db")
        reads = [ToolCall("read", {"filePath": name}) for name in names]
        loop, direct_id = _run(
            store, llm, project, root / "data", [Reply(tool_calls=reads), Reply(text=ANSWER)]
        )
        direct, fixed = _window(loop.runtime, direct_id)
        task = ToolCall(
            "task",
            {
                "description": "survey the modules",
                "prompt": "Read every module_*.py file here and describe what the code base does.",
                "subagent_type": "general",
            },
        )
        replies = [Reply(tool_calls=[task]), Reply(tool_calls=reads), Reply(text=ANSWER), Reply(text=ANSWER)]
        loop, parent_id = _run(store, llm, project, root / "data", replies)
        delegated, _ = _window(loop.runtime, parent_id)
        [child] = store.children([parent_id])
        assert loop.runtime.agents is not None
        general = loop.runtime.agents.get("general")
        assert general is not None
        child_window, _ = _window(child_runtime(loop.runtime, general), child.id)
        print(f"files read: {FILES}")
        print(f"parent window after reading them directly (tokens): {direct}")
        print(f"parent window after the same task through a subagent (tokens): {delegated}")
        print(f"window ratio, direct / delegated: {direct / delegated:.1f}x")
        print(f"system prompt and tool schemas in both (tokens): {fixed}")
        ratio = (direct - fixed) / (delegated - fixed)
        print(f"conversation ratio, direct / delegated (less that fixed part): {ratio:.1f}x")
        print(f"parent tokens saved: {direct - delegated}")
        print(f"the subagent's own window, left behind (tokens): {child_window}")


if __name__ == "__main__":
    main()
