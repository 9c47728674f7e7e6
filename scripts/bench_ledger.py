"""What the carryover (ledger + the user's kept words + skills, issue 17) costs.

1. Tokens it adds after a compaction in a 500-step session (the user types 50 messages, the model
   touches 80 files and runs 120 distinct commands, some failing, keeps a todo list and loads a skill),
   as a share of the usable window of a 200k-context model (usable 168k) and of a 128k one (usable
   96k). Target: at most 10 % of the usable window.
2. Time to build it at the next compaction of a session of 100,000 parts that compacted every 2,000
   parts: the fold of the previous carryover with the window since (the compactor already holds that
   window, loaded for the summary request: ``compaction/after.py`` hands it over), against a fold of the
   whole session from scratch. Target: at most 20 ms of CPU (it must not read the whole session).
   Reading the window from SQLite is printed too, for scale: every step pays it for its request anyway.
   Times are CPU (``time.process_time``), medians: wall time on a loaded machine measures the others.

Prints one figure per line: ``name: value``, then ``target_met: yes|no``.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from agentcli.llm.tokens import estimate  # noqa: E402
from agentcli.session.compaction import carryover, kept_words  # noqa: E402
from agentcli.session.request.history import filter_compacted  # noqa: E402
from agentcli.store import ids  # noqa: E402
from agentcli.store import records as r  # noqa: E402
from agentcli.store.artifacts import render  # noqa: E402
from agentcli.store.store import Store  # noqa: E402

SID = "ses_bench_ledger"
PARTS = int(os.environ.get("BENCH_PARTS", "100000"))
EVERY = 2_000  # parts between compactions in the big session
RUNS = 7


def _part(cls: type, mid: str, **fields: object) -> r.Part:
    return cls(id=ids.ascending("prt"), session_id=SID, message_id=mid, **fields)  # type: ignore[no-any-return]


def _user(text: str) -> r.WithParts:
    mid = ids.ascending("msg")
    return r.WithParts(info=r.UserMessage(id=mid, session_id=SID), parts=[_part(r.TextPart, mid, text=text)])


def _tool(mid: str, tool: str, args: dict[str, object], *, exit_code: int = 0, output: str = "ok") -> r.Part:
    metadata: dict[str, object] = {"exit": exit_code, "output": output} if tool == "bash" else {}
    if tool == "edit":
        metadata = {"filediff": {"additions": 3, "deletions": 1}}
    state = r.ToolState(status="completed", input=args, output=output, metadata=metadata)
    return _part(r.ToolPart, mid, call_id=f"c{mid[-8:]}", tool=tool, state=state)


def _step(parent: r.WithParts, n: int) -> r.WithParts:
    """One of the model's steps: a tool call (read / edit / write / bash / todowrite / skill)."""
    mid = ids.ascending("msg")
    kind = n % 10
    path = f"src/pkg{n % 8}/module_{n % 80}.py"
    if kind in (0, 1, 2):
        call = _tool(mid, "read", {"filePath": path}, output="1: x = 1\n" * 40)
    elif kind in (3, 4):
        call = _tool(mid, "edit", {"filePath": path, "oldString": "x", "newString": "y"})
    elif kind == 5:
        call = _tool(mid, "write", {"filePath": path, "content": "x = 1\n" * 30})
    elif kind == 9 and n % 40 == 9:
        todos = [
            {"content": f"task {i} of the refactor", "status": "pending", "priority": "medium"}
            for i in range(6)
        ]
        call = _tool(mid, "todowrite", {"todos": todos})
    elif kind == 9 and n == 19:
        call = _tool(mid, "skill", {"name": "style"}, output="<skill_content>" + "Use type hints. " * 200)
    else:
        code = 1 if n % 7 == 0 else 0
        command = f"pytest -q tests/test_module_{n % 120}.py"
        call = _tool(
            mid, "bash", {"command": command}, exit_code=code, output="FAILED x" if code else "1 passed"
        )
    info = r.AssistantMessage(id=mid, session_id=SID, parent_id=parent.id, finish="tool-calls")
    return r.WithParts(
        info=info,
        parts=[_part(r.StepStartPart, mid), call, _part(r.StepFinishPart, mid, reason="tool-calls")],
    )


