"""The pause a compaction causes, with the summary written in the background (``compaction.background``,
the default) and without (``"background": false``: OpenCode's timing, the turn waits for the summary).

A 500-step session is replayed in-process through the real loop, store and request path against the
scripted server: 50 turns of 10 steps, each step reading a file of about 250 tokens, on a 32k
model (usable 28,000: about 100 steps fill it), so the window climbs past the budget again and
again. The model answers a step in 3 s; the summarizer in 30, 60 or 120 s.

Real 120 s waits are impossible in a bench: the clock is virtual (``Timing``). The model's replies
are instant; the runtime's clock advances 3 s per model step answered. A background summary's thread
is held until that clock reaches its start plus the summarizer's latency, so which summaries are
ready at a due point is what it would be with a real summarizer; a compaction that must wait for one
moves the clock on by what remains, and that is its pause, plus the loop's own work in the
compaction step (preparing it, writing the summary) measured in real time. Without the background a
compaction waits the summarizer's whole latency.

In the background the replayed session follows an earlier 100-step session of the same model in the
same store (``BENCH_WARM_STEPS``): the latency that one measured is where the replayed session's pace
starts (``pace.remembered``). The earlier session's own first compaction — a model never seen — is
reported apart.

Also: the summary request's size (estimated tokens, ``CompactionDiagnostics.request_tokens``) of each
compaction against the session's age; flat means the later ones cost what the first ones did.

Target: p95 of the pause ≤ 1 s with the summary written in the background.

    python scripts/bench_compaction_pause.py        # BENCH_STEPS=500 BENCH_WARM_STEPS=100
Prints ``name: value`` lines.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("AGENTCLI_LLM_PATH", "lean")

from agentcli.config import Config  # noqa: E402
from agentcli.demo.replies import Recorded, Reply, ToolCall, is_summary_request  # noqa: E402
from agentcli.demo.scripted_server import FakeLLM  # noqa: E402
from agentcli.session.compaction import background as background_module  # noqa: E402
from agentcli.session.compaction import send  # noqa: E402
from agentcli.session.compaction.step import CompactionStep  # noqa: E402
from agentcli.session.loop import SessionLoop  # noqa: E402
from agentcli.session.model import resolve_model  # noqa: E402
from agentcli.session.options import LoopOptions  # noqa: E402
from agentcli.session.permission import PermissionPolicy  # noqa: E402
from agentcli.session.runtime import SessionRuntime  # noqa: E402
from agentcli.store.records import CompactionPart, SessionInfo  # noqa: E402
from agentcli.store.store import Store  # noqa: E402
from agentcli.tools.registry import all_tools  # noqa: E402

STEPS = int(os.environ.get("BENCH_STEPS", "500"))
# An earlier session of the model in the same store (the background replays): the summary latency it
# measured is where the replayed session starts (``pace.remembered``); its own first compaction is
# that of a model never seen, reported apart.
WARM_STEPS = int(os.environ.get("BENCH_WARM_STEPS", "100"))
AT = os.environ.get("BENCH_AT")  # compaction.background_at (default: the config's)
STEPS_PER_TURN = 10
MODEL_S = 3.0
SUMMARIZERS_S = (30.0, 60.0, 120.0)
FILE_TOKENS = 250
CONTEXT, OUTPUT = 32_000, 4_000  # usable 28,000: about 100 steps of reads fill it
SID = "ses_bench"
SUMMARY = "## Objective\n- read every file of the project and note what each defines\n" + "- a note\n" * 120
TARGET_P95_S = 1.0


class Timing:
    """The virtual clock and each compaction step: its real duration, the real time spent waiting
    for a summary in it, and the virtual time it waited for a background summary (None: a
    synchronous summary, which waits the summarizer's whole latency).

    A background summary's thread is held until the virtual clock reaches its start plus the
    summarizer's latency (``release``), so which summaries are ready at a due point is what it
    would be with a real summarizer. A compaction that must wait for one moves the clock on by
    what remains: that is its pause."""

    def __init__(self) -> None:
        self.pauses: list[tuple[float, float, float | None]] = []
        self.answered = [0]  # model steps answered so far (the replay's counter)
        self.offset = 0.0  # virtual seconds spent waiting for summaries
        self.summarizer_s = 0.0  # the latency the background replay's virtual clock applies
        self._waiting = 0.0
        self._virtual: float | None = None
        self._held: dict[int, tuple[Any, threading.Event]] = {}  # background summaries not yet due
        self._lock = threading.Lock()
        self._thread = threading.local()  # a background summary's thread: its job

    def clock(self) -> float:
        """The virtual clock (``Background.clock``): the loop's thread is at the model steps answered
        plus the waits; a background summary's thread, once released, at its start plus the latency."""
        job = getattr(self._thread, "job", None)
        if threading.current_thread() is threading.main_thread() or job is None:
            return self.answered[0] * MODEL_S + self.offset
        return float(job.started + self.summarizer_s)

    def release(self, until: float | None = None) -> None:
        """Let the held summaries due by ``until`` (default: now) be written, and wait until they are."""
        until = self.clock() if until is None else until
        with self._lock:
            due = [
                (job, gate) for job, gate in self._held.values() if job.started + self.summarizer_s <= until
            ]
            for job, _ in due:
                del self._held[id(job)]
        for job, gate in due:
            gate.set()
            job.done.wait()

    def install(self) -> None:
        run, step, wait, write = (
            CompactionStep._run,
            CompactionStep.step,
            background_module.Background.wait,
            background_module.Background._write,
        )
        summary = send.summary
        timing = self

        def timed_run(compaction: Any, *args: Any) -> Any:
            timing._waiting, timing._virtual = 0.0, None
            started = time.perf_counter()
            try:
                return run(compaction, *args)
            finally:
                timing.pauses.append((time.perf_counter() - started, timing._waiting, timing._virtual))

        def timed_step(compaction: Any, *args: Any) -> Any:
            timing.release()  # what is ready by now is ready before the loop looks
            return step(compaction, *args)

        def timed_write(bg: Any, job: Any, *args: Any) -> Any:
            timing._thread.job = job
            gate = threading.Event()
            with timing._lock:
                timing._held[id(job)] = (job, gate)
            gate.wait()
            return write(bg, job, *args)

        def timed_wait(bg: Any, session_id: str, abort: Any) -> Any:
            started = time.perf_counter()
            try:
                jobs = bg.in_flight(session_id)
                timing.release()
                if jobs and not any(j.done.is_set() for j in jobs):
                    # None ready: the loop waits for the oldest; the clock moves on to when it is.
                    remaining = max(0.0, jobs[0].started + timing.summarizer_s - timing.clock())
                    timing.offset += remaining
                    timing._virtual = remaining
                    timing.release()
                elif jobs:
                    timing._virtual = 0.0
                return wait(bg, session_id, abort)
            finally:
                timing._waiting += time.perf_counter() - started

        def timed_summary(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                return summary(*args, **kwargs)  # the background one: the loop does not wait here
            started = time.perf_counter()
            try:
                return summary(*args, **kwargs)
            finally:
                timing._waiting += time.perf_counter() - started

        CompactionStep._run = timed_run  # type: ignore[method-assign]
        CompactionStep.step = timed_step  # type: ignore[method-assign]
        background_module.Background.wait = timed_wait  # type: ignore[method-assign]
        background_module.Background._write = timed_write  # type: ignore[method-assign]
        send.summary = timed_summary

    def scaled(self, summarizer_s: float) -> list[float]:
        """The pauses with a summarizer of ``summarizer_s``, sorted: the loop's own work in real time,
        plus the virtual wait (a synchronous summary: the whole latency)."""
        out = []
        for whole, waited, virtual in self.pauses:
            out.append(whole - waited + (summarizer_s if virtual is None else virtual))
        return sorted(out)


def replay(tmp: Path, in_background: bool, timing: Timing, summarizer_s: float = 0.0) -> dict[str, Any]:
    name = f"{in_background}-{int(summarizer_s)}"
    project = tmp / f"project-{name}"
    project.mkdir()
    line = "value = 'x' * 40  # a line of the module that is read\n"
    total = STEPS + (WARM_STEPS if in_background else 0)
    for i in range(total):
        (project / f"f{i}.py").write_text(f"# module {i}\n" + line * (FILE_TOKENS * 4 // len(line)))
    server = FakeLLM().start()
    answered = timing.answered
    answered[0] = 0
    lock = threading.Lock()

    def model(_rec: Recorded) -> Reply:
        with lock:
            i, answered[0] = answered[0], answered[0] + 1
        if i % STEPS_PER_TURN == STEPS_PER_TURN - 1 or i >= total:
            return Reply(text=f"Read up to f{i}.py.")
        return Reply(tool_calls=[ToolCall("read", {"filePath": f"f{i}.py"})])

    def summarizer(_rec: Recorded) -> Reply:
        return Reply(text=SUMMARY)

    server.on(lambda r: not is_summary_request(r.body), model)
    server.on(lambda r: is_summary_request(r.body), summarizer)
    providers = {
        "fake": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": server.base_url, "apiKey": "sk-bench"},
            "models": {"m": {"limit": {"context": CONTEXT, "output": OUTPUT}}},
        }
    }
    compaction: dict[str, Any] = {"background": in_background}
    if AT:
        compaction["background_at"] = float(AT)
    config = Config.model_validate({"provider": providers, "compaction": compaction})
    store = Store(tmp / f"bench-{name}.db")
    loop = SessionLoop(
        SessionRuntime(
            store=store,
            config=config,
            model=resolve_model("fake/m", config.providers_dict(), env={}),
            options=LoopOptions(directory=project, data_dir=tmp / "data", max_steps=STEPS_PER_TURN + 5),
            tools={t.name: t for t in all_tools([]) if t.name == "read"},
            policy=PermissionPolicy(yes=True),
        )
    )
    timing.summarizer_s, timing.offset = summarizer_s, 0.0
    loop.runtime.background.clock = timing.clock

    def session(sid: str, steps: int) -> list[tuple[float, float, float | None]]:
        store.put_session(SessionInfo(id=sid, directory=str(project), model="fake/m", title="bench"))
        timing.pauses.clear()
        start, turn = answered[0], 0
        while answered[0] - start < steps:
            turn += 1
            loop.prompt(sid, f"turn {turn}: read the next files, one per step")
        loop.runtime.background.cancel_all()
        timing.release(float("inf"))  # the cancelled ones end
        return list(timing.pauses)

    earlier = session("ses_earlier", WARM_STEPS) if in_background and WARM_STEPS else []
    asked_before = sum(1 for r in server.chat_requests() if is_summary_request(r.body))
    timed = session(SID, STEPS)
    sizes, freed = [], []
    for message in store.messages(SID):
        for part in message.parts:
            if isinstance(part, CompactionPart) and part.diagnostics is not None:
                sizes.append(part.diagnostics.request_tokens)
                freed.append(part.diagnostics.tokens_before - part.diagnostics.tokens_after)
    summary_requests = sum(1 for r in server.chat_requests() if is_summary_request(r.body)) - asked_before
    server.stop()
    store.close()
    return {
        "sizes": sizes,
        "freed": freed,
        "summary_requests": summary_requests,
        "timing": timed,
        "earlier": earlier,
    }


def quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main() -> int:
    timing = Timing()
    timing.install()
    print(
        f"clock: virtual — a model step takes {MODEL_S:g} s; "
        "the summarizer 30, 60 or 120 s (see the docstring)"
    )
    print(f"background_at: {AT or 'the default'}")
    print(
        f"session: {STEPS} steps of a {FILE_TOKENS:,}-token read, a {CONTEXT:,}-token window, "
        f"{STEPS_PER_TURN} steps a turn; in the background after an earlier session of {WARM_STEPS} steps"
    )
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-pause-") as tmp:
        for summarizer_s in SUMMARIZERS_S:
            runs[f"background_{int(summarizer_s)}s"] = replay(Path(tmp), True, timing, summarizer_s)
        runs["sync"] = replay(Path(tmp), False, timing)
    for name, res in runs.items():
        sizes, freed = res["sizes"], res["freed"]
        print(f"{name}_compactions: {len(sizes)}")
        print(f"{name}_summary_requests: {res['summary_requests']}")
        if sizes:
            print(f"{name}_summary_request_tokens_by_age: {', '.join(f'{s:,}' for s in sizes)}")
            print(f"{name}_tokens_freed_per_compaction: {statistics.mean(freed):,.0f}")
            third = max(1, len(sizes) // 3)
            late, early = statistics.mean(sizes[-third:]), statistics.mean(sizes[:third])
            print(f"{name}_summary_tokens_late_over_early: {late / early:.2f}")
    for summarizer_s in SUMMARIZERS_S:
        p95 = {}
        for name in (f"background_{int(summarizer_s)}s", "sync"):
            timing.pauses = runs[name]["timing"]
            pauses = timing.scaled(summarizer_s)
            label = f"{name.split('_')[0]}_{int(summarizer_s)}s"
            print(f"{label}_pause_p50_s: {quantile(pauses, 0.5):.2f}")
            print(f"{label}_pause_p95_s: {quantile(pauses, 0.95):.2f}")
            print(f"{label}_pause_max_s: {max(pauses, default=0.0):.2f}")
            p95[name] = quantile(pauses, 0.95)
        timing.pauses = runs[f"background_{int(summarizer_s)}s"]["earlier"][:1]
        cold = timing.scaled(summarizer_s)
        print(
            f"background_{int(summarizer_s)}s_first_compaction_of_a_model_never_seen_s: "
            f"{cold[0] if cold else 0:.2f}"
        )
        ratio = p95["sync"] / max(p95[f"background_{int(summarizer_s)}s"], 1e-9)
        print(f"sync_over_background_p95_{int(summarizer_s)}s: {ratio:.1f}")
    print(f"target: background pause p95 <= {TARGET_P95_S:g} s; summary tokens late/early about 1 (flat)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
