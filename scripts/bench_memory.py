"""What the memory plugin costs.

1. Per request, on a session of 100,000 parts: the system prompt built with the plugin (its context
   block reads the session row) against the same loop without it, and the tool schemas sent with its
   two tools; plus the store's writes of one turn on that session (the search index is kept up by
   triggers on those writes). Target: the added cost under 5 ms.
2. ``memory search`` (the tool's operation, formatting included) over 10,000 sessions. Target: under 50 ms.

Prints one figure per line: ``name: value`` (milliseconds, medians).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench_store import OUTPUT, fill, median_ms, session  # noqa: E402

from agentcli.config import Config  # noqa: E402
from agentcli.plugins.memory import make_plugin  # noqa: E402
from agentcli.plugins.memory.ops import MemoryOps  # noqa: E402
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.session.toolset import offered_tools  # noqa: E402
from agentcli.store import ids  # noqa: E402
from agentcli.store import records as r  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

PARTS = int(os.environ.get("BENCH_PARTS", "100000"))
PROVIDERS = {
    "fake": {
        "options": {"baseURL": "http://127.0.0.1:9/v1"},
        "models": {"m": {"limit": {"context": 200_000, "output": 8_000}}},
    }
}


def loop(store: Store, project: Path, with_memory: bool) -> SessionLoop:
    model = resolve_model("fake/m", PROVIDERS, env={})
    out = SessionLoop(
        SessionRuntime(
            store=store,
            config=Config(),
            model=model,
            options=LoopOptions(directory=project, data_dir=project / "data"),
            tools={},
        )
    )
    if with_memory:
        assert out.runtime.plugins is not None
        out.runtime.plugins.register(make_plugin(), name="memory")
    out.start_plugins()
    return out


def big_session(store: Store, project: Path) -> str:
    """One session of PARTS parts (10 per turn, as bench_store's sessions have), stored in bulk."""
    info, _ = session(0)
    info = info.model_copy(update={"directory": str(project), "context_tokens": 120_000})
    messages: list[r.WithParts] = []
    n = 0
    while sum(len(m.parts) for m in messages) < PARTS:
        _, turn = session(n)
        messages += [
            m.model_copy(
                update={
                    "info": m.info.model_copy(update={"session_id": info.id}),
                    "parts": [p.model_copy(update={"session_id": info.id}) for p in m.parts],
                }
            )
            for m in turn
        ]
        n += 1
    store.import_sessions([(info, messages)])
    return info.id


def turn_writes(store: Store, sid: str) -> None:
    """The rows one turn writes (a tool step and an answer, streamed parts rewritten), each of which
    the search index follows."""
    user = r.UserMessage(id=ids.ascending("msg"), session_id=sid)
    store.put_message(user)
    store.put_part(
        r.TextPart(id=ids.ascending("prt"), session_id=sid, message_id=user.id, text="look at handler.py")
    )
    a = r.AssistantMessage(id=ids.ascending("msg"), session_id=sid, parent_id=user.id)
    store.put_message(a)
    tool = r.ToolPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id, call_id="c", tool="read")
    for status in ("pending", "running", "completed"):
        store.put_part(
            tool.model_copy(
                update={"state": r.ToolState(status=status, input={"path": "x.py"}, output=OUTPUT)}
            )
        )
    text = r.TextPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id)
    for i in range(5):
        store.put_part(text.model_copy(update={"text": "The handler " * (i + 1)}))
    store.put_part(
        r.StepFinishPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id, tokens=r.Tokens(total=900))
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        store = Store(Path(tmp) / "big.db")
        sid = big_session(store, project)
        print(f"parts: {store.count_parts(sid)}")
        plain, memory = loop(store, project, False), loop(store, project, True)
        without = median_ms(lambda: plain.runtime.system_prompt(sid), runs=50)
        with_block = median_ms(lambda: memory.runtime.system_prompt(sid), runs=50)
        runner_plain, runner_memory = (
            r.runner(threading.Event(), offered_tools(r)) for r in (plain.runtime, memory.runtime)
        )
        schemas = median_ms(lambda: runner_memory.schemas(), runs=50) - median_ms(
            lambda: runner_plain.schemas(), runs=50
        )
        print(f"system_prompt_without_plugin_ms: {without:.3f}")
        print(f"system_prompt_with_plugin_ms: {with_block:.3f}")
        print(f"block_added_ms: {with_block - without:.3f}")
        print(f"tool_schemas_added_ms: {schemas:.3f}")
        print(f"turn_store_writes_with_index_ms: {median_ms(lambda: turn_writes(store, sid), runs=15):.2f}")
        store.close()

        store = Store(Path(tmp) / "many.db")
        fill(store)
        memory = loop(store, project, True)
        assert memory.plugin_context is not None
        current = store.list_sessions(1)[0].id
        ops = MemoryOps(memory.plugin_context, current)
        print(f"sessions: {len(store.list_sessions())}")
        print(f"memory_search_rare_ms: {median_ms(lambda: ops.run('search', {'query': 'topic123'})):.2f}")
        print(f"memory_search_common_ms: {median_ms(lambda: ops.run('search', {'query': 'handler'})):.2f}")
        store.close()


if __name__ == "__main__":
    main()