def session_of(steps: int, users: int) -> list[r.WithParts]:
    msgs: list[r.WithParts] = []
    per_turn = max(1, steps // users)
    for n in range(steps):
        if n % per_turn == 0:
            words = "Always run the tests with pytest -q and keep the public API stable. " if n == 0 else ""
            msgs.append(
                _user(words + f"Request {n // per_turn}: refactor the next module and fix what breaks. " * 3)
            )
        msgs.append(_step(next(m for m in reversed(msgs) if m.role == "user"), n))
    return msgs


def carryover_tokens() -> None:
    msgs = session_of(500, 50)
    for context, output in ((200_000, 32_000), (128_000, 32_000)):
        usable = context - output
        built = carryover.build(msgs, visible=set(), budget=kept_words.default_budget(usable), directory=None)
        tokens = estimate(render(built))
        tag = f"{context // 1000}k"
        print(f"carryover_tokens_500_steps_{tag}: {tokens}")
        print(f"carryover_share_of_usable_{tag}_percent: {tokens * 100 / usable:.1f}")
    ledger_only = estimate(render(carryover.Carryover(ledger=built.ledger)))
    print(f"ledger_tokens_500_steps: {ledger_only}")


def median_ms(fn: Callable[[], object]) -> float:
    """Median CPU milliseconds of RUNS calls."""
    times = []
    for _ in range(RUNS):
        start = time.process_time()
        fn()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def big_session(store: Store) -> int:
    """A session of ``PARTS`` parts that compacted every ``EVERY`` parts, each compaction storing its
    carryover the way the compactor does (folded from the previous one). Returns the parts written."""
    store.put_session(r.SessionInfo(id=SID, directory="/bench"))
    written, n, since = 0, 0, 0
    window: list[r.WithParts] = []
    while written < PARTS:
        user = _user(f"Request at step {n}: keep going with the refactor.")
        batch = [user] + [_step(user, n + i) for i in range(9)]
        n += 9
        store.import_messages(batch)
        window += batch
        written += sum(len(m.parts) for m in batch)
        since += sum(len(m.parts) for m in batch)
        if since >= EVERY:
            marker = r.WithParts(info=r.UserMessage(id=ids.ascending("msg"), session_id=SID), parts=[])
            marker.parts.append(_part(r.CompactionPart, marker.id, auto=True))
            built = carryover.build(window, visible=set(), budget=20_000)
            summary_id = ids.ascending("msg")
            info = r.AssistantMessage(
                id=summary_id, session_id=SID, parent_id=marker.id, summary=True, finish="stop"
            )
            summary = r.WithParts(
                info=info,
                parts=[
                    _part(r.TextPart, summary_id, text="## Objective\n- refactor"),
                    _part(r.CarryoverPart, summary_id, carryover=built),
                ],
            )
            store.import_messages([marker, summary])
            written += 3
            window, since = [marker, summary], 0
    return written


def build_time() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        parts = big_session(store)
        print(f"parts: {store.count_parts(SID)}")
        window = filter_compacted(store.stream(SID))

        read = median_ms(lambda: filter_compacted(store.stream(SID)))
        fold_only = median_ms(lambda: carryover.build(window, visible=set(), budget=20_000))
        whole = store.messages(SID)
        no_carry = [
            m.model_copy(update={"parts": [p for p in m.parts if not isinstance(p, r.CarryoverPart)]})
            for m in whole
        ]
        from_scratch = median_ms(lambda: carryover.build(no_carry, visible=set(), budget=20_000))
        print(f"window_messages: {len(window)}")
        print(f"window_parts: {sum(len(m.parts) for m in window)}")
        print(f"carryover_build_cpu_ms: {fold_only:.2f}")
        print(f"carryover_build_cpu_ms_whole_session_from_scratch: {from_scratch:.2f}")
        print(f"ratio_from_scratch_over_incremental: {from_scratch / fold_only:.1f}")
        print(f"window_read_cpu_ms_paid_by_every_step: {read:.2f}")
        print(f"target_met: {'yes' if fold_only <= 20 else 'no'} (carryover_build_cpu_ms <= 20)")
        del parts
        store.close()


def main() -> None:
    carryover_tokens()
    build_time()


if __name__ == "__main__":
    main()
