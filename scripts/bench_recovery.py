"""Crash-recovery benchmark: the check every turn now starts with (``recovery.close_interrupted``),
on sessions of 1,000 and 100,000 parts, with nothing open and with a killed step at the end. It reads
newest-first and stops at the first properly closed step, so its cost must not grow with the
session's age: the ratio largest / smallest should stay near 1.

Prints one figure per line: `name: value`.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench_turn_overhead import build_session  # noqa: E402

from agentcli.session.recovery import close_interrupted  # noqa: E402
from agentcli.store import ids  # noqa: E402
from agentcli.store.records import AssistantMessage, StepStartPart, ToolPart, ToolState, UserMessage  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

SIZES = (1_000, 100_000)
RUNS = int(os.environ.get("BENCH_RUNS", "15"))


def kill_a_step(store: Store, sid: str) -> None:
    """What SIGKILL during a running tool leaves: an unfinished step with a running call."""
    user = UserMessage(id=ids.ascending("msg"), session_id=sid)
    step = AssistantMessage(id=ids.ascending("msg"), session_id=sid, parent_id=user.id)
    store.put_message(user)
    store.put_message(step)
    store.put_part(StepStartPart(id=ids.ascending("prt"), session_id=sid, message_id=step.id))
    store.put_part(
        ToolPart(
            id=ids.ascending("prt"),
            session_id=sid,
            message_id=step.id,
            call_id="call_k",
            tool="bash",
            state=ToolState(status="running", input={"command": "sleep 600"}),
        )
    )


def timed(store: Store, sid: str) -> float:
    start = time.perf_counter()
    close_interrupted(store, sid)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        sessions = {size: build_session(store, size) for size in SIZES}
        clean: dict[int, list[float]] = {size: [] for size in SIZES}
        killed: dict[int, list[float]] = {size: [] for size in SIZES}
        for _ in range(RUNS):  # interleaved, so machine noise hits every size alike
            for size, sid in sessions.items():
                clean[size].append(timed(store, sid))
                kill_a_step(store, sid)
                killed[size].append(timed(store, sid))
        for size in SIZES:
            print(f"recovery_nothing_open_ms_{size}: {statistics.median(clean[size]) * 1000:.2f}")
            print(f"recovery_killed_step_ms_{size}: {statistics.median(killed[size]) * 1000:.2f}")
        small, large = SIZES[0], SIZES[-1]
        print(
            "ratio_nothing_open_largest_smallest: "
            f"{statistics.median(clean[large]) / statistics.median(clean[small]):.3f}"
        )
        print(
            "ratio_killed_step_largest_smallest: "
            f"{statistics.median(killed[large]) / statistics.median(killed[small]):.3f}"
        )


if __name__ == "__main__":
    main()
