"""Turn-overhead benchmark: the time to load the window and build the next request (window from SQL,
model view, system prompt, chat messages, pre-flight token estimate) for sessions of 1,000, 10,000 and
100,000 parts with a compaction 200 messages back. A turn's cost must follow the window, not the session's
age: the ratio largest / smallest should be at most 1.5.

Then one compaction of a window whose last turn has 300 tool steps: the time to convert and size the
window, select the verbatim tail and build the summary request (target under 50 ms), and, for a real
compaction answered by the scripted server (tests/fakellm.py, on 127.0.0.1), how many times it
converted the window (target 1).

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agentcli.config import Config  # noqa: E402
from agentcli.llm.limits import ModelLimits  # noqa: E402
from agentcli.llm.route import Route  # noqa: E402
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import ModelInfo  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.request.history import filter_compacted  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.session.toolset import offered_tools  # noqa: E402
from agentcli.store import ids  # noqa: E402
from agentcli.store.records import (  # noqa: E402
    AssistantMessage,
    CompactionPart,
    StepFinishPart,
    StepStartPart,
    TextPart,
    Tokens,
    ToolPart,
    ToolState,
    UserMessage,
    WithParts,
)
from agentcli.store.store import Store  # noqa: E402
from tests.fakellm import FakeLLM, Reply  # noqa: E402

SIZES = (1_000, 10_000, 100_000)
COMPACTION_BACK = 200  # messages after the compaction
RUNS = int(os.environ.get("BENCH_RUNS", "15"))
LONG_TURN_STEPS = 300
OUTPUT = "def handler(event):\n    return process(event)\n" * 12  # ~550 chars of tool output


def turn(sid: str, n: int) -> list[WithParts]:
    """One user turn: 1 user message (1 part) + 1 assistant step (5 parts) = 6 parts, 2 messages."""
    user = UserMessage(id=ids.ascending("msg"), session_id=sid)
    a = AssistantMessage(
        id=ids.ascending("msg"),
        session_id=sid,
        parent_id=user.id,
        finish="stop",
        tokens=Tokens(total=5000, input=4800, output=200),
    )
    return [
        WithParts(
            info=user,
            parts=[
                TextPart(
                    id=ids.ascending("prt"),
                    session_id=sid,
                    message_id=user.id,
                    text=f"request {n}: look at handler.py",
                )
            ],
        ),
        WithParts(
            info=a,
            parts=[
                StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id),
                TextPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id, text=f"Reading it ({n})."),
                ToolPart(
                    id=ids.ascending("prt"),
                    session_id=sid,
                    message_id=a.id,
                    call_id=f"call_{n}",
                    tool="read",
                    state=ToolState(
                        status="completed",
                        input={"filePath": "handler.py"},
                        output=OUTPUT,
                        title="handler.py",
                    ),
                ),
                TextPart(
                    id=ids.ascending("prt"), session_id=sid, message_id=a.id, text="It dispatches events."
                ),
                StepFinishPart(
                    id=ids.ascending("prt"),
                    session_id=sid,
                    message_id=a.id,
                    reason="stop",
                    tokens=Tokens(total=5000, input=4800, output=200),
                ),
            ],
        ),
    ]


def compaction(sid: str) -> list[WithParts]:
    marker = UserMessage(id=ids.ascending("msg"), session_id=sid)
    summary = AssistantMessage(
        id=ids.ascending("msg"),
        session_id=sid,
        parent_id=marker.id,
        summary=True,
        finish="stop",
        agent="compaction",
        mode="compaction",
    )
    return [
        WithParts(
            info=marker,
            parts=[CompactionPart(id=ids.ascending("prt"), session_id=sid, message_id=marker.id, auto=True)],
        ),
        WithParts(
            info=summary,
            parts=[
                TextPart(
                    id=ids.ascending("prt"),
                    session_id=sid,
                    message_id=summary.id,
                    text="## Objective\n- keep the handler fast\n" * 20,
                )
            ],
        ),
    ]


def build_session(store: Store, parts: int) -> str:
    sid = store.create_session("/tmp/project", "bench/model").id
    tail_turns = COMPACTION_BACK // 2
    head_turns = max(0, (parts - tail_turns * 6 - 2) // 6)
    messages: list[WithParts] = []
    for n in range(head_turns):
        messages.extend(turn(sid, n))
        if len(messages) >= 5_000:
            store.import_messages(messages)
            messages = []
    messages.extend(compaction(sid))
    for n in range(tail_turns):
        messages.extend(turn(sid, head_turns + n))
    store.import_messages(messages)
    return sid


def tool_step(sid: str, parent: str, n: int, finish: str) -> WithParts:
    """One step of a long turn: an assistant message with a short text and one tool call."""
    a = AssistantMessage(
        id=ids.ascending("msg"),
        session_id=sid,
        parent_id=parent,
        finish=finish,
        tokens=Tokens(total=5000, input=4800, output=200),
    )
    return WithParts(
        info=a,
        parts=[
            StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id),
            TextPart(
                id=ids.ascending("prt"),
                session_id=sid,
                message_id=a.id,
                text=f"Step {n}: reading the next file.",
            ),
            ToolPart(
                id=ids.ascending("prt"),
                session_id=sid,
                message_id=a.id,
                call_id=f"long_{n}",
                tool="read",
                state=ToolState(
                    status="completed", input={"filePath": f"src/mod_{n}.py"}, output=OUTPUT, title="x"
                ),
            ),
            StepFinishPart(id=ids.ascending("prt"), session_id=sid, message_id=a.id, reason=finish),
        ],
    )


def build_long_turn(store: Store) -> tuple[str, str]:
    """A session of 10 short turns, then one turn of LONG_TURN_STEPS tool steps, then a queued
    compaction marker. Returns (session id, marker id)."""
    sid = store.create_session("/tmp/project", "bench/model").id
    messages: list[WithParts] = []
    for n in range(10):
        messages.extend(turn(sid, n))
    user = UserMessage(id=ids.ascending("msg"), session_id=sid)
    messages.append(
        WithParts(
            info=user,
            parts=[
                TextPart(
                    id=ids.ascending("prt"), session_id=sid, message_id=user.id, text="refactor every module"
                )
            ],
        )
    )
    for n in range(LONG_TURN_STEPS):
        messages.append(tool_step(sid, user.id, n, "tool-calls" if n < LONG_TURN_STEPS - 1 else "stop"))
    marker = UserMessage(id=ids.ascending("msg"), session_id=sid)
    messages.append(
        WithParts(
            info=marker, parts=[CompactionPart(id=ids.ascending("prt"), session_id=sid, message_id=marker.id)]
        )
    )
    store.import_messages(messages)
    return sid, marker.id


def compaction_build_seconds(loop: SessionLoop, sid: str, marker_id: str) -> float:
    """Convert and size the window, select the tail and build the summary request (no model call)."""
    window = filter_compacted(loop.runtime.store.stream(sid))
    compactor = loop.runtime.compactor(threading.Event())
    start = time.perf_counter()
    prep = compactor.prepare(window, parent_id=marker_id, overflow=False)
    compactor.summary_request(
        sid, prep.selection.head, prep.previous, {"context": [], "prompt": None}, None, 0
    )
    return time.perf_counter() - start


def conversions_per_compaction(store: Store, directory: Path, sid: str, marker_id: str) -> int:
    """Run one real compaction against the scripted server; count the window conversions."""
    with FakeLLM() as server:
        loop = make_loop(store, directory, server.base_url)
        server.push(Reply(text="## Objective\n- refactor every module"))
        before = loop.runtime.view.conversions
        window = filter_compacted(loop.runtime.store.stream(sid))
        result = loop.runtime.compactor(threading.Event()).process(
            window, parent_id=marker_id, auto=False, overflow=False
        )
        if result.outcome != "continue":
            raise SystemExit("the benchmark compaction failed")
        return loop.runtime.view.conversions - before


def make_loop(store: Store, directory: Path, base_url: str = "http://127.0.0.1:9/v1") -> SessionLoop:
    route = Route(
        "openai/bench-model", base_url, "sk-none", display="bench/model", limits=(200_000, 0, 32_000)
    )
    model = ModelInfo(route=route, limits=ModelLimits(context=200_000, input=0, output=32_000))
    return SessionLoop(
        SessionRuntime(
            store=store,
            config=Config(),
            model=model,
            options=LoopOptions(directory=directory, data_dir=directory / "data"),
        )
    )


def next_request_seconds(loop: SessionLoop, sid: str) -> tuple[float, int]:
    start = time.perf_counter()
    window = filter_compacted(loop.runtime.store.stream(sid))
    runner = loop.runtime.runner(threading.Event(), offered_tools(loop.runtime))
    loop.runtime.preflight_overflows(loop.runtime.build_request(sid, window, runner))
    return time.perf_counter() - start, len(window)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        store = Store(tmpdir / "bench.db")
        loop = make_loop(store, tmpdir)
        sessions = {size: build_session(store, size) for size in SIZES}
        for size, sid in sessions.items():
            print(f"parts_{size}_stored: {store.count_parts(sid)}")
        for sid in sessions.values():  # warm caches and code paths once
            next_request_seconds(loop, sid)
        samples: dict[int, list[float]] = {size: [] for size in SIZES}
        windows: dict[int, int] = {}
        for _ in range(RUNS):  # interleaved, so machine noise hits every size alike
            for size, sid in sessions.items():
                seconds, windows[size] = next_request_seconds(loop, sid)
                samples[size].append(seconds)
        medians = {size: statistics.median(values) for size, values in samples.items()}
        for size in SIZES:
            print(f"window_messages_{size}: {windows[size]}")
            print(f"next_request_ms_{size}: {medians[size] * 1000:.2f}")
        print(f"ratio_largest_smallest: {medians[SIZES[-1]] / medians[SIZES[0]]:.3f}")

        long_sid, marker_id = build_long_turn(store)
        compaction_build_seconds(loop, long_sid, marker_id)  # warm
        build = statistics.median(compaction_build_seconds(loop, long_sid, marker_id) for _ in range(RUNS))
        print(f"long_turn_steps: {LONG_TURN_STEPS}")
        print(f"tail_and_summary_request_ms: {build * 1000:.2f}")
        print(
            "window_conversions_per_compaction: "
            f"{conversions_per_compaction(store, tmpdir, long_sid, marker_id)}"
        )


if __name__ == "__main__":
    main()
